// The tensors of runs, asked of the worker by name and kept per run: a run is named by its
// arguments (the worker re-runs only when they differ from its last run), so views can ask for
// tensors of the current run and of variants of it (the masks view compares causal on and off)
// without tracking what ran last. A failed request is forgotten, so asking again retries it.

export function tensorCache(worker, onProgress) {
  let cache = new Map();
  return {
    /** Resolves to a Map name → {name, data: Float32Array, shape} of the run `args`. */
    async get(args, names) {
      const key = JSON.stringify(args);
      const missing = names.filter((n) => !cache.has(`${key}|${n}`));
      if (missing.length) {
        const request = worker.call('tensors', { args, names: missing }, { onProgress });
        request.finally(() => onProgress(null)).catch(() => {});
        const entries = cache;
        missing.forEach((n, i) => {
          const entry = request.then(({ tensors: list }) => list[i]);
          entry.catch(() => entries.delete(`${key}|${n}`));
          entries.set(`${key}|${n}`, entry);
        });
      }
      const list = await Promise.all(names.map((n) => cache.get(`${key}|${n}`)));
      return new Map(list.map((entry) => [entry.name, entry]));
    },
    /** A new run or model: nothing cached before it is asked for again. */
    clear() {
      cache = new Map();
    },
  };
}

// The page's side of www/worker.js: call(type, body, {onProgress, transfer}) returns a Promise of
// the worker's result, rejected with an Error carrying the core's own message; onProgress({done,
// total}) hears how far a long run has come. Buffers in `transfer` move to the worker instead of
// being copied (a checkpoint's weights); those the worker gives back once it is done with them
// (`returned`) are put back into `body`, so the caller holds them again. cancel() stops whatever the worker is doing by replacing the worker
// (a running WebAssembly call cannot be interrupted any other way), rejects what was pending with an
// Error whose `cancelled` is true, and rebuilds the model in the new worker by replaying the last
// message that built one (a type in `sticky`) that succeeded. If the worker itself dies (its script fails to load),
// every pending and later call is rejected with that reason.

export function workerClient(url, { sticky = ['session', 'checkpoint'] } = {}) {
  const pending = new Map();
  let nextId = 1;
  let dead = null;
  let worker = null;
  let lastSticky = null;

  function start() {
    dead = null;
    worker = new Worker(url, { type: 'module' });
    worker.onmessage = ({ data }) => {
      const entry = pending.get(data.id);
      if (!entry) return;
      if (data.progress) {
        entry.onProgress?.(data.progress);
        return;
      }
      pending.delete(data.id);
      if (!data.ok) return entry.reject(new Error(data.error));
      Object.assign(entry.body, data.returned);
      if (sticky.includes(entry.type)) lastSticky = { type: entry.type, body: entry.body };
      entry.resolve(data.result);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      dead = new Error(`The worker stopped: ${event.message || 'its script could not be loaded'}.`);
      rejectAll(dead);
    };
  }

  function rejectAll(error) {
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  }

  function call(type, body = {}, { onProgress, transfer = [] } = {}) {
    if (dead) return Promise.reject(dead);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, onProgress, type, body });
      worker.postMessage({ id, type, ...body }, transfer);
    });
  }

  start();
  return {
    call,
    busy: () => pending.size > 0,
    cancel() {
      worker.terminate();
      rejectAll(Object.assign(new Error('Cancelled.'), { cancelled: true }));
      start();
      return lastSticky ? call(lastSticky.type, lastSticky.body) : Promise.resolve();
    },
  };
}

// The page's side of www/worker.js: call(type, body, {onProgress, transfer}) returns a Promise of
// the worker's result, rejected with an Error carrying the core's own message; onProgress({done,
// total}) hears how far a long run has come. Buffers in `transfer` move to the worker instead of
// being copied (a checkpoint's weights); those the worker gives back once it is done with them
// (`returned`) are put back into `body`, so the caller holds them again. cancel() stops whatever the worker is doing by replacing the worker
// (a running WebAssembly call cannot be interrupted any other way), rejects what was pending with an
// Error whose `cancelled` is true, and rebuilds the model in the new worker by replaying the last
// message that built one (a type in `sticky`) that succeeded. A call whose answer says the core
// trapped (a panic or failed allocation, after which the instance cannot be trusted) is rejected with
// the sentence `trapped({panic, error})` makes of it, and the worker is replaced the same way,
// rebuilding the last model that loaded (not a load that may have been what trapped). If the worker
// itself dies (its script fails to load), every pending and later call is rejected with that reason.
// kept() is the bytes of the buffers held for that rebuild, which the tab's budget counts.
// releaseWhenIdle(ms) lets an idle worker go the same way, to be started again by the next call.
// The first worker is the one boot.js started for the same address, where it did (its core already
// downloading while the page's modules load).

export function workerClient(url, { sticky = ['session', 'checkpoint'], trapped = ({ panic, error }) => panic ?? error } = {}) {
  const pending = new Map();
  let nextId = 1;
  let dead = null;
  let worker = null; // null: let go while idle (releaseWhenIdle); the next call starts another
  let lastBuilt = null; // the last sticky message the worker answered with a model (its buffers given back)
  let idleMs = 0;
  let idleTimer = 0;

  // An idle worker let go (releaseWhenIdle): its core, its WebAssembly memory and its model go, and
  // the next call starts a fresh worker and replays the model into it first, as cancel() does.
  function release() {
    if (dead || !worker || pending.size > 0 || !lastBuilt) return;
    worker.terminate();
    worker = null;
  }
  function idle() {
    clearTimeout(idleTimer);
    if (idleMs > 0 && pending.size === 0) idleTimer = setTimeout(release, idleMs);
  }

  function start() {
    dead = null;
    const boot = globalThis.attnscopeBoot;
    if (boot?.worker && boot.workerUrl === String(url)) {
      worker = boot.worker;
      boot.worker = null;
      if (boot.workerError) dead = new Error(`The worker stopped: ${boot.workerError}.`);
    } else worker = new Worker(url, { type: 'module' });
    worker.onmessage = ({ data }) => {
      const entry = pending.get(data.id);
      if (!entry) return;
      if (data.progress) {
        entry.onProgress?.(data.progress);
        return;
      }
      pending.delete(data.id);
      idle();
      if (data.ok) {
        Object.assign(entry.body, data.returned);
        if (sticky.includes(entry.type)) lastBuilt = { type: entry.type, body: entry.body };
        entry.resolve(data.result);
      } else {
        // A refusal the core said with a code (src/lib.rs `Said`) keeps it, for page/error_text.js.
        const error = Object.assign(new Error(data.trapped ? trapped(data) : data.error), data.code ? { code: data.code, args: data.args } : {});
        entry.reject(error);
        if (data.trapped) restart(lastBuilt, error).catch(() => {});
      }
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
    clearTimeout(idleTimer);
    if (!worker) {
      start();
      // The model it held comes back first (the worker answers its messages in order).
      if (lastBuilt && !sticky.includes(type)) call(lastBuilt.type, lastBuilt.body).catch(() => {});
    }
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, onProgress, type, body });
      worker.postMessage({ id, type, ...body }, transfer);
    });
  }

  // A fresh worker with `model` (a sticky message) rebuilt in it; what was pending gets `error`.
  function restart(model, error) {
    worker?.terminate();
    rejectAll(error);
    start();
    return model ? call(model.type, model.body) : Promise.resolve();
  }

  start();
  return {
    call,
    busy: () => pending.size > 0,
    kept: () => Object.values(lastBuilt?.body ?? {}).reduce((sum, v) => sum + (v instanceof ArrayBuffer ? v.byteLength : 0), 0),
    cancel: () => restart(lastBuilt, Object.assign(new Error('Cancelled.'), { cancelled: true })),
    /**
     * Lets the worker go once it has had nothing to do for `ms` (an embed: a figure in a post sits
     * drawn, its tensors already on the page, while the reader reads; five figures need not hold five
     * cores). The next call starts a worker again and replays the model (tools/bench/figures.mjs).
     */
    releaseWhenIdle(ms) {
      idleMs = ms;
      idle();
    },
    /** Whether a worker is running (false: let go while idle). */
    live: () => worker !== null,
  };
}

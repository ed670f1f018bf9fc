// The page's side of www/worker.js: call(type, body) returns a Promise of the worker's result,
// rejected with an Error carrying the core's own message. If the worker itself dies (its script
// fails to load), every pending and later call is rejected with that reason.

export function workerClient(url) {
  const worker = new Worker(url, { type: 'module' });
  const pending = new Map();
  let nextId = 1;
  let dead = null;

  worker.onmessage = ({ data }) => {
    const entry = pending.get(data.id);
    if (!entry) return;
    pending.delete(data.id);
    if (data.ok) entry.resolve(data.result);
    else entry.reject(new Error(data.error));
  };
  worker.onerror = (event) => {
    event.preventDefault();
    dead = new Error(`The worker stopped: ${event.message || 'its script could not be loaded'}.`);
    for (const { reject } of pending.values()) reject(dead);
    pending.clear();
  };

  return {
    call(type, body = {}) {
      if (dead) return Promise.reject(dead);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, type, ...body });
      });
    },
  };
}

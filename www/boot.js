// The page's first script (index.html runs it before app.js, with no imports of its own): it starts
// what the first look waits for without waiting for app.js's hundred modules to arrive. The Web Worker
// (worker.js), which fetches its core's wasm as soon as it runs; and, where the page is going to open
// the built-in model, that model's weights and tokenizer, and its numbers computed ahead (page/ahead.js). worker_client.js takes the worker over
// (the same address) and model_source.js the downloads (its get(), by address, each once); a load of
// any other model drops those not taken.
//
// The built-in model is the one page/start.js opens for a link that names no other (formats 2 and 3:
// state.js) and for a visit without a link where this browser keeps no model of the reader's
// (model_source.js, IndexedDB). A link whose model cannot be told here downloads nothing early.

const boot = (globalThis.attnscopeBoot = { worker: null, workerUrl: null, workerError: null, downloads: new Map(), sharesCores: false, turns: null });

// As app.js makes it: `?wasm=` in the page's address forces a build of the core.
const workerUrl = new URL('./worker.js', import.meta.url);
const wasmBuild = new URLSearchParams(location.search).get('wasm');
if (wasmBuild) workerUrl.searchParams.set('wasm', wasmBuild);
// `figure`: a post's figure's worker, which loads nothing until the turns make it the post's core.
function startWorker(figure = false) {
  try {
    const url = new URL(workerUrl);
    if (figure) url.searchParams.set('figure', '1');
    boot.worker = new Worker(url, { type: 'module' });
    boot.workerUrl = workerUrl.href;
    boot.worker.onerror = (event) => {
      event.preventDefault();
      boot.workerError = event.message || 'its script could not be loaded';
    };
  } catch {
    // app.js makes its own and says why it cannot.
  }
}

// A figure in a post (embed mode, "&embed=1" as state.js reads it) shares one core with the post's
// other figures (turns.js, worker_client.js shareCores): it asks now which figure holds it, and
// starts a worker that waits to be told. The turns tell that worker themselves, over a port (the
// page's main thread, which the post's figures share, is busy loading their modules): granted, it
// becomes the post's core (worker.js serve) and starts, reading the built-in model at once where
// the link names it; told another figure's core is there, the page lets it go unstarted.
// worker_client.js carries on from what was heard.
boot.sharesCores = location.hash.split('&').some((part) => /^#?embed(=(?!0$|false$).*)?$/.test(part)) && typeof BroadcastChannel === 'function';
if (boot.sharesCores) {
  try {
    const turns = { worker: new Worker(new URL('./turns.js', import.meta.url)), id: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`, granted: false, host: null };
    turns.worker.onmessage = ({ data }) => {
      // The last word counts: a figure granted may give way to another's core (turns.js giveWay).
      if (data.kind === 'granted') [turns.granted, turns.host] = [true, null];
      if (data.kind === 'host') {
        [turns.granted, turns.host] = [false, { id: data.id, epoch: data.epoch }];
        // Another figure's core serves this one: this worker stops itself, unstarted (worker.js).
        boot.worker?.terminate();
        boot.worker = null;
      }
      if (data.kind === 'lost') turns.host = null;
    };
    startWorker(true);
    const { port1, port2 } = new MessageChannel();
    boot.worker?.postMessage({ type: 'turns', port: port2 }, [port2]);
    turns.worker.postMessage({ kind: 'ask', id: turns.id, port: port1 }, [port1]);
    boot.turns = turns;
  } catch {
    boot.sharesCores = false;
    boot.worker?.terminate();
  }
}
if (!boot.sharesCores) startWorker();

const BUILTIN = new URL('./models/builtin/', import.meta.url);
const fragment = location.hash.replace(/^#/, '');
let linked = null;
const modelKind = () => (linked ??= fragment === '' ? Promise.resolve('none') : linkedModel(fragment));
// A figure's worker reads the built-in model once it starts (the post's core only).
if (boot.sharesCores) modelKind().then((kind) => (kind === 'builtin' || kind === 'none') && boot.worker?.postMessage({ id: 0, type: 'builtin', url: BUILTIN.href }));
// A figure's shared core reads the built-in model's files itself (worker.js builtin), once for the post.
const EARLY_FILES = boot.sharesCores ? ['ahead.json'] : ['config.json', 'ahead.json', 'model.safetensors', 'tokenizer.json'];

// The model a link names: its `model=` field, or that of its whole state (s<N>.…, deflate-raw JSON;
// format 1's default is the random model, later formats' the built-in one); 'none' for a link that
// names none, null where it cannot be told.
async function linkedModel(fragment) {
  let kind = 'none';
  for (const part of fragment.split('&')) {
    const plain = /^model=([a-z0-9]+)$/.exec(part);
    if (plain) kind = plain[1];
    const whole = /^s(\d{1,6})\.(.*)$/s.exec(part);
    if (!whole) continue;
    try {
      const base64 = whole[2].replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).text();
      const model = JSON.parse(text)?.model;
      if (model !== undefined && typeof model?.kind !== 'string') return null;
      kind = model?.kind ?? (Number(whole[1]) === 1 ? 'random' : 'builtin');
    } catch {
      return null;
    }
  }
  return kind;
}

// Whether this browser keeps a model of the reader's (model_source.js keptSlot('own')); null when
// IndexedDB does not answer soon.
function keepsOwnModel() {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), 1000);
    const done = (value) => {
      clearTimeout(timer);
      resolve(value);
    };
    try {
      const request = indexedDB.open('attnscope', 1);
      request.onupgradeneeded = () => request.result.createObjectStore('models');
      request.onerror = () => done(null);
      request.onblocked = () => done(null);
      request.onsuccess = () => {
        const db = request.result;
        try {
          const get = db.transaction('models', 'readonly').objectStore('models').get('own-meta');
          get.onsuccess = () => done(get.result != null);
          get.onerror = () => done(null);
        } catch {
          done(null);
        } finally {
          db.close();
        }
      };
    } catch {
      done(null);
    }
  });
}

// Starts the downloads; returns what stops those model_source.js has not taken.
function download() {
  const stops = EARLY_FILES.map((file) => {
    const url = new URL(file, BUILTIN).href;
    const stop = new AbortController();
    const response = fetch(url, { mode: 'cors', credentials: 'omit', signal: stop.signal });
    response.catch(() => {}); // said by model_source.js, which takes it
    boot.downloads.set(url, response);
    return () => boot.downloads.delete(url) && stop.abort();
  });
  return () => stops.forEach((stop) => stop());
}

// A visit without a link starts the downloads at once, and stops them should this browser keep a
// model of the reader's (then a few kilobytes were for nothing); a link once its model is read.
if (fragment === '') {
  const stop = download();
  keepsOwnModel().then((keeps) => keeps === false || stop());
} else {
  modelKind().then((kind) => {
    if (kind === 'builtin' || kind === 'none') download();
  });
}

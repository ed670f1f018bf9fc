// The Web Worker that owns the model. All computation happens here, so the page never freezes,
// even while a large random model is built. It holds one Session (www/pkg, the Rust core compiled
// to WebAssembly) and answers small messages: {id, type, ...body} in, {id, ok, result | error} out.
//
// Runs are addressed by their arguments: a 'tensors' request carries the run it wants, and the
// worker re-runs only when that differs from its last run. The page can therefore ask for tensors
// of several runs (the masks view compares causal on and off) without tracking what ran last.
// Tensors go back as Float32Arrays whose buffers are transferred, not copied.

let Session = null;
let tokenizerText = null;
let session = null;
let lastRun = null; // {key, shapes: Map<name, shape>}

const ready = (async () => {
  try {
    const core = await import('./pkg/attnscope.js');
    await core.default();
    Session = core.Session;
  } catch (err) {
    throw new Error(`Could not load the WebAssembly core (www/pkg/attnscope.js): ${err.message}. Build it with ./build.sh build.`);
  }
  const response = await fetch(new URL('./minimind/tokenizer.json', import.meta.url));
  if (!response.ok) throw new Error(`Could not load MiniMind's tokenizer (www/minimind/tokenizer.json): HTTP ${response.status}.`);
  tokenizerText = await response.text();
})();
// A failed start is reported to the page with each request's answer, not as an unhandled rejection.
ready.catch(() => {});

function needSession() {
  if (!session) throw new Error('No model yet.');
  return session;
}

function run(args) {
  const key = JSON.stringify(args);
  if (lastRun?.key === key) return lastRun;
  lastRun = null;
  const result = needSession().run(args);
  lastRun = { key, result, shapes: new Map(result.entries.map((e) => [e.name, Array.from(e.shape)])) };
  return lastRun;
}

// A Float32Array that owns its whole buffer can be transferred; anything else is copied first.
function transferable(array) {
  const owned = array.buffer instanceof ArrayBuffer && array.byteOffset === 0 && array.byteLength === array.buffer.byteLength;
  return owned ? array : array.slice();
}

const handlers = {
  session({ config, seed }) {
    const next = Session.random(JSON.stringify(config), seed);
    next.setTokenizer(tokenizerText);
    session?.free();
    session = next;
    lastRun = null;
    return { result: { config: next.config() } };
  },
  tokenize({ text }) {
    const { ids, pieces } = needSession().tokenize(text);
    return { result: { ids: Array.from(ids), pieces: Array.from(pieces) } };
  },
  run({ args }) {
    const { result } = run(args);
    return { result: { entries: result.entries, backend: result.backend, ms: result.ms } };
  },
  tensors({ args, names }) {
    const { shapes } = run(args);
    const tensors = names.map((name) => ({ name, shape: shapes.get(name) ?? null, data: transferable(session.tensor(name)) }));
    return { result: { tensors }, transfer: tensors.map((t) => t.data.buffer) };
  },
};

self.onmessage = async ({ data: { id, type, ...body } }) => {
  try {
    await ready;
    const { result, transfer = [] } = handlers[type](body);
    self.postMessage({ id, ok: true, result }, transfer);
  } catch (err) {
    self.postMessage({ id, ok: false, error: err?.message ?? String(err) });
  }
};

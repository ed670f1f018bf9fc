// The Web Worker that owns the model. All computation happens here, so the page never freezes,
// even while a large random model is built. It holds one Session (www/pkg, the Rust core compiled
// to WebAssembly) and answers small messages: {id, type, ...body} in, {id, ok, result | error} out.
//
// Runs are addressed by their arguments: a 'tensors' request carries the run it wants, and the
// worker re-runs only when that differs from its last run. The page can therefore ask for tensors
// of several runs (the masks view compares causal on and off) without tracking what ran last.
// Tensors go back as Float32Arrays whose buffers are transferred, not copied.
//
// Besides the model's runs it answers the deep-dive views and the lessons: the core's attention on
// hand-set numbers, RoPE tables, decoding steps with the cache check, flash walks, the heads' roles,
// and runs of variants of the model (the same input with another number of KV heads), each on its
// own Session. A trap in the core (a panic, or memory it could not get) may leave the WebAssembly
// instance half-way through changing its memory, so this worker is not used again: the answer says
// `trapped`, with the panic's message when the core's panic hook left one (globalThis.attnscopePanic),
// and worker_client.js replaces the worker and rebuilds the last model that loaded.

let core = null;
// The model of the figure being answered (see `enter`): its Session, that Session's last run
// ({key, result, shapes: Map<name, shape>}) and its WebGPU state.
let session = null;
let lastRun = null;
const VARIANTS_KEPT = 4;
const variants = new Map(); // JSON of {config, seed} -> Session, oldest first

// The core comes in three builds (build.sh): pkg-relaxed, whose matmul kernel fuses multiply and add
// with relaxed-simd (about 1.3-1.6x the matmul speed where the CPU has FMA; BENCHMARKS.md), pkg,
// plain simd128, for browsers without relaxed-simd, and pkg-threads, pkg-relaxed's code with its
// matmuls and attention's heads split across a pool of Web Workers that share the module's memory.
// This one-function module, which uses f32x4.relaxed_madd as the kernel does, validates exactly
// where relaxed-simd loads. The threads build needs SharedArrayBuffer, which a browser only gives a cross-origin isolated
// page (served with COOP and COEP headers, as tools/serve.mjs does; README), and more than one core;
// where it cannot start, the worker falls back to pkg-relaxed. `wasm=simd128` or `wasm=relaxed-simd`
// in the worker's query (the page passes its own, app.js) forces that build: the test that the builds
// give the same logits uses it.
const RELAXED_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, // magic, version
  1, 5, 1, 96, 0, 1, 123, // types: () -> v128
  3, 2, 1, 0, // one function of that type
  10, 19, 1, 17, 0, // code: one body of 17 bytes, no locals
  65, 0, 253, 15, 65, 0, 253, 15, 65, 0, 253, 15, // three i8x16.splat(0)
  253, 133, 2, 11, // f32x4.relaxed_madd, end
]);
const FORCED = new URL(self.location.href).searchParams.get('wasm');
const RELAXED = FORCED !== 'simd128' && WebAssembly.validate(RELAXED_PROBE);
// Threads for the pool: the cores the browser reports, at most 8 (a 128-token run has 16 rows per
// thread at 8).
const MAX_THREADS = 8;
const POOL_START_MS = 20_000;
const POOL = Math.min(self.navigator.hardwareConcurrency || 1, MAX_THREADS);
const WANTS_THREADS = RELAXED && !FORCED && self.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function' && POOL > 1;
let BUILD = RELAXED ? 'relaxed-simd' : 'simd128';
let threads = 1; // the pool's threads in the build that loaded
let threadsError = null; // why the threads build did not start, where the page could have had it
let memory = null; // the core's WebAssembly.Memory, whose size coreInfo reports (tools/bench/smollm2.mjs)

// A build's glue (attnscope.js) and its wasm are fetched at once, not the wasm only once the glue
// has loaded and run: the wasm is the largest file the first look waits for but the weights.
async function load(pkg) {
  const wasm = fetch(new URL(`./${pkg}/attnscope_bg.wasm`, import.meta.url));
  wasm.catch(() => {}); // a failed download is said by the glue's init, which awaits it
  try {
    const module = await import(`./${pkg}/attnscope.js`);
    ({ memory } = await module.default({ module_or_path: wasm }));
    return module;
  } catch (err) {
    throw new Error(`Could not load the WebAssembly core (www/${pkg}/attnscope.js): ${err.message}. Build it with ./build.sh build.`);
  }
}

// A post's figure's worker (boot.js, `figure` in its query) loads nothing until the turns say it is
// the post's core (turns.js, over a port of their own rather than through the page, whose main
// thread the post's figures share and keep busy while their modules load); another figure's core
// serving it, it is let go unstarted.
const FIGURE = new URL(self.location.href).searchParams.has('figure');
let begin = () => {};
const started = FIGURE ? new Promise((resolve) => (begin = resolve)) : Promise.resolve();

const ready = started.then(async () => {
  if (WANTS_THREADS) {
    try {
      core = await load('pkg-threads');
      // A worker the pool could not start (a Content-Security-Policy without blob: in worker-src, say)
      // never answers: give up on the pool after a while rather than wait for ever.
      let timer;
      const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`its ${POOL} threads did not start within ${POOL_START_MS / 1000} s`)), POOL_START_MS);
      });
      await Promise.race([core.initThreadPool(POOL), late]).finally(() => clearTimeout(timer));
      BUILD = 'threads';
      threads = POOL;
    } catch (err) {
      // Only speed depends on it: the single-thread build computes the same numbers.
      threadsError = err?.message ?? String(err);
      core = null;
    }
  }
  core ??= await load(BUILD === 'relaxed-simd' ? 'pkg-relaxed' : 'pkg');
  core.installPanicHook();
  // A small forward on numbers nobody sees (src/wasm_api/warm_up.rs), at the worker's next free
  // moment, typically while the page's model is still downloading: V8 then has the hot code on its
  // optimising tier before the reader's first run, which ran about 1.4x slower than later runs
  // without it (1.1x with it; BENCHMARKS.md section 4, "Tier-up"). tests/wasm.rs runs it too.
  // Not in a post's figure: its model's files come at once from the figure's site, and the warm-up
  // (0.25 s there) would stand between them and the figures' first numbers, on short sentences
  // that gain little from it (BENCHMARKS.md section 11).
  if (FIGURE) return;
  setTimeout(() => {
    try {
      core.warmUp();
    } catch {
      // Only speed depends on it; the reader's runs do not.
    }
  }, 0);
});
// A failed start is reported to the page with each request's answer, not as an unhandled rejection.
ready.catch(() => {});

// The safetensors header reader, loaded beside the core rather than before this script runs (a
// static import would hold back the wasm's download by a round trip), and at start, not when first
// needed, so that it is among what the offline copy keeps (resources below).
const headerReading = import('./safetensors_header.js');
headerReading.catch(() => {});

// MiniMind's tokenizer, for random models and checkpoints that bring none. Fetched the first time
// one needs it, not at start: a checkpoint with its own tokenizer.json (the built-in model) would
// otherwise download the same 450 KB twice while its weights are still arriving.
const MINIMIND_TOKENIZER = new URL('./minimind/tokenizer.json', import.meta.url).href;
let minimindTokenizer = null;

function minimind() {
  minimindTokenizer ??= fetch(MINIMIND_TOKENIZER).then((response) => {
    if (!response.ok) throw new Error(`Could not load MiniMind's tokenizer (www/minimind/tokenizer.json): HTTP ${response.status}.`);
    return response.text();
  });
  // A failed fetch is tried again by the next model that needs it.
  minimindTokenizer.catch(() => {
    minimindTokenizer = null;
  });
  return minimindTokenizer;
}

// --- the figures a shared core answers ---
//
// A post's figures share one core (worker_client.js shareCores): the first figure's worker serves
// the others over BroadcastChannels (serve), besides its own page ('page'). Each figure (a
// "client") has its own model; figures on the same built-in or random model share one entry, so its
// weights are held once and its last run is the Session's own. Messages are answered one at a time
// (queue below), so `enter` switches the module's session, lastRun and gpu to the answering
// client's, and `leave` writes them back.
const models = new Map(); // client -> {key, session, lastRun, gpu, about}
let client = 'page';

function enter(who) {
  client = who;
  ({ session, lastRun, gpu } = models.get(who) ?? { session: null, lastRun: null, gpu: null });
}

function leave() {
  const entry = models.get(client);
  if (entry) Object.assign(entry, { lastRun, gpu });
}

// The entry some client holds under `key` (null: a model of one client's own, never shared).
function held(key) {
  return [...models.values()].find((entry) => entry.key !== null && entry.key === key) ?? null;
}

// The answering client's model becomes `next` (a Session just built), or the one held under `key`
// (next null); next and key both null: none. The model it had goes unless another client holds it.
function use(next, key = null, about = null) {
  const was = models.get(client) ?? null;
  const entry = next ? { key, session: next, lastRun: null, gpu: null, about } : key ? held(key) : null;
  if (entry) models.set(client, entry);
  else models.delete(client);
  if (was && was !== entry && ![...models.values()].includes(was)) was.session.free();
  ({ session, lastRun, gpu } = entry ?? { session: null, lastRun: null, gpu: null });
}

// The built-in model's files (config.json and tokenizer.json as text, model.safetensors's response),
// asked for as soon as a message names them: they arrive while the core compiles.
const builtinAsked = new Map(); // folder URL -> Promise
function builtinFiles(url) {
  const get = async (file) => {
    const response = await fetch(new URL(file, url), { mode: 'cors', credentials: 'omit' });
    if (!response.ok) throw new Error(`Could not load the built-in model (${file}): HTTP ${response.status}.`);
    return response;
  };
  if (!builtinAsked.has(url)) {
    const files = Promise.all([get('config.json').then((r) => r.text()), get('tokenizer.json').then((r) => r.text()), get('model.safetensors')]);
    files.catch(() => builtinAsked.delete(url)); // said by the handler that awaits it; asked again next time
    builtinAsked.set(url, files);
  }
  return builtinAsked.get(url);
}

// A response's whole body, reporting its bytes as they arrive (the built-in model's weights).
async function readAll(response) {
  const total = Number(response.headers.get('content-length')) || 0;
  const chunks = [];
  let done = 0;
  for (const reader = response.body.getReader(); ; ) {
    const { value, done: end } = await reader.read();
    if (end) break;
    chunks.push(value);
    done += value.byteLength;
    progress(done, Math.max(total, done));
  }
  const all = new Uint8Array(done);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
}

// Decoding keeps its steps in the Session: a figure whose model another figure of the post shares
// steps on only while the decoding is its own.
function ownDecoding() {
  if (models.get(client) && models.get(client).decoder !== client) throw new Error('Another figure in this post has since decoded on the same model: start the decoding again.');
}

function needSession() {
  if (!session) throw new Error('No model yet.');
  return session;
}

// The WebGPU path (args.backend: 'auto', 'cpu' or 'gpu'). 'gpu' runs on WebGPU whenever there is
// an adapter; 'auto' only on a hardware one (on a software adapter such as SwiftShader the CPU's
// WebAssembly is faster). A GPU that fails (no adapter, device lost, validation) is dropped for this
// model and the run is the CPU's, whole, with the reason in the result's gpu_error: never a mix.
let gpu = null; // for the current session: null (not tried), {adapter} or {error, quiet}

async function gpuFor(backend) {
  if (backend === 'cpu') return null;
  if (!gpu) {
    const adapter = await self.navigator.gpu?.requestAdapter().catch(() => null);
    const info = adapter?.info ?? {};
    const software = adapter?.isFallbackAdapter || /swiftshader|llvmpipe|lavapipe/i.test(`${info.architecture} ${info.description} ${info.vendor}`);
    // The two common cases carry a code, for the page to say them in the reader's language
    // (strings.js core.noAdapter, core.noWebGpu): not failures, the CPU path computes the same.
    if (!adapter) gpu = self.navigator.gpu ? { error: 'WebGPU has no adapter here.', code: 'noAdapter', quiet: true } : { error: 'this browser has no WebGPU.', code: 'noWebGpu', quiet: true };
    else if (software && backend === 'auto') return null;
    else {
      try {
        gpu = { adapter: await needSession().enableGpu() };
      } catch (err) {
        gpu = { error: err?.message ?? String(err) };
      }
    }
  }
  return gpu;
}

async function runGpu(args) {
  const found = await gpuFor(args.backend);
  if (!found) return { result: null, error: null };
  if (found.error) return args.backend === 'auto' && found.quiet ? { result: null, error: null } : { result: null, error: found.error, code: found.code };
  try {
    return { result: await session.runGpu(args), error: null };
  } catch (err) {
    session.disableGpu();
    gpu = { error: err?.message ?? String(err) };
    return { result: null, error: gpu.error };
  }
}

async function run(args) {
  const key = JSON.stringify(args);
  if (lastRun?.key === key) return lastRun;
  lastRun = null;
  needSession();
  const fromGpu = await runGpu(args);
  const result = fromGpu.result ?? session.run(args, progress);
  result.gpu_error = fromGpu.error;
  result.gpu_error_code = fromGpu.code ?? null;
  lastRun = { key, result, shapes: new Map(result.entries.map((e) => [e.name, Array.from(e.shape)])) };
  return lastRun;
}

// A tokenizer.json read while its model's weights were still downloading (readAhead; the page's
// 'readTokenizer' message, or builtin below): the Session built next from the same config.json and
// tokenizer.json takes it rather than reading the text again (0.2-0.4 s for MiniMind's). A text that
// cannot be read is left to setTokenizer, which says why in the words it always has.
// Only one is held, and only until the next model is built: every message that builds one takes it
// or lets it go (dropAhead), so an unused one never stays in the core's memory.
let ahead = null; // {config, text, read: core.TokenizerRead}

function readAhead(config, text) {
  if (typeof config !== 'string' || typeof text !== 'string') return;
  if (ahead?.config === config && ahead.text === text) return;
  dropAhead();
  try {
    ahead = { config, text, read: core.TokenizerRead.read(text, config) };
  } catch (err) {
    // A trap (a panic, a failed allocation) is the worker's to report: its instance cannot be trusted.
    if (err instanceof WebAssembly.RuntimeError) throw err;
    // Any other refusal is said by setTokenizer, when the model is built.
  }
}

function dropAhead() {
  ahead?.read.free();
  ahead = null;
}

// The tokenizer read ahead for exactly this config.json and tokenizer.json, taken; or null (one read
// for other texts is let go).
function takeAhead(config, text) {
  if (ahead?.config !== config || ahead.text !== text) {
    dropAhead();
    return null;
  }
  const { read } = ahead;
  ahead = null;
  return read;
}

// A Session from config.json, model.safetensors and tokenizer.json (MiniMind's when it brings none).
async function fromSafetensors(config, weights, tokenizer) {
  const own = tokenizer ?? (await minimind());
  const next = core.Session.fromCheckpoint(config, new Uint8Array(weights));
  try {
    const read = takeAhead(config, own);
    let taken = false;
    if (read) {
      try {
        next.useTokenizer(read);
        taken = true;
      } catch (err) {
        if (err instanceof WebAssembly.RuntimeError) throw err;
        // read for another vocabulary size than the checkpoint's: read again below
      }
    }
    if (!taken) next.setTokenizer(own);
  } catch (err) {
    next.free();
    // The page adds the same words in the reader's language (page/error_text.js, args.minimindTried).
    if (tokenizer === null) throw Object.assign(new Error(`${err.message} (the checkpoint has no tokenizer.json, so MiniMind's was tried)`), { code: err.code, args: { ...err.args, minimindTried: '1' } });
    throw err;
  }
  return next;
}

// A random model like the page's but for a changed config, kept for the next request.
function variant(config, seed) {
  const key = JSON.stringify({ config, seed });
  let found = variants.get(key);
  if (found) variants.delete(key);
  else found = core.Session.random(JSON.stringify(config), seed);
  variants.set(key, found);
  if (variants.size > VARIANTS_KEPT) {
    const [oldest, stale] = variants.entries().next().value;
    stale.free();
    variants.delete(oldest);
  }
  return found;
}

// What this worker's core holds now, in bytes: each model's weights (f32, once), its last run's trace and the
// variants kept. A checkpoint loads beside all of it (the previous model goes only once it has loaded).
function heldBytes() {
  leave();
  const weights = (owner) => owner.config().weight_bytes_held;
  const trace = (run) => (run?.result.entries ?? []).reduce((sum, e) => sum + 4 * Array.from(e.shape).reduce((a, b) => a * b, 1), 0);
  const held = [...new Set(models.values())].reduce((sum, entry) => sum + weights(entry.session) + trace(entry.lastRun), 0);
  return held + [...variants.values()].reduce((sum, v) => sum + weights(v), 0);
}

// The named tensors of a session's last run or step, with their shapes.
function collect(owner, shapes, names) {
  const tensors = names.map((name) => ({ name, shape: shapes.get(name) ?? null, data: transferable(owner.tensor(name)) }));
  return { result: { tensors }, transfer: tensors.map((t) => t.data.buffer) };
}

function shapesOf(entries) {
  return new Map(entries.map((e) => [e.name, Array.from(e.shape)]));
}

// A result object of Float32Arrays goes back with its buffers transferred.
function typed(result) {
  return { result, transfer: Object.values(result).filter((v) => v instanceof Float32Array).map((v) => v.buffer) };
}

// A Float32Array that owns its whole buffer can be transferred; anything else is copied first.
function transferable(array) {
  const owned = array.buffer instanceof ArrayBuffer && array.byteOffset === 0 && array.byteLength === array.buffer.byteLength;
  return owned ? array : array.slice();
}

const handlers = {
  async session({ config, seed }) {
    dropAhead();
    const tokenizer = await minimind();
    // Figures on the same random model share it (the same config and seed build the same weights).
    const key = `random:${JSON.stringify({ config, seed })}`;
    if (!held(key)) {
      const next = core.Session.random(JSON.stringify(config), seed);
      next.setTokenizer(tokenizer);
      use(next, key);
    } else use(null, key);
    return { result: { config: session.config() } };
  },
  // A checkpoint's config.json and tokenizer.json, sent while its weights still download: the
  // tokenizer is read now, for the 'checkpoint' that follows (readAhead). Answers nothing.
  readTokenizer({ config, tokenizer }) {
    readAhead(config, tokenizer);
    return { result: null };
  },
  // A checkpoint's config.json, size and header, checked before its tensor data is read, beside
  // what the tab holds already until it replaces the model: the page's kept copy (`kept` bytes) and
  // what this worker's core holds.
  checkCheckpoint({ config, size, head, kept = 0 }) {
    return { result: core.checkCheckpoint(config, size, head, kept + heldBytes()) };
  },
  // A GGUF file's sibling of checkCheckpoint: its header holds the config and the tokenizer, and
  // ggufHeaderNeeds says how many of the file's first bytes that header takes (undefined: `head` has it).
  checkGguf({ size, head, kept = 0 }) {
    return { result: core.checkGguf(head, size, kept + heldBytes()) };
  },
  ggufHeaderNeeds({ size, head }) {
    return { result: core.ggufHeaderNeeds(head, size) ?? null };
  },
  // A safetensors checkpoint's headers (up to 100 MB of JSON each), parsed here rather than on the
  // page: each file's size and the joined file's header, which goes back transferred.
  async safetensorsHeaders({ heads }) {
    const { joinHeaders } = await headerReading;
    const joined = joinHeaders(heads);
    return { result: joined, transfer: joined.head ? [joined.head.buffer] : [] };
  },
  // A checkpoint becomes the model only once it and its tokenizer (MiniMind's when it brings none)
  // have loaded; until then the previous model stays. The weights arrive transferred, are copied
  // once into WebAssembly memory, and go back to the page (which keeps them for Cancel and
  // IndexedDB), so the tab holds the file once outside the core, not three times. A GGUF file
  // (`format` 'gguf') brings its config and tokenizer inside it.
  async checkpoint({ format = 'safetensors', config, weights, tokenizer }) {
    let next;
    try {
      next = format === 'gguf' ? core.Session.fromGguf(new Uint8Array(weights)) : await fromSafetensors(config, weights, tokenizer);
    } finally {
      dropAhead(); // taken by fromSafetensors, or of no use now
    }
    use(next);
    return { result: { config: next.config() }, returned: { weights }, transfer: [weights] };
  },
  // The built-in model read by this worker itself, from its folder (`url`), rather than sent by the
  // page: a post's figures share one core (serve below), which reads the model's files once and
  // holds its weights once for all of them. Progress reports the weights' bytes as they arrive.
  async builtin({ url }) {
    const key = `builtin:${url}`;
    if (held(key)) use(null, key);
    else {
      const [config, tokenizer, response] = await builtinFiles(url);
      try {
        // The tokenizer is read while the weights arrive (readAll has asked for their first bytes).
        const weightsRead = readAll(response);
        readAhead(config, tokenizer);
        const weights = await weightsRead;
        // Checked as the page checks a checkpoint before it loads (its shape, dtype and the tab's budget).
        const info = core.checkCheckpoint(config, weights.byteLength, weights, heldBytes());
        use(await fromSafetensors(config, weights.buffer, tokenizer), key, { bytes: weights.byteLength, info });
      } finally {
        builtinAsked.delete(url); // held now, or failed: the next ask reads the files again
        dropAhead();
      }
    }
    const { bytes, info } = models.get(client).about;
    return { result: { config: session.config(), bytes, info } };
  },
  // A figure gone from the post (worker_client.js, on pagehide): its model goes unless another holds it.
  bye() {
    use(null);
    models.delete(client);
    return { result: null };
  },
  // bos: the model's BOS token first (its config's bos_token_id; refused by the core when it has none).
  tokenize({ text, bos = false }) {
    const { ids, pieces, bytes, chars, split, special } = needSession().tokenize(text, { bos });
    return { result: { ids: Array.from(ids), pieces: Array.from(pieces), bytes: Array.from(bytes), chars: Array.from(chars), split: Array.from(split), special: Array.from(special) } };
  },
  async run({ args }) {
    const { result } = await run(args);
    return { result: { entries: result.entries, backend: result.backend, ms: result.ms, gpu_error: result.gpu_error, gpu_error_code: result.gpu_error_code, cpuFallback: result.cpuFallback ?? null } };
  },
  async tensors({ args, names }) {
    return collect(session, (await run(args)).shapes, names);
  },
  // The same run on WebGPU and on the CPU, tensor by tensor (the contract's relative measure).
  async checkGpu({ args }) {
    const found = await gpuFor('gpu');
    if (found.error) throw Object.assign(new Error(`WebGPU is not available: ${found.error}`), found.code ? { code: found.code } : {});
    return { result: await session.compareGpuCpu(args) };
  },
  variantTensors({ config, seed, args, names }) {
    const owner = variant(config, seed);
    const result = owner.run(args);
    const { result: found, transfer } = collect(owner, shapesOf(result.entries), names);
    return { result: { ...found, cache_bytes: result.cache_bytes, config: owner.config() }, transfer };
  },
  describe({ config }) {
    return { result: core.describeConfig(JSON.stringify(config)) };
  },
  attend({ q, k, v, spec }) {
    return typed(core.attend(q, k, v ?? new Float32Array(0), spec));
  },
  softmax({ scores, spec }) {
    return typed(core.maskedSoftmax(scores, spec));
  },
  dot({ a, b }) {
    return typed(core.dotTerms(a, b));
  },
  silu({ z }) {
    return typed({ values: core.silu(z) });
  },
  pieces({ ids }) {
    return { result: Array.from(needSession().pieces(Uint32Array.from(ids))) };
  },
  decode({ ids }) {
    return { result: needSession().decode(Uint32Array.from(ids)) };
  },
  top({ logits, k }) {
    return { result: needSession().topTokens(logits, k) };
  },
  // The top k of each of `rows` rows held end to end in `logits`, in one request: the logit lens
  // asks for a whole layer's cells at once rather than a round trip per cell (to a core that may be
  // serving a post's other figures).
  tops({ logits, rows, k }) {
    if (!Number.isInteger(rows) || rows < 1 || logits.length % rows !== 0) throw new Error(`tops: ${logits.length} logits do not split into ${rows} rows`);
    const width = logits.length / rows;
    const owner = needSession();
    return { result: Array.from({ length: rows }, (_, r) => owner.topTokens(logits.subarray(r * width, (r + 1) * width), k)) };
  },
  sample({ logits, sampling, ids }) {
    return { result: needSession().sampleTokens(logits, sampling, Uint32Array.from(ids)) };
  },
  ropeAngles({ positions, yarn }) {
    return typed({ angles: needSession().ropeAngles(positions, yarn) });
  },
  ropeRotate({ x, position, yarn }) {
    return typed({ rotated: needSession().ropeRotate(x, position, yarn) });
  },
  ropeScores({ q, k, maxDistance, yarn }) {
    return typed({ scores: needSession().ropeScores(q, k, maxDistance, yarn) });
  },
  // What each head does on this run's input (src/analysis/head_roles.rs), from the run's own probs.
  async headRoles({ args }) {
    await run(args);
    return { result: session.headRoles() };
  },
  // The induction probe (src/analysis/induction.rs): a repeated random sequence run on its own,
  // every head scored; the pieces name the sequence's tokens on the page.
  // first: a token before the two copies (the model's BOS when the page's input starts with it), or null.
  probe({ length, seed, first = null }) {
    const found = needSession().probeHeads({ length, seed, first });
    return { result: { ...found, pieces: Array.from(session.pieces(Uint32Array.from(found.ids))) } };
  },
  // Activation patching (src/analysis/patching.rs) on {clean, corrupt, target, against}, run on its
  // own (the last run stays); progress after each of its L·(T + nH) partial runs.
  patch(request) {
    return typed(needSession().patch(request, progress));
  },
  // Find the circuit (src/analysis/circuit.rs): the answer after the last token, the heads that push
  // it most and its probability without them, a control's, and the logit lens there; its own runs.
  circuit({ ids, target = null, k = 3 }) {
    const found = needSession().findCircuit({ ids, target, k });
    return { result: { ...found, piece: session.pieces(Uint32Array.from([found.target]))[0] } };
  },
  async flash({ args, layer, head, row, tile }) {
    await run(args);
    return { result: session.flashRecord(layer, head, row, tile) };
  },
  decodeStart({ ids, sampling }) {
    needSession().generateStart(Uint32Array.from(ids), sampling);
    models.get(client).decoder = client;
    return { result: null };
  },
  // One step; its trace replaces the last run's in the Session, so the next run must run again.
  decodeStep({ request, names }) {
    ownDecoding();
    lastRun = null;
    const step = needSession().generateStep(request);
    const { result: found, transfer } = collect(session, shapesOf(step.entries), names);
    const { entries, ...rest } = step;
    return { result: { ...rest, ...found }, transfer };
  },
  decodeCheck() {
    ownDecoding();
    return { result: needSession().decodeCheck() };
  },
  // Which build of the core runs here: 'threads', 'relaxed-simd' or 'simd128'.
  coreBuild() {
    return { result: BUILD };
  },
  // The build, its matmuls' threads, why the threads build did not start where it could have, and
  // the bytes of WebAssembly memory the core holds now (it grows and never shrinks: its high-water mark).
  coreInfo() {
    return { result: { build: BUILD, threads, threadsError, memoryBytes: memory?.buffer.byteLength ?? null } };
  },
  // What this worker loaded (the core, its wasm, a tokenizer) and MiniMind's tokenizer, which a
  // switch to a random model needs even when this visit never fetched it: the offline cache (offline.js).
  resources() {
    return { result: [...new Set([...performance.getEntriesByType('resource').map((e) => e.name), MINIMIND_TOKENIZER])] };
  },
};

// Told by the core after each layer of a run; reports to the request being answered.
let progress = () => {};

// Messages are answered one at a time, in order: a GPU run awaits, and nothing may interleave with it.
let queue = Promise.resolve();

// What is answered without the core, so not kept waiting for it: a checkpoint's headers are read
// while the wasm still downloads.
const CORELESS = new Set(['safetensorsHeaders']);

// `reply(message, transfer)` sends the answer to the client that asked: this worker's page, or a
// figure the core serves (whose buffers are copied: a BroadcastChannel transfers nothing, and keeps
// what it gave, so nothing is `returned`).
async function answer({ id, type, ...body }, who = 'page', reply = (message, transfer) => self.postMessage(message, transfer)) {
  try {
    enter(who);
    if (!CORELESS.has(type)) await ready;
    progress = (done, total) => reply({ id, progress: { done, total } });
    const { result, transfer = [], returned } = await handlers[type](body);
    reply({ id, ok: true, result, returned: who === 'page' ? returned : undefined }, transfer);
  } catch (err) {
    if (err instanceof WebAssembly.RuntimeError) {
      reply({ id, ok: false, error: err.message, panic: self.attnscopePanic ?? null, trapped: true });
      // This instance cannot be trusted any more: its page replaces it (worker_client.js).
      if (who !== 'page') self.postMessage({ id: 0, poisoned: true, error: err.message });
    } else reply({ id, ok: false, error: err?.message ?? String(err), code: err?.code, args: err?.args });
  } finally {
    leave();
    progress = () => {};
  }
}

// Serving a post's other figures (worker_client.js shareCores; `host`: this figure's id in the
// turns, turns.js). Calls come on one channel, addressed to this host; each figure hears its answers
// on a channel of its own; the news channel says where the core is, now and whenever a figure asks
// ('hello'), with an epoch that a new worker changes (its figures then send their models again).
let serving = null;

function serve(host) {
  if (serving || typeof BroadcastChannel !== 'function') return;
  const calls = new BroadcastChannel('attnscope-core-calls');
  const news = new BroadcastChannel('attnscope-core-news');
  const replies = new Map();
  const epoch = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  serving = { host, epoch };
  const announce = () => news.postMessage({ kind: 'core', id: host, epoch });
  news.onmessage = ({ data }) => data?.kind === 'hello' && announce();
  calls.onmessage = ({ data }) => {
    if (data?.to !== host || typeof data.client !== 'string') return;
    const { to, client: who, ...message } = data;
    if (!replies.has(who)) {
      replies.set(who, new BroadcastChannel(`attnscope-core:${who}`));
      // The page keeps this worker while it serves others (no idle release).
      if (replies.size === 1) self.postMessage({ id: 0, serves: true });
    }
    const channel = replies.get(who);
    queue = queue.then(() => answer(message, who, (reply) => channel.postMessage(reply)));
  };
  announce();
}

self.onmessage = ({ data }) => {
  if (data?.type === 'serve') return serve(data.host);
  // The turns' port (a figure's worker): granted, this worker is the post's core, and starts.
  if (data?.type === 'turns') {
    data.port.onmessage = ({ data: said }) => {
      // Another figure's core serves this one: this worker, never started, goes.
      if (said?.kind === 'host' && !serving) self.close();
      if (said?.kind !== 'granted') return;
      serve(said.id);
      begin();
    };
    return;
  }
  if (data?.type === 'builtin' && typeof data.url === 'string') started.then(() => held(`builtin:${data.url}`) || builtinFiles(data.url)).catch(() => {});
  queue = queue.then(() => answer(data));
};

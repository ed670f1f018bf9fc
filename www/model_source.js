// Where a checkpoint comes from and how its bytes are read: the built-in model (models/builtin/),
// SmolLM2 (models/smollm2/), a folder or file URL, a Hugging Face Hub repo id, or files the reader
// picks or drops (a folder too). Reading streams, reporting bytes as they arrive; before the tensor
// data is read, the core (in the worker) sees the file's size and its header, so a checkpoint too big
// for the tab, or one that does not match what it says it is, is refused up front with the core's reason.
//
// Two formats, siblings behind the same reading: Hugging Face's safetensors (config.json +
// model.safetensors + tokenizer.json, `checkCheckpoint`) and llama.cpp's GGUF (one .gguf file whose
// header holds the config and the tokenizer, `checkGguf`: `readGguf` below). Every source hands
// either to the same `load`, whose checkpoint the worker builds by its `format`.
//
// The reader's own model, and SmolLM2, are kept in IndexedDB for the next visit, each in a slot of
// its own. Not in the Cache API: the service worker (sw.js) deletes every cache but its own when it updates.
//
// A checkpoint here is {format: 'safetensors' | 'gguf', config: text | null, weights: ArrayBuffer,
// tokenizer: text | null, meta} (a GGUF file's config and tokenizer are inside its bytes: null), with
// meta = {name, kind: 'builtin' | 'smollm2' | 'url' | 'hub' | 'files', format, url?, repo?, file?,
// files?, bytes, dtype, weight_count}.

import { isHubFile, isHubRepo } from './state.js';
import { t } from './strings.js';
import { errorText } from './page/error_text.js';

export const BUILTIN_URL = new URL('./models/builtin/', import.meta.url).href;
// The built-in model was trained on windows of 128 tokens (models/builtin/README.md): past them, every
// position is one it never saw in training, which the attention map says where a head changes there.
export const BUILTIN_CONTEXT = 128;
// SmolLM2-135M-Instruct (Apache-2.0) as llama.cpp quantizes it, fetched by ./build.sh build; a site
// built without it has no such file.
export const SMOLLM2_URL = new URL('./models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf', import.meta.url).href;

const MAX_HEADER_BYTES = 100_000_000; // the safetensors crate's limit

// --- which file is which ---

const isConfig = (name) => name === 'config.json';
const isWeights = (name) => name.endsWith('.safetensors');
const isTokenizer = (name) => name === 'tokenizer.json';
const isGguf = (name) => /\.gguf$/i.test(name);

const baseName = (file) => file.name.split('/').pop();

// The folder the files came from (a dropped or picked folder), or null.
function folderOf(files) {
  const path = files.map((f) => f.webkitRelativePath || f.path || '').find((p) => p.includes('/'));
  return path ? path.split('/').slice(-2, -1)[0] : null;
}

/**
 * The model among `files`: config.json, model.safetensors (or the one .safetensors file) and
 * tokenizer.json ({format: 'safetensors', config, weights, tokenizer}); else the one .gguf file
 * ({format: 'gguf', weights}).
 */
export function pickFiles(files) {
  const list = Array.from(files);
  const weights = list.filter((f) => isWeights(baseName(f)));
  const picked = {
    format: 'safetensors',
    config: list.find((f) => isConfig(baseName(f))),
    weights: weights.find((f) => baseName(f) === 'model.safetensors') ?? (weights.length === 1 ? weights[0] : undefined),
    tokenizer: list.find((f) => isTokenizer(baseName(f))),
  };
  const missing = [!picked.config && 'config.json', !picked.weights && 'model.safetensors'].filter(Boolean);
  const ggufs = list.filter((f) => isGguf(baseName(f)));
  if (missing.length && ggufs.length === 1) return { format: 'gguf', weights: ggufs[0] };
  if (missing.length && ggufs.length > 1) throw new Error(t('source.manyGguf', { given: ggufs.map(baseName).join(', ') }));
  if (missing.length) {
    const given = list.map(baseName).join(', ') || t('source.nothing');
    throw new Error(weights.length > 1 && !missing.includes('config.json') ? t('source.manyWeights', { given }) : t('source.needFiles', { missing: missing.join(', '), given }));
  }
  return picked;
}

// --- bytes as they arrive ---

// How many leading bytes hold a safetensors header: 8, then the length those 8 bytes give (null:
// a length no safetensors file has, so not a header).
function headerEnd(bytes) {
  if (bytes.length < 8) return 8;
  const n = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  return n > BigInt(MAX_HEADER_BYTES) ? null : 8 + Number(n);
}

// A byte count for a sentence, exact (the reader compares it with the file's own size).
const count = (bytes) => bytes.toLocaleString('en-US');

// How many of a sharded checkpoint's downloads are open at once. A browser keeps at most six
// connections to one host over HTTP/1.1, and a download whose bytes wait to be read holds its
// connection: opening every shard before reading any stalled at the seventh.
export const SHARDS_IN_FLIGHT = 3;

// How much of a checkpoint's data is read ahead while the core checks its header. The core may still
// be on its way (the wasm downloads beside the weights): the download goes on meanwhile, and the
// reader's progress with it, rather than stalling at the header. A bound, so that the core's check
// still comes before most of a large file is held.
export const READ_AHEAD_BYTES = 32 << 20;

// The length a download announces for its body, where that is the file's own (no Content-Encoding):
// the progress's total until the file's header says it exactly. Never trusted for more than that.
function announcedLength(response) {
  const length = response.headers.get('content-length');
  if (response.headers.get('content-encoding') || length === null || !/^\d+$/.test(length.trim())) return null;
  const n = Number(length);
  return Number.isSafeInteger(n) ? n : null;
}

// What a source's open() gave: a download (a Response: its body, and the length it announces) or a stream.
function opened(source, given) {
  if (given instanceof ReadableStream) return given;
  source.announced ??= announcedLength(given);
  return given.body;
}

/**
 * Reads a checkpoint's safetensors files (one model.safetensors, or the shards of a sharded one, in
 * order; each `open()` resolves to its bytes' stream) into one ArrayBuffer holding one safetensors
 * file. Every file's header is read first, into one array of the length its first 8 bytes give, and
 * `headers(heads)` (the worker: safetensors_header.js) parses them, off the page's thread, into each
 * file's size and the joined file's header; `check(size, head)` (the core) sees the whole file's
 * size and header before any tensor data is read, and only once the core accepts is a buffer of
 * exactly that size allocated, so the core's budget bounds it. At most SHARDS_IN_FLIGHT downloads are
 * open at a time: a shard read while the first ones wait has its download closed once its header is
 * in, and opened again for its data. What a sender says about its length (Content-Length,
 * compression) is not trusted: a stream that brings more or fewer bytes than its header describes,
 * or breaks off, is refused with a sentence naming its file. progress(loaded, total) follows the
 * bytes, total from the first byte where every file's length is announced (`announced` of a source,
 * or its download's Content-Length), then exact once every header is in; null until then otherwise.
 * While the core checks, the first file's data goes on arriving (READ_AHEAD_BYTES at most).
 * preview(qkNorm) hears, before the check, whether the files hold Q/K norm weights (previewConfig).
 */
async function readStreams(sources, { check, headers, progress, preview = () => {} }) {
  // got: the file's bytes counted so far; rest: those that came past its header, kept for its data;
  // early: what came while the core checked.
  const shards = sources.map(({ open, file, announced = null }) => ({ open, file, announced, reader: null, head: null, end: 0, rest: null, early: [], ended: false, got: 0, size: 0, length: 0 }));
  const loaded = () => shards.reduce((sum, s) => sum + Math.max(s.length, s.got), 0);
  // The total before the headers are in: what the files announce, where each of them does.
  const announced = () => (shards.every((s) => s.announced !== null) ? shards.reduce((sum, s) => sum + s.announced, 0) : null);
  const openShard = async (shard) => {
    shard.reader = opened(shard, await shard.open()).getReader();
  };
  const next = async (shard) => {
    try {
      return await shard.reader.read();
    } catch {
      throw new Error(t('source.brokenOff', { file: shard.file, loaded: count(shard.length || shard.got) }));
    }
  };
  const close = (shard) => {
    shard.reader?.cancel().catch(() => {});
    shard.reader = null;
  };
  // The file's header: 8 bytes, then as many as they say, in one array; what the last chunk brings
  // past it is kept in `rest`.
  const readHead = async (shard) => {
    const first = new Uint8Array(8);
    let at = 0;
    for (;;) {
      const { done, value } = await next(shard);
      if (done) throw new Error(t('source.tooShort', { file: shard.file, loaded: count(at), total: count(shard.end || 8) }));
      let from = 0;
      if (!shard.head) {
        from = Math.min(8 - at, value.length);
        first.set(value.subarray(0, from), at);
        at += from;
        shard.got = at;
        if (at < 8) continue;
        const end = headerEnd(first);
        if (end === null) throw new Error(t('source.badHead', { file: shard.file }));
        shard.end = end;
        shard.head = new Uint8Array(end);
        shard.head.set(first);
      }
      const used = Math.min(value.length - from, shard.end - at);
      shard.head.set(value.subarray(from, from + used), at);
      at += used;
      shard.got = at;
      progress(loaded(), announced());
      if (at === shard.end) {
        shard.rest = value.subarray(from + used);
        return;
      }
    }
  };
  try {
    let open = 0;
    for (const [i, shard] of shards.entries()) {
      await openShard(shard);
      progress(loaded(), announced());
      open++;
      await readHead(shard);
      // The first shards' downloads stay open for their data while a place is left for the next
      // header; later ones give their place to it, except the last, which needs none after it.
      if (open < SHARDS_IN_FLIGHT || i === shards.length - 1) {
        shard.got += shard.rest.length;
        continue;
      }
      close(shard);
      open--;
      shard.rest = null;
    }
    const ends = shards.map((s) => s.end);
    const { sizes, head, bases, qkNorm } = await headers(shards.map((s) => s.head));
    shards.forEach((shard, i) => {
      shard.head = null; // moved to the worker
      if (sizes[i] === null && shards.length > 1) throw new Error(t('source.badHead', { file: shard.file }));
      shard.size = sizes[i] ?? ends[i];
    });
    preview(qkNorm);
    const size = head.length + shards.reduce((sum, s) => sum + s.size - s.end, 0);
    const total = shards.reduce((sum, s) => sum + s.size, 0);
    // The first file's data, read while the core checks (it may still be loading).
    let checked = false;
    const first = shards[0];
    const ahead = (async () => {
      let held = 0;
      while (!checked && held < READ_AHEAD_BYTES && first.got < first.size) {
        const { done, value } = await next(first);
        if (done) {
          first.ended = true;
          return;
        }
        first.early.push(value);
        held += value.length;
        first.got += value.length;
        progress(loaded(), total);
      }
    })();
    ahead.catch(() => {}); // said below, once the check is in
    let info;
    try {
      info = await check(size, head);
    } finally {
      checked = true;
    }
    await ahead;
    const buffer = new Uint8Array(size);
    buffer.set(head);
    for (const [i, shard] of shards.entries()) {
      let skip = 0; // a download opened again brings its header again
      if (!shard.reader) {
        await openShard(shard);
        skip = shard.end;
      }
      const put = (bytes) => {
        const dropped = Math.min(skip, bytes.length);
        skip -= dropped;
        const data = bytes.subarray(dropped);
        if (shard.length + data.length > shard.size) throw new Error(t('source.tooLong', { file: shard.file, total: count(shard.size) }));
        buffer.set(data, bases[i] + shard.length - shard.end);
        shard.length += data.length;
        progress(loaded(), total);
      };
      shard.length = shard.end;
      if (shard.rest) put(shard.rest);
      shard.rest = null;
      shard.early.forEach(put);
      shard.early = [];
      while (!shard.ended) {
        const { done, value } = await next(shard);
        if (done) break;
        put(value);
      }
      shard.reader = null;
      if (shard.length < shard.size) throw new Error(t('source.tooShort', { file: shard.file, loaded: count(shard.length), total: count(shard.size) }));
    }
    return { weights: buffer.buffer, info };
  } catch (err) {
    shards.forEach(close);
    throw err;
  }
}

// --- a GGUF file ---

// How much of a GGUF file is read before the core is first asked about its header, and by how much
// the read grows when the header runs on (SmolLM2's, with its tokenizer, is 2 MB): a few asks.
const GGUF_FIRST_READ = 1 << 20;

/**
 * A GGUF file's header: read(n) gives the file's first n bytes (fewer only where the file or stream
 * ends first), and the core (`needs`, ggufHeaderNeeds) says how many it needs until it has them
 * all. `file` and `size` name the file in a refusal of one that ends first.
 */
async function ggufHead(read, size, file, needs) {
  let want = Math.min(size, GGUF_FIRST_READ);
  for (;;) {
    const head = await read(want);
    if (head.length < want) throw new Error(t('source.lengthShort', { file, loaded: count(head.length), total: count(size) }));
    const more = await needs(size, head);
    if (more == null || head.length >= size) return head;
    want = Math.min(size, Math.max(more, 2 * head.length));
  }
}

/**
 * Reads a GGUF file of `size` bytes from `stream` into one ArrayBuffer, as readStreams does a
 * safetensors file: its header first (ggufHead), which `check(size, head)` (the core's checkGguf:
 * the model it holds, its tokenizer, the tab's budget) sees before any tensor data is read; only
 * then is a buffer of exactly `size` bytes allocated. A GGUF header does not say how long its file
 * is: `size` is the file's own (a picked file) or what the server announced (Content-Length), and
 * a stream that brings more or fewer bytes, or breaks off, is refused with a sentence naming `file`.
 */
async function readGguf(stream, size, file, { needs, check, progress }) {
  const reader = stream.getReader();
  let loaded = 0;
  const next = async () => {
    try {
      return await reader.read();
    } catch {
      throw new Error(t('source.brokenOff', { file, loaded: count(loaded) }));
    }
  };
  const take = (bytes) => {
    if (loaded + bytes.length > size) throw new Error(t('source.lengthLong', { file, total: count(size) }));
    loaded += bytes.length;
    progress(loaded, size, file);
  };
  // The file's first n bytes (n grows from ask to ask) in one array of n, allocated once per ask of
  // the core's (ggufHead), not grown chunk by chunk; fewer where the stream ends. What a chunk
  // brings past them waits in `spill`.
  let head = new Uint8Array(0);
  let spill = new Uint8Array(0);
  const read = async (n) => {
    const grown = new Uint8Array(n);
    grown.set(head);
    let at = head.length;
    for (let piece = spill; ; ) {
      const used = Math.min(piece.length, n - at);
      grown.set(piece.subarray(0, used), at);
      at += used;
      spill = piece.subarray(used);
      if (at === n) break;
      const { done, value } = await next();
      if (done) break;
      take(value);
      piece = value;
    }
    head = grown.subarray(0, at);
    return head;
  };
  try {
    progress(0, size, file);
    const header = await ggufHead(read, size, file, needs);
    const info = await check(size, header);
    const buffer = new Uint8Array(size);
    buffer.set(header);
    buffer.set(spill, header.length);
    for (;;) {
      const { done, value } = await next();
      if (done) break;
      const at = loaded;
      take(value);
      buffer.set(value, at);
    }
    if (loaded < size) throw new Error(t('source.lengthShort', { file, loaded: count(loaded), total: count(size) }));
    return { weights: buffer.buffer, info };
  } catch (err) {
    reader.cancel().catch(() => {});
    throw err;
  }
}

// A GGUF file downloaded whole: its size is what the server announces (Content-Length), or it is
// refused, since a GGUF file's header is checked against its size before anything else is read.
function ggufDownload(response, file, options, meta) {
  const length = response.headers.get('content-length');
  const size = length !== null && /^\d+$/.test(length.trim()) ? Number(length) : NaN;
  if (!Number.isSafeInteger(size)) {
    response.body?.cancel().catch(() => {});
    return Promise.reject(new Error(t('source.noLength', { file })));
  }
  return ggufCheckpoint(response.body, size, file, options, meta);
}

// A GGUF checkpoint read by readGguf; the name is the file's, without .gguf.
async function ggufCheckpoint(stream, size, file, options, meta) {
  const { weights, info } = await readGguf(stream, size, file, options);
  const name = file.split('/').pop().replace(/\.gguf$/i, '');
  return { format: 'gguf', config: null, weights, tokenizer: null, meta: { name, format: 'gguf', bytes: size, dtype: info.dtype, weight_count: info.weight_count, ...meta } };
}

// --- the JSON files, read within a size ---

// config.json is a few hundred bytes; tokenizer.json a few MB (Qwen's 11 MB); the shards' index
// under 1 MB. A file past its limit is refused before it is read, so a 700 MB "tokenizer.json"
// neither freezes the tab nor is blamed on its JSON.
const TEXT_LIMITS = { 'config.json': 1 << 20, 'tokenizer.json': 64 << 20, 'model.safetensors.index.json': 16 << 20 };

function tooBig(file, bytes) {
  return new Error(t('source.textTooBig', { file, size: bytes.toLocaleString('en-US'), most: TEXT_LIMITS[file].toLocaleString('en-US') }));
}

// A picked or dropped file's text, refused by size first.
async function fileText(blob, file) {
  if (blob.size > TEXT_LIMITS[file]) throw tooBig(file, blob.size);
  return blob.text();
}

// A download's text, counted as it arrives: refused past the limit, and a download that breaks off
// is said as such, with the file's name (not the browser's "Failed to fetch").
export async function responseText(response, file) {
  const declared = Number(response.headers.get('content-length'));
  if (declared > TEXT_LIMITS[file]) throw tooBig(file, declared);
  const reader = response.body.getReader();
  const parts = [];
  let loaded = 0;
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch {
      throw new Error(t('source.brokenOff', { file, loaded: loaded.toLocaleString('en-US') }));
    }
    if (chunk.done) break;
    loaded += chunk.value.length;
    if (loaded > TEXT_LIMITS[file]) {
      reader.cancel().catch(() => {});
      throw tooBig(file, loaded);
    }
    parts.push(chunk.value);
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return new TextDecoder().decode(bytes);
}

// --- files ---

/**
 * A checkpoint from the reader's files (picked or dropped): config.json and model.safetensors,
 * tokenizer.json if given, or one .gguf file. check(configText, size, head) → the core's view of a
 * safetensors checkpoint, checkGguf(size, head) of a GGUF file; progress(loaded, total) as the
 * weights are read; headers(heads) parses safetensors headers (readStreams).
 */
export async function fromFiles(files, options) {
  const { check } = options;
  const picked = pickFiles(files);
  if (picked.format === 'gguf') {
    const file = baseName(picked.weights);
    return ggufCheckpoint(picked.weights.stream(), picked.weights.size, file, { ...options, check: options.checkGguf }, { kind: 'files', files: [file] });
  }
  const config = await fileText(picked.config, 'config.json');
  const size = picked.weights.size;
  const first = new Uint8Array(await picked.weights.slice(0, 8).arrayBuffer());
  const head = new Uint8Array(await picked.weights.slice(0, headerEnd(first) ?? 8).arrayBuffer());
  const info = await check(config, size, head);
  const { weights } = await readStreams([{ open: async () => picked.weights.stream(), file: baseName(picked.weights), announced: size }], { ...options, check: async () => info });
  const tokenizer = picked.tokenizer ? await fileText(picked.tokenizer, 'tokenizer.json') : null;
  const names = [picked.config, picked.weights, picked.tokenizer].filter(Boolean).map(baseName);
  const name = folderOf(Array.from(files)) ?? modelName(config, baseName(picked.weights));
  return { format: 'safetensors', config, weights, tokenizer, meta: { name, kind: 'files', format: 'safetensors', files: names, bytes: size, dtype: info.dtype, weight_count: info.weight_count } };
}

// A name for a model with no folder: config.json's own (_name_or_path, model_type) or the file's.
function modelName(configText, fallback) {
  try {
    const raw = JSON.parse(configText);
    const named = [raw._name_or_path, raw.model_type].find((v) => typeof v === 'string' && v.trim() !== '');
    if (named) return named.split('/').filter(Boolean).pop();
  } catch {
    // The core explains a config.json that is not JSON; the name is only a label.
  }
  return fallback;
}

/** The files of a drop, folders walked (a dropped folder is read whole). */
export async function droppedFiles(dataTransfer) {
  const entries = Array.from(dataTransfer.items ?? [])
    .filter((item) => item.kind === 'file')
    .map((item) => item.webkitGetAsEntry?.())
    .filter(Boolean);
  if (!entries.some((e) => e.isDirectory)) return Array.from(dataTransfer.files);
  const files = [];
  const walk = async (entry, path) => {
    if (entry.isFile) {
      const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
      files.push(Object.assign(file, { path: `${path}${file.name}` }));
    } else if (entry.isDirectory) {
      const reader = entry.createReader();
      for (;;) {
        const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
        if (batch.length === 0) break;
        for (const child of batch) await walk(child, `${path}${entry.name}/`);
      }
    }
  };
  for (const entry of entries) await walk(entry, '');
  return files;
}

// --- a folder URL ---

/**
 * The address a model URL names, resolved against the page, or a refusal in the reader's language
 * before any request: only an http(s) address is fetched, not javascript:, file:, data: or a bare "http://".
 */
function webUrl(url) {
  // Without a scheme it is a path on this site (models/builtin/, /models/x/), unless it has a space
  // (words typed in the wrong box) or its first part is a host name ("huggingface.co/…" without its
  // https://): those would be fetched from this site and answered 404, so they are not addresses.
  const schemed = /^[a-z][a-z0-9+.-]*:/i.test(url);
  const hostLike = !schemed && /^[^/]*\.[^/]*\//.test(url.trim()) && !/^\.{1,2}\//.test(url.trim());
  const resolved = !/\s/.test(url.trim()) && !hostLike && URL.canParse(url, location.href) ? new URL(url, location.href) : null;
  if (!resolved || !['http:', 'https:'].includes(resolved.protocol) || !resolved.host) throw new Error(t('source.notHttp', { url: clipped(url) }));
  // The page's own policy (connect-src 'self' https:) lets it read plain http:// from its own site
  // only: another site's http:// address would fail as if that site refused, so it is refused here.
  if (resolved.protocol === 'http:' && resolved.origin !== location.origin) throw new Error(t('source.notHttps', { url: clipped(url) }));
  resolved.hash = '';
  return resolved;
}

/** Whether a model URL names a GGUF file (…/model.Q4_K_M.gguf) rather than a folder. */
export const isGgufUrl = (url) => URL.canParse(url, location.href) && isGguf(new URL(url, location.href).pathname);

/** The folder a model URL names: itself, or the folder of a file in it; relative to the page (webUrl). */
export function folderUrl(url) {
  const resolved = webUrl(url);
  if (/\.(json|safetensors)$/.test(resolved.pathname)) resolved.pathname = resolved.pathname.replace(/[^/]*$/, '');
  else if (!resolved.pathname.endsWith('/')) resolved.pathname += '/';
  resolved.search = '';
  return resolved.href;
}

// The core's refusals of what came from a URL say which URL (as the reader gave it).
function located(url, fn) {
  return (...args) =>
    fn(...args).catch((err) => {
      throw Object.assign(new Error(t('source.fromUrl', { url: clipped(url), message: errorText(err) })), { superseded: err.superseded });
    });
}

// An address as a message quotes it: a very long one (5,000 characters pasted by mistake) is cut in
// the middle, so the message stays a sentence and not a wall that pushes the panel away.
export function clipped(url, most = 80) {
  const chars = Array.from(String(url));
  return chars.length <= most ? String(url) : `${chars.slice(0, most - 20).join('')}…${chars.slice(-19).join('')}`;
}

// Promises awaited later, whose failure is said then: not reported as unhandled meanwhile.
function quiet(...promises) {
  for (const promise of promises) promise.catch(() => {});
}

// Downloads asked for at once and not needed after all (an earlier file failed): their rejections
// are not left unhandled, and a download still open is closed.
function dropAll(...asked) {
  for (const promise of asked) promise.then((response) => (response instanceof Response && !response.bodyUsed ? response.body?.cancel() : null)).catch(() => {});
}

// A download boot.js started before the page's modules were in (the built-in model's weights and
// tokenizer, its numbers computed ahead: page/ahead.js), taken once by its address; null where there is none.
export function early(url) {
  const downloads = globalThis.attnscopeBoot?.downloads;
  const found = downloads?.get(url) ?? null;
  downloads?.delete(url);
  return found;
}

// boot.js's downloads not taken, once another model is loaded: closed.
function dropEarly() {
  const downloads = globalThis.attnscopeBoot?.downloads;
  for (const url of [...(downloads?.keys() ?? [])]) dropAll(early(url));
}

// fetch with the page's words for what went wrong; `shown` is the address as the reader gave it,
// `name` the file's name in them (the path fetched, unless said).
async function get(folder, path, shown, { optional = false, file = path } = {}) {
  let response;
  try {
    const url = new URL(path, folder).href;
    response = await (early(url) ?? fetch(url, { mode: 'cors', credentials: 'omit' }));
  } catch {
    throw new Error(t(new URL(folder).origin === location.origin ? 'source.unreachable' : 'source.cors', { url: clipped(shown), file }));
  }
  if (optional && response.status === 404) return null;
  if (!response.ok) throw new Error(t('source.http', { url: clipped(shown), file, status: `${response.status} ${response.statusText}`.trim() }));
  return response;
}

/**
 * A checkpoint from a URL: a folder's config.json, model.safetensors and, if the folder has one,
 * tokenizer.json, fetched relative to it; or a .gguf file. kind: 'url' or 'builtin' (the page's own folder).
 */
export async function fromUrl(url, options) {
  const { check, kind = 'url' } = options;
  if (isGgufUrl(url)) {
    const address = webUrl(url).href;
    const file = decodeURIComponent(new URL(address).pathname.split('/').pop());
    const response = await get(address, '', url, { file });
    return located(url, ggufDownload)(response, file, { ...options, check: options.checkGguf }, { kind, url });
  }
  const folder = folderUrl(url);
  // The three files are asked for at once: the tokenizer arrives while the weights do, not after them.
  const asked = get(folder, 'model.safetensors', url);
  const tokenizerRead = get(folder, 'tokenizer.json', url, { optional: true }).then((response) => response && responseText(response, 'tokenizer.json'));
  quiet(asked, tokenizerRead);
  let config;
  try {
    config = await responseText(await get(folder, 'config.json', url), 'config.json');
  } catch (err) {
    dropAll(asked, tokenizerRead);
    throw err;
  }
  const response = await asked.catch((err) => {
    dropAll(tokenizerRead);
    throw err;
  });
  // The core reads the tokenizer while the weights still arrive, once it has checked their header
  // (a check waited behind the reading would hold the download back) and not once they are in.
  const ahead = { checked: false, text: null, sent: false, done: false };
  const readAhead = () => {
    if (ahead.sent || !ahead.checked || ahead.done || !ahead.text) return;
    ahead.sent = true;
    options.readTokenizer?.(config, ahead.text);
  };
  tokenizerRead.then((text) => ((ahead.text = text), readAhead())).catch(() => {});
  const checkThen = async (size, head) => {
    const checked = await check(config, size, head);
    ahead.checked = true;
    readAhead();
    return checked;
  };
  // Done, failed or superseded: a tokenizer arriving after it is not read ahead.
  const { weights, info } = await located(url, readStreams)([{ open: async () => response, file: 'model.safetensors' }], { ...options, check: checkThen, preview: (qkNorm) => options.preview?.(config, qkNorm) })
    .catch((err) => {
      dropAll(tokenizerRead);
      throw err;
    })
    .finally(() => (ahead.done = true));
  const tokenizer = await tokenizerRead;
  const name = new URL(folder).pathname.split('/').filter(Boolean).pop() ?? new URL(folder).host;
  return {
    format: 'safetensors',
    config,
    weights,
    tokenizer,
    meta: { name, kind, format: 'safetensors', url, bytes: weights.byteLength, dtype: info.dtype, weight_count: info.weight_count },
  };
}

// --- a Hugging Face Hub repo ---

/** A repo id to show as an example: MiniMind2's small model. */
export const HUB_EXAMPLE = 'jingyaogong/MiniMind2-Small';

/**
 * Where the Hub is: https://huggingface.co/, or the page address's `?hub=` (a mirror, or the tests'
 * local Hub: no test may reach the internet). A repo's files are at <hub>/<id>/resolve/main/<file>,
 * its listing at <hub>/api/models/<id>.
 */
export function hubUrl() {
  const given = new URLSearchParams(location.search).get('hub');
  const url = given && URL.canParse(given, location.href) ? new URL(given, location.href) : null;
  if (!url || !['http:', 'https:'].includes(url.protocol)) return 'https://huggingface.co/';
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url.href;
}

// The shards a model.safetensors.index.json names (its weight_map's files, in order of first
// mention), or null when it is not such an index or names a file that is not a .safetensors shard.
function shardsOf(index) {
  const map = index?.weight_map;
  if (!map || typeof map !== 'object' || Array.isArray(map)) return null;
  const files = [...new Set(Object.values(map))];
  return files.length > 0 && files.every((f) => typeof f === 'string' && /^[\w.-]+\.safetensors$/.test(f)) ? files : null;
}

// What a repo with PyTorch weights only is told to run, in the folder it was downloaded to (a tied
// lm_head shares its storage with embed_tokens, which safetensors refuses to save: hence clone).
const CONVERT = {
  install: 'pip install torch safetensors',
  code: [
    'import torch; from safetensors.torch import save_file',
    'save_file({k: v.clone().contiguous() for k, v in torch.load("pytorch_model.bin", map_location="cpu").items()}, "model.safetensors")',
  ].join('\n'),
};

/**
 * A checkpoint from a Hub repo id ("owner/name", with `file` one of its GGUF files): its listing says
 * which files it has; config.json, model.safetensors (or the shards a model.safetensors.index.json
 * names, joined into one file) and, when the repo has one, tokenizer.json are fetched from
 * resolve/main/, or the GGUF file named. A repo with PyTorch weights only (pytorch_model.bin) is
 * refused with what to do about it; one with GGUF files and no safetensors weights, named without a
 * file, is refused with its GGUF files (`ggufFiles`, `repo` on the Error), for the reader to choose one.
 */
export async function fromHub(repo, options, file = undefined) {
  const { check } = options;
  if (!isHubRepo(repo)) throw new Error(t('hub.badRepo', { repo, example: HUB_EXAMPLE }));
  if (file !== undefined && !isHubFile(file)) throw new Error(t('hub.badFile', { repo, file }));
  const hub = hubUrl();
  const listing = await (await get(new URL('api/models/', hub).href, repo, new URL(hub).host)).json().catch(() => null);
  const files = new Set((Array.isArray(listing?.siblings) ? listing.siblings : []).map((f) => f?.rfilename));
  const folder = new URL(`${repo}/resolve/main/`, hub).href;
  const ggufs = [...files].filter((f) => typeof f === 'string' && isHubFile(f)).sort();
  if (file !== undefined) {
    if (!files.has(file)) throw new Error(t(ggufs.length ? 'hub.noFile' : 'hub.noGguf', { repo, file, files: ggufs.join(', ') }));
    const response = await get(folder, file.split('/').map(encodeURIComponent).join('/'), repo, { file });
    return located(`${repo}:${file}`, ggufDownload)(response, file, { ...options, check: options.checkGguf }, { kind: 'hub', repo, file, url: folder });
  }
  if (ggufs.length && !files.has('model.safetensors') && !files.has('model.safetensors.index.json')) {
    throw Object.assign(new Error(t('hub.chooseGguf', { repo, n: ggufs.length, example: `${repo}:${ggufs[0]}` })), { ggufFiles: ggufs, repo });
  }
  const config = await responseText(await get(folder, 'config.json', repo), 'config.json');
  let names = ['model.safetensors'];
  if (!files.has('model.safetensors')) {
    if (!files.has('model.safetensors.index.json')) throw new Error(t(files.has('pytorch_model.bin') ? 'hub.pytorchOnly' : 'hub.noWeights', { repo, ...CONVERT }));
    names = shardsOf(await responseText(await get(folder, 'model.safetensors.index.json', repo), 'model.safetensors.index.json').then(JSON.parse).catch(() => null));
    if (!names) throw new Error(t('hub.badIndex', { repo }));
  }
  // The tokenizer is asked for with the weights, not after them.
  const tokenizerRead = files.has('tokenizer.json') ? get(folder, 'tokenizer.json', repo).then((response) => responseText(response, 'tokenizer.json')) : Promise.resolve(null);
  quiet(tokenizerRead);
  const sources = names.map((file) => ({ open: () => get(folder, file, repo), file }));
  const { weights, info } = await located(repo, readStreams)(sources, { ...options, check: (size, head) => check(config, size, head), preview: (qkNorm) => options.preview?.(config, qkNorm) }).catch((err) => {
    dropAll(tokenizerRead);
    throw err;
  });
  const tokenizer = await tokenizerRead;
  return {
    format: 'safetensors',
    config,
    weights,
    tokenizer,
    meta: { name: repo.split('/').pop(), kind: 'hub', format: 'safetensors', repo, url: folder, bytes: weights.byteLength, dtype: info.dtype, weight_count: info.weight_count },
  };
}

// --- SmolLM2, the page's real model ---

/**
 * Whether this site has SmolLM2 (the server's answer to a HEAD): true, false where it has no such
 * file, null where that cannot be told now (offline: nothing is asked, so nothing fails in the console).
 */
export async function smollm2OnSite() {
  if (navigator.onLine === false) return null;
  try {
    const response = await fetch(SMOLLM2_URL, { method: 'HEAD' });
    return response.ok ? true : response.status === 404 ? false : null;
  } catch {
    return null;
  }
}

// SmolLM2 from this site (a site built without it answers 404: said so, plainly).
async function fromSmollm2(options) {
  const file = SMOLLM2_URL.split('/').pop();
  let response;
  try {
    response = await fetch(SMOLLM2_URL);
  } catch {
    throw new Error(t('source.unreachable', { url: clipped(SMOLLM2_URL), file }));
  }
  if (response.status === 404) throw new Error(t('smollm2.missing'));
  if (!response.ok) throw new Error(t('source.http', { url: clipped(SMOLLM2_URL), file, status: `${response.status} ${response.statusText}`.trim() }));
  return ggufDownload(response, file, { ...options, check: options.checkGguf }, { name: 'SmolLM2-135M', kind: 'smollm2' });
}

/** The model a kept checkpoint's meta stands for, as the link names it. */
export function keptModel(meta) {
  const hub = meta.file ? { kind: 'hub', repo: meta.repo, file: meta.file } : { kind: 'hub', repo: meta.repo };
  return { url: { kind: 'url', url: meta.url }, hub, smollm2: { kind: 'smollm2' } }[meta.kind] ?? { kind: 'files' };
}

// The attention patterns a sample sentence can show (samples.json's "pattern", written by
// tools/train/head_stats.py), each with the role the head grid names it by (parts/head_roles.js).
export const SAMPLE_PATTERNS = {
  'previous-token': 'previous',
  'first-token': 'first',
  'current-token': 'current',
  induction: 'induction',
  'duplicate-token': 'duplicate',
};

// The patterns of a circuit sample (SmolLM2's samples.json, examples/smollm2_samples.rs): a sentence
// whose answer (`target`) a few heads carry, shown by the Find-the-circuit view, not one head's map.
export const CIRCUIT_PATTERNS = {
  'indirect-object': 'indirectObject',
  fact: 'fact',
};

/**
 * samples.json checked against the model's config: {en: [...], zh: [...]}, each sample {text,
 * pattern, layer, head} naming a pattern of SAMPLE_PATTERNS and a head the model has; null for a file
 * with anything else in it (an older list of plain strings too), so that no button opens a head that
 * is not there.
 */
export function checkSamples(samples, config) {
  const below = (n, max) => Number.isInteger(n) && n >= 0 && n < max;
  const valid = (s) =>
    typeof s?.text === 'string' &&
    s.text.trim() !== '' &&
    (Object.hasOwn(SAMPLE_PATTERNS, s.pattern) || Object.hasOwn(CIRCUIT_PATTERNS, s.pattern)) &&
    below(s.layer, config?.num_hidden_layers) &&
    below(s.head, config?.num_attention_heads);
  const lists = ['en', 'zh'].map((lang) => samples?.[lang] ?? []);
  if (!lists.every((list) => Array.isArray(list) && list.every(valid)) || lists.every((list) => list.length === 0)) return null;
  const [en, zh] = lists.map((list) => list.map(({ text, pattern, layer, head, target }) => ({ text, pattern, layer, head, ...(typeof target === 'string' ? { target } : {}) })));
  return { en, zh };
}

/** SmolLM2's samples.json as served (checked with checkSamples once the model's config is known), or null. */
export async function smollm2Samples() {
  try {
    const response = await fetch(new URL('./models/smollm2/samples.json', import.meta.url));
    return response.ok ? await response.json() : null;
  } catch {
    return null;
  }
}

/** The built-in model's sample sentences (checkSamples), or null when it has none or they do not fit it. */
export async function builtinSamples() {
  try {
    const json = (name) => fetch(new URL(name, BUILTIN_URL)).then((response) => (response.ok ? response.json() : null));
    const [samples, config] = await Promise.all([json('samples.json'), json('config.json')]);
    return checkSamples(samples, config);
  } catch {
    return null;
  }
}

/** Whether the site has a built-in model: its config.json is there. */
export async function hasBuiltin() {
  try {
    const response = await fetch(new URL('config.json', BUILTIN_URL));
    // Read to the end: only then is it in the browser's list of resources, which the offline cache keeps (offline.js).
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

const superseded = () => Object.assign(new Error('Another model was chosen.'), { superseded: true });

// How often load() passes the bytes' progress on, at most (its last report always).
const PROGRESS_EVERY_MS = 100;

// --- the model's shape before the core is in ---

// The sizes a config.json gives the overview's diagram (views/overview.js), and MiniMind-3's defaults
// for those it leaves out, as the core reads them (src/model/config.rs, Config::from_json and resolve).
export const PREVIEW_KEYS = ['hidden_size', 'num_hidden_layers', 'num_attention_heads', 'num_key_value_heads', 'head_dim', 'intermediate_size', 'vocab_size', 'tie_word_embeddings', 'qk_norm', 'use_moe', 'num_experts', 'num_experts_per_tok', 'moe_intermediate_size'];
const DERIVED = new Set(['head_dim', 'intermediate_size', 'moe_intermediate_size']);
const PREVIEW_DEFAULTS = { hidden_size: 768, num_hidden_layers: 8, num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 6400, tie_word_embeddings: true, use_moe: false, num_experts: 4, num_experts_per_tok: 1 };

/**
 * A checkpoint's shape from its config.json text alone, before the core (still downloading, maybe)
 * has read it: the PREVIEW_KEYS as the core resolves them, Q/K norm decided by the checkpoint's
 * tensors (`qkNorm`) where the config does not say, as the core does. Null for anything but a plain
 * config (not JSON, a size that is not a whole number, heads that do not divide): the core says
 * what is wrong with it. The core's own answer replaces it once in (model_life.js, app.preview).
 */
export function previewConfig(text, qkNorm) {
  let raw;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw) || typeof qkNorm !== 'boolean') return null;
  // A size left out takes its default; head_dim and the FFN sizes may also be null, and then follow from the others.
  const count = (key, fallback = PREVIEW_DEFAULTS[key]) => (raw[key] === undefined || (raw[key] === null && DERIVED.has(key)) ? fallback : raw[key]);
  const flag = (key, fallback = PREVIEW_DEFAULTS[key]) => (raw[key] === undefined ? fallback : raw[key]);
  const c = {};
  for (const key of ['hidden_size', 'num_hidden_layers', 'num_attention_heads', 'num_key_value_heads', 'vocab_size', 'num_experts', 'num_experts_per_tok']) c[key] = count(key);
  c.head_dim = count('head_dim', c.hidden_size / c.num_attention_heads);
  c.intermediate_size = count('intermediate_size', Math.ceil((c.hidden_size * Math.PI) / 64) * 64);
  c.moe_intermediate_size = count('moe_intermediate_size', c.intermediate_size);
  c.tie_word_embeddings = flag('tie_word_embeddings');
  c.use_moe = flag('use_moe');
  c.qk_norm = flag('qk_norm', qkNorm);
  const whole = ['hidden_size', 'num_hidden_layers', 'num_attention_heads', 'num_key_value_heads', 'vocab_size', 'head_dim', 'intermediate_size'].every((key) => Number.isSafeInteger(c[key]) && c[key] > 0);
  const flags = ['tie_word_embeddings', 'use_moe', 'qk_norm'].every((key) => typeof c[key] === 'boolean');
  const experts = !c.use_moe || [c.num_experts, c.num_experts_per_tok, c.moe_intermediate_size].every((n) => Number.isSafeInteger(n) && n > 0);
  if (!whole || !flags || !experts || c.num_attention_heads % c.num_key_value_heads !== 0) return null;
  return c;
}

// Whether the core's answer draws the same diagram as the preview did (then it is not drawn again).
const samePreview = (a, b) => a !== null && PREVIEW_KEYS.every((key) => a[key] === b[key]);

/**
 * Reads the checkpoint `model` names (the files given, the one kept in this browser, a folder or
 * file URL, a Hub repo, SmolLM2 or the built-in one) and builds it in the worker through call(type,
 * body). progress(loaded, total) follows the bytes; wanted() says whether this model is still the
 * one asked for: once it is not, reading stops with an Error whose `superseded` is true, and the
 * worker never sees it. described(config) hears the core's resolved config as soon as the file's
 * header has passed the check, long before the weights are in, so the page can draw the model's
 * shape while it waits. kept() is the bytes the page holds for the model loaded now
 * (worker_client.js), which the core's check counts beside the new checkpoint. shared: the page
 * uses a post's shared core (worker_client.js sharesModels), which reads the built-in model itself.
 * Resolves to {config: the core's resolved config, checkpoint, restored: read from this browser}.
 */
export async function load(model, { call, files = null, progress, wanted, described = () => {}, kept: keptBytes = () => 0, shared = false }) {
  if (model.kind === 'builtin' && !files && shared) return sharedBuiltin(call, { progress, wanted });
  let previewed = null; // the shape drawn from config.json before the core's check (previewConfig)
  let told = null; // the last progress report passed on
  const heard = (info) => {
    if (wanted() && !samePreview(previewed, info)) described(info);
    return info;
  };
  const options = {
    // The shape from config.json and the header's tensor names, drawn before the core's check is in.
    preview: (config, qkNorm) => {
      const shape = previewConfig(config, qkNorm);
      if (shape && wanted()) described((previewed = shape));
    },
    check: async (config, size, head) => heard(await call('checkCheckpoint', { config, size, head, kept: keptBytes() })),
    checkGguf: async (size, head) => heard(await call('checkGguf', { size, head, kept: keptBytes() })),
    needs: (size, head) => call('ggufHeaderNeeds', { size, head }),
    // A folder's tokenizer.json, read by the core while the weights download (worker.js readAhead).
    readTokenizer: (config, tokenizer) => call('readTokenizer', { config, tokenizer }).catch(() => {}),
    // The safetensors headers move to the worker, which parses them (safetensors_header.js).
    headers: (heads) => call('safetensorsHeaders', { heads }, { transfer: heads.map((head) => head.buffer) }),
    progress: (loaded, total, file) => {
      if (!wanted()) throw superseded();
      // Told on: the first report, a total or file that changed, the last byte, and otherwise at most
      // every PROGRESS_EVERY_MS. A download brings a chunk every few milliseconds, and each report
      // redraws the model panel and the status: drawn for each, they were most of the page's work
      // while the weights arrived.
      const now = performance.now();
      if (told && told.total === total && told.file === file && loaded !== total && now - told.at < PROGRESS_EVERY_MS) return;
      told = { total, file, at: now };
      progress(loaded, total, file);
    },
  };
  if (files || model.kind !== 'builtin') dropEarly();
  let checkpoint = null;
  const slot = files ? null : slotOf(model);
  const keptMeta = slot ? await slot.meta() : null;
  if (keptMeta && JSON.stringify(keptModel(keptMeta)) === JSON.stringify(model)) {
    checkpoint = await slot.load().catch((err) => {
      // SmolLM2's kept copy gone is no loss: it comes from the site again.
      if (model.kind !== 'smollm2') throw err;
      return null;
    });
    // Checked again: what the tab holds now may leave no room for it beside the model loaded now.
    if (checkpoint) await recheck(checkpoint, options);
  }
  const restored = checkpoint !== null;
  if (files) checkpoint = await fromFiles(files, options);
  else if (restored) {
    // read from this browser above
  } else if (model.kind === 'builtin') checkpoint = await fromUrl(BUILTIN_URL, { ...options, kind: 'builtin' });
  else if (model.kind === 'smollm2') checkpoint = await fromSmollm2(options);
  else if (model.kind === 'url') checkpoint = await fromUrl(model.url, options);
  else if (model.kind === 'hub') checkpoint = await fromHub(model.repo, options, model.file);
  else throw Object.assign(new Error(t('link.modelFiles')), { filesNeeded: true });
  if (!wanted()) throw superseded();
  const shown = { url: model.url, hub: model.file ? `${model.repo}:${model.file}` : model.repo }[model.kind];
  const build = shown && !restored ? located(shown, call) : call;
  // The weights move to the worker (not copied) and come back once the core holds its own copy.
  const body = { format: checkpoint.format ?? 'safetensors', config: checkpoint.config, weights: checkpoint.weights, tokenizer: checkpoint.tokenizer };
  const { config } = await build('checkpoint', body, { transfer: [body.weights] });
  return { config, checkpoint: { ...checkpoint, weights: body.weights }, restored };
}

// The built-in model in a post's shared core (worker.js builtin): the core reads its files, once for
// all of the post's figures, and the page holds no copy of its weights.
async function sharedBuiltin(call, { progress, wanted }) {
  const heard = ({ done, total }) => {
    if (wanted()) progress(done, total, 'model.safetensors');
  };
  const { config, bytes, info } = await call('builtin', { url: BUILTIN_URL }, { onProgress: heard });
  if (!wanted()) throw superseded();
  const meta = { name: 'builtin', kind: 'builtin', format: 'safetensors', url: BUILTIN_URL, bytes, dtype: info.dtype, weight_count: info.weight_count };
  return { config, checkpoint: { format: 'safetensors', config: null, weights: null, tokenizer: null, meta }, restored: false };
}

// A kept checkpoint weighed again by the core, by its format (checkpoints kept before GGUF came are safetensors).
async function recheck(checkpoint, options) {
  const bytes = new Uint8Array(checkpoint.weights);
  if (checkpoint.format === 'gguf') {
    const head = await ggufHead(async (n) => bytes.subarray(0, n), bytes.length, checkpoint.meta.name, options.needs);
    return options.checkGguf(bytes.length, head);
  }
  return options.check(checkpoint.config, bytes.length, bytes.subarray(0, headerEnd(bytes) ?? 8));
}

// --- kept for the next visit (IndexedDB) ---

const DB_NAME = 'attnscope';
const STORE = 'models';

// A browser that gives this page no storage (an embed in a page that is not a secure context, some
// private windows) may answer an open with neither success nor error: after DB_WAIT_MS the page
// goes on without what is kept, rather than waiting for ever on "Loading…".
const DB_WAIT_MS = 4000;

function database() {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new Error('IndexedDB did not answer'));
    }, DB_WAIT_MS);
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => {
      clearTimeout(timer);
      if (late) request.result.close(); // given up on: not left open
      else resolve(request.result);
    };
    request.onerror = () => {
      clearTimeout(timer);
      reject(request.error);
    };
    request.onblocked = () => {
      clearTimeout(timer);
      reject(new Error('IndexedDB is blocked'));
    };
  });
}

// Runs `work(store)` in one transaction; resolves with its request's result once committed.
async function transaction(mode, work) {
  const db = await database();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const request = work(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(request?.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error('aborted'));
    });
  } finally {
    db.close();
  }
}

/**
 * A model kept in this browser, in slot `name` of two records: the small meta (read on every visit)
 * and the checkpoint (read only to load it). meta() is cheap; load() reads the weights.
 */
function keptSlot(name) {
  const META = `${name}-meta`;
  const CHECKPOINT = `${name}-checkpoint`;
  return {
    async meta() {
      try {
        return (await transaction('readonly', (store) => store.get(META))) ?? null;
      } catch {
        return null; // no IndexedDB here (a private window may refuse it): nothing is kept
      }
    },
    async load() {
      const checkpoint = await transaction('readonly', (store) => store.get(CHECKPOINT)).catch(() => null);
      if (!checkpoint) throw new Error(t('source.keptGone'));
      return checkpoint;
    },
    /** Keeps a checkpoint (replacing the one kept before); rejects when the browser refuses the space. */
    save(checkpoint) {
      return transaction('readwrite', (store) => {
        store.put(checkpoint, CHECKPOINT);
        return store.put(checkpoint.meta, META);
      });
    },
    forget() {
      return transaction('readwrite', (store) => {
        store.delete(CHECKPOINT);
        return store.delete(META);
      });
    },
  };
}

/** The reader's own model, kept in this browser (one at a time: the last that ran). */
export const kept = keptSlot('own');
/** SmolLM2, kept in this browser once it has run, so that the next visit does not download it again. */
export const keptSmollm2 = keptSlot('smollm2');

// Where a model is kept: SmolLM2 in its own slot, the built-in model nowhere (the site serves it,
// and the service worker keeps it offline), any other in the reader's.
function slotOf(model) {
  return { smollm2: keptSmollm2, builtin: null }[model.kind] ?? (model.kind === 'random' ? null : kept);
}

/** Keeps a checkpoint that has run in its slot; resolves to the slot's name ('own', 'smollm2'). */
export async function keep(checkpoint) {
  const smollm2 = checkpoint.meta.kind === 'smollm2';
  await (smollm2 ? keptSmollm2 : kept).save(checkpoint);
  return smollm2 ? 'smollm2' : 'own';
}

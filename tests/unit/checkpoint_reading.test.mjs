// How www/model_source.js reads a checkpoint's bytes, through its public load() against a stub
// network (fetch answering with streams in small chunks) and a stub worker (call): a safetensors
// header is read into one array of the length its first 8 bytes give, not grown chunk by chunk, and
// parsed by the worker (safetensors_header.js), never on the page's thread; a GGUF header grows once
// per ask of the core's; a sharded checkpoint keeps at most SHARDS_IN_FLIGHT downloads open, and its
// progress still counts every byte once, up to the whole. A folder's three files are asked for at
// once, its data keeps arriving while the core checks the header, its progress has its total from
// the first byte, and its shape (previewConfig) is drawn before the core's check.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

// What model_source.js meets in a page: its address, and an IndexedDB that answers with an error
// (nothing kept in this browser).
globalThis.location = new URL('http://site.test/');
globalThis.indexedDB = {
  open() {
    const request = {};
    setTimeout(() => request.onerror?.(), 0);
    return request;
  },
};

const { load, previewConfig, PREVIEW_KEYS, SHARDS_IN_FLIGHT } = await import('../../www/model_source.js');

// A safetensors file of `tensors` ([name, bytes] in order, F32), its header padded to 8 bytes;
// `metadata` goes in __metadata__ (a long one makes a big header).
function safetensors(tensors, metadata = {}) {
  const header = { __metadata__: metadata };
  let at = 0;
  for (const [name, bytes] of tensors) {
    header[name] = { dtype: 'F32', shape: [bytes.length / 4], data_offsets: [at, at + bytes.length] };
    at += bytes.length;
  }
  const text = JSON.stringify(header);
  const json = new TextEncoder().encode(text.padEnd(Math.ceil(text.length / 8) * 8, ' '));
  const file = new Uint8Array(8 + json.length + at);
  new DataView(file.buffer).setBigUint64(0, BigInt(json.length), true);
  file.set(json, 8);
  let offset = 8 + json.length;
  for (const [, bytes] of tensors) {
    file.set(bytes, offset);
    offset += bytes.length;
  }
  return file;
}

const tensor = (n, seed) => new Uint8Array(Float32Array.from({ length: n }, (_, i) => i * 0.5 + seed).buffer);

// The network: files by URL, each answered as a stream of `chunk`-byte pieces (views, not copies),
// pulled one at a time as a socket's bytes are. A download is open from its answer until its stream
// is read to the end or cancelled; `open` counts them now and `most` the most at once.
let files = new Map();
let chunk = 1024;
// events: ['request', url] when asked for, ['end', url] when a download's last bytes have been read.
const downloads = { open: 0, most: 0, requests: [], events: [] };
const realFetch = globalThis.fetch;
before(() => {
  globalThis.fetch = async (url) => {
    const href = String(url);
    downloads.requests.push(href);
    downloads.events.push(['request', href]);
    const body = files.get(href);
    if (body === undefined) return new Response('not found', { status: 404 });
    if (typeof body === 'string') return new Response(body, { status: 200, headers: { 'content-length': String(body.length) } });
    downloads.open++;
    downloads.most = Math.max(downloads.most, downloads.open);
    let at = 0;
    let closed = false;
    const done = () => {
      if (!closed) downloads.open--;
      closed = true;
    };
    const stream = new ReadableStream(
      {
        pull(controller) {
          if (at >= body.length) {
            done();
            controller.close();
            return;
          }
          controller.enqueue(body.subarray(at, at + chunk));
          at += chunk;
          if (at >= body.length) downloads.events.push(['end', href]);
        },
        cancel: done,
      },
      { highWaterMark: 0 },
    );
    return new Response(stream, { status: 200, headers: { 'content-length': String(body.length) } });
  };
});
after(() => {
  globalThis.fetch = realFetch;
});

// Every Uint8Array.prototype.set on the page's side counted in bytes (the copies), and every
// JSON.parse of a long text (a header parsed); the stub worker's own work is not the page's.
const page = { copied: 0, parsed: [] };
const realSet = Uint8Array.prototype.set;
const realParse = JSON.parse;
let inWorker = false;
function watch() {
  page.copied = 0;
  page.parsed = [];
  Uint8Array.prototype.set = function (source, offset) {
    if (!inWorker) page.copied += source.length;
    return realSet.call(this, source, offset);
  };
  JSON.parse = function (text, reviver) {
    if (!inWorker && String(text).length > 10_000) page.parsed.push(String(text).length);
    return realParse.call(this, text, reviver);
  };
}
function unwatch() {
  Uint8Array.prototype.set = realSet;
  JSON.parse = realParse;
}

// The worker: the core's checks answer yes, a GGUF header is said to need `ggufNeeds` bytes, and the
// safetensors headers are parsed by the module the real worker runs.
const asked = [];
let ggufNeeds = 0;
async function call(type, body) {
  asked.push({ type, body });
  inWorker = true;
  try {
    if (type === 'checkCheckpoint' || type === 'checkGguf') return { dtype: 'F32', weight_count: 1 };
    if (type === 'ggufHeaderNeeds') return body.head.length >= ggufNeeds ? null : ggufNeeds;
    if (type === 'safetensorsHeaders') return (await import('../../www/safetensors_header.js')).joinHeaders(body.heads);
    if (type === 'checkpoint') return { config: { hidden_size: 8 } };
    throw new Error(`the stub worker has no ${type}`);
  } finally {
    inWorker = false;
  }
}

async function loadWatched(model) {
  const progress = [];
  asked.length = 0;
  downloads.requests.length = 0;
  watch();
  try {
    const { checkpoint } = await load(model, { call, progress: (loaded, total) => progress.push([loaded, total]), wanted: () => true });
    return { checkpoint, progress };
  } finally {
    unwatch();
  }
}

test('a 1 MB safetensors header arriving in 1 KB pieces is read into one array and parsed in the worker, never on the page', async () => {
  const file = safetensors([['a', tensor(64, 1)], ['b', tensor(32, 2)]], { notes: 'x'.repeat(1 << 20) });
  files = new Map([
    ['http://site.test/m/config.json', '{"hidden_size": 8}'],
    ['http://site.test/m/model.safetensors', file],
  ]);
  chunk = 1024;
  const { checkpoint, progress } = await loadWatched({ kind: 'url', url: 'http://site.test/m/' });
  assert.deepEqual(new Uint8Array(checkpoint.weights), file, 'the file, byte for byte');
  // Each byte is copied into the header, then into the checkpoint's buffer: about twice the file.
  // Grown chunk by chunk, the header alone was copied about 500 times over (1 MB / 1 KB / 2).
  assert.ok(page.copied <= 3 * file.length, `${page.copied} bytes copied for a file of ${file.length}`);
  assert.deepEqual(page.parsed, [], 'no header JSON parsed on the page');
  const parsed = asked.filter((a) => a.type === 'safetensorsHeaders');
  assert.equal(parsed.length, 1, 'the worker parses the header');
  assert.equal(parsed[0].body.heads[0].length, 8 + Number(new DataView(file.buffer).getBigUint64(0, true)), 'the whole header, exactly');
  assert.deepEqual(progress.at(-1), [file.length, file.length]);
});

test('a GGUF header asked for in growing reads is copied once per ask, not once per piece', async () => {
  // Not a real GGUF file: the stub core says it needs its first 3 MB, read in 1 KB pieces.
  const file = Uint8Array.from({ length: 4 << 20 }, (_, i) => (i * 7) & 255);
  ggufNeeds = 3 << 20;
  files = new Map([['http://site.test/m/model.gguf', file]]);
  chunk = 1024;
  const { checkpoint, progress } = await loadWatched({ kind: 'url', url: 'http://site.test/m/model.gguf' });
  assert.deepEqual(new Uint8Array(checkpoint.weights), file);
  assert.deepEqual(asked.filter((a) => a.type === 'ggufHeaderNeeds').map((a) => a.body.head.length), [1 << 20, 3 << 20], 'first 1 MB, then what the core says it needs');
  // 1 MB, then 3 MB (the first again, and 2 MB more), then the whole file once: about 2x the file.
  assert.ok(page.copied <= 3 * file.length, `${page.copied} bytes copied for a file of ${file.length}`);
  assert.deepEqual(progress.at(-1), [file.length, file.length]);
});

test(`a checkpoint in 8 shards keeps at most ${SHARDS_IN_FLIGHT} downloads open, joins them, and counts each byte once`, async () => {
  const names = Array.from({ length: 8 }, (_, i) => `model-0000${i + 1}-of-00008.safetensors`);
  const tensors = names.map((_, i) => [`layer.${i}`, tensor(600 + 10 * i, i)]);
  const shards = names.map((_, i) => safetensors([tensors[i]]));
  const hub = 'https://huggingface.co/';
  files = new Map([
    [`${hub}api/models/o/sharded`, JSON.stringify({ siblings: ['config.json', 'model.safetensors.index.json', ...names].map((rfilename) => ({ rfilename })) })],
    [`${hub}o/sharded/resolve/main/config.json`, '{"hidden_size": 8}'],
    [`${hub}o/sharded/resolve/main/model.safetensors.index.json`, JSON.stringify({ weight_map: Object.fromEntries(tensors.map(([name], i) => [name, names[i]])) })],
    ...names.map((name, i) => [`${hub}o/sharded/resolve/main/${name}`, shards[i]]),
  ]);
  chunk = 256;
  downloads.most = 0;
  downloads.open = 0;
  const { checkpoint, progress } = await loadWatched({ kind: 'hub', repo: 'o/sharded' });
  assert.ok(downloads.most <= SHARDS_IN_FLIGHT, `${downloads.most} downloads open at once`);
  assert.equal(downloads.open, 0, 'every download read to its end or closed');
  // The joined file: one header listing every tensor, then the shards' data in order.
  const bytes = new Uint8Array(checkpoint.weights);
  const n = Number(new DataView(checkpoint.weights).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  for (const [name, data] of tensors) {
    const [start, end] = header[name].data_offsets;
    assert.deepEqual(bytes.subarray(8 + n + start, 8 + n + end), data, name);
  }
  // Progress: the bytes of every shard once (a shard's header read twice is counted once), rising to the whole.
  const total = shards.reduce((sum, s) => sum + s.length, 0);
  assert.deepEqual(progress.at(-1), [total, total]);
  assert.ok(progress.every(([loaded, of], i) => loaded <= total && (of === null || of === total) && (i === 0 || loaded >= progress[i - 1][0])), 'progress never goes back nor past the whole');
  assert.ok(progress.findIndex(([, of]) => of !== null) > 0, 'the total is known once every header is in');
});

test('a folder’s three files are asked for at once; its data arrives while the core checks, with the total from the first byte; its shape is drawn before the check', { timeout: 60_000 }, async () => {
  const file = safetensors([['model.layers.0.self_attn.q_norm.weight', tensor(8, 1)], ['w', tensor(40_000, 2)]]);
  const config = '{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100}';
  const folder = 'http://site.test/builtin/';
  files = new Map([
    [`${folder}config.json`, config],
    [`${folder}model.safetensors`, file],
    [`${folder}tokenizer.json`, '{"model": {}}'],
  ]);
  chunk = 1024;
  downloads.events.length = 0;
  const weightsUrl = `${folder}model.safetensors`;
  // The core answers the check only once the whole file has come: a reader that waited for the
  // check before reading on would wait for ever (the core may still be downloading, in the page).
  let arrived;
  const whole = new Promise((resolve) => (arrived = resolve));
  const seen = [];
  const resolved = { ...previewConfig(config, true), dtype: 'F32', weight_count: 1 };
  const slowCall = async (type, body) => {
    seen.push(type);
    if (type === 'checkCheckpoint') {
      const poll = setInterval(() => downloads.events.some(([e, url]) => e === 'end' && url === weightsUrl) && arrived(), 5);
      await whole.finally(() => clearInterval(poll));
      return resolved;
    }
    return call(type, body);
  };
  const progress = [];
  const described = [];
  const { checkpoint } = await load({ kind: 'url', url: folder }, { call: slowCall, progress: (loaded, total) => progress.push([loaded, total]), wanted: () => true, described: (c) => described.push({ c, checked: seen.includes('checkCheckpoint') }) });
  assert.deepEqual(new Uint8Array(checkpoint.weights), file, 'the file, byte for byte');
  assert.equal(checkpoint.tokenizer, '{"model": {}}');
  const asked = downloads.events.filter(([e]) => e === 'request').map(([, url]) => url.slice(folder.length));
  assert.deepEqual(asked.sort(), ['config.json', 'model.safetensors', 'tokenizer.json']);
  const at = (event, url) => downloads.events.findIndex(([e, u]) => e === event && u === `${folder}${url}`);
  assert.ok(at('request', 'tokenizer.json') < at('end', 'model.safetensors'), 'tokenizer.json asked for before the weights are in');
  assert.ok(progress.length >= 2, `${progress.length} progress reports`);
  assert.ok(progress.every(([, total]) => total === file.length), 'every report has the file’s size as its total');
  assert.deepEqual(progress.at(-1), [file.length, file.length]);
  // The shape from config.json and the header (Q/K norm weights in it), before the core's check;
  // the core's answer draws the same, so it is not drawn twice.
  assert.equal(described.length, 1);
  assert.equal(described[0].checked, false, 'drawn before the core was asked');
  assert.deepEqual(Object.keys(described[0].c).sort(), [...PREVIEW_KEYS].sort());
  assert.equal(described[0].c.qk_norm, true);
});

test('previewConfig resolves a config.json as the core does, or gives none', () => {
  const builtin = '{"hidden_size": 192, "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 32, "intermediate_size": 640, "vocab_size": 6400, "tie_word_embeddings": true, "use_moe": false}';
  assert.deepEqual(previewConfig(builtin, true), { hidden_size: 192, num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 6400, num_experts: 4, num_experts_per_tok: 1, head_dim: 32, intermediate_size: 640, moe_intermediate_size: 640, tie_word_embeddings: true, use_moe: false, qk_norm: true });
  // MiniMind-3's defaults, head_dim = hidden / heads, the FFN ceil(hidden·π / 64)·64, and a config's
  // own qk_norm over the checkpoint's.
  assert.deepEqual(previewConfig('{"head_dim": null, "qk_norm": false}', true), { hidden_size: 768, num_hidden_layers: 8, num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 6400, num_experts: 4, num_experts_per_tok: 1, head_dim: 96, intermediate_size: 2432, moe_intermediate_size: 2432, tie_word_embeddings: true, use_moe: false, qk_norm: false });
  for (const bad of ['not json', '[1]', '{"num_hidden_layers": null}', '{"hidden_size": "192"}', '{"num_key_value_heads": 3}', '{"hidden_size": 100, "num_attention_heads": 8}', '{"use_moe": 1}', '{"tie_word_embeddings": "yes"}']) {
    assert.equal(previewConfig(bad, false), null, bad);
  }
  assert.equal(previewConfig('{}', null), null, 'a header that was not one: no preview');
});

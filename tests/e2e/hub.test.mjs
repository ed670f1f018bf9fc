// A Hugging Face Hub repo id in the model panel, against a local Hub: no test reaches the internet.
// Two HTTPS servers on this machine (a certificate made for the run) play the Hub as a browser meets
// it: huggingface.co answers /api/models/<id> with the repo's files and /<id>/resolve/main/<file>
// with small files itself and a 302 to its file store (another host: a second port) for weights,
// which sends them with CORS headers (Access-Control-Allow-Origin, Content-Length exposed). The page
// is pointed at it by its `?hub=` address parameter.
//
// Repos: MiniMind2-Small's exact config (tests/fixtures/checkpoints/minimind2_small; its weights
// written here by make_checkpoints.py's formula) with MiniMind's tokenizer; the Llama f16 fixture split
// into two shards with a model.safetensors.index.json; one with pytorch_model.bin only; one whose
// file store sends no CORS header; and one that does not exist. A typed id that is not one is refused unfetched.
// Two of GGUF files (tests/fixtures/gguf), one in a folder of its own: named alone, the repo lists them
// to choose from; owner/name:file.gguf takes one; one whose file store does not say the file's size.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertClose, assertComputesLikePyTorch, launch, randomModel, screenshot, settled, startServer, WASM_VS_PYTORCH } from './helpers.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURES = join(ROOT, 'tests', 'fixtures', 'checkpoints');
const read = (...path) => readFileSync(join(...path));

// --- safetensors, written ---

// A safetensors file of `tensors` ([name, shape, bytes] in order), its header padded to 8 bytes.
function safetensors(tensors, dtype) {
  const header = {};
  let at = 0;
  for (const [name, shape, bytes] of tensors) {
    header[name] = { dtype, shape, data_offsets: [at, at + bytes.length] };
    at += bytes.length;
  }
  const text = JSON.stringify(header);
  const json = Buffer.from(text.padEnd(Math.ceil(text.length / 8) * 8, ' '));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([length, json, ...tensors.map(([, , bytes]) => bytes)]);
}

// MiniMind2-Small's checkpoint as make_checkpoints.py `formula_weights` makes it, in bf16: norm
// weights 1; the k-th other tensor (names sorted), element i, ((i * 2654435761 + (k + 1) * 40503)
// mod 2^32 >> 16) mod 255 - 127, over 8192 (exact in bf16: its f32 bits' top half).
function minimind2(config) {
  const { hidden_size: h, num_hidden_layers: layers, num_key_value_heads: kv, num_attention_heads: nh, intermediate_size: i, vocab_size: v } = config;
  const d = h / nh;
  const shapes = { 'model.embed_tokens.weight': [v, h], 'model.norm.weight': [h] };
  for (let l = 0; l < layers; l++) {
    const p = `model.layers.${l}.`;
    Object.assign(shapes, {
      [`${p}input_layernorm.weight`]: [h],
      [`${p}self_attn.q_proj.weight`]: [h, h],
      [`${p}self_attn.k_proj.weight`]: [kv * d, h],
      [`${p}self_attn.v_proj.weight`]: [kv * d, h],
      [`${p}self_attn.o_proj.weight`]: [h, h],
      [`${p}post_attention_layernorm.weight`]: [h],
      [`${p}mlp.gate_proj.weight`]: [i, h],
      [`${p}mlp.up_proj.weight`]: [i, h],
      [`${p}mlp.down_proj.weight`]: [h, i],
    });
  }
  const tensors = Object.keys(shapes)
    .sort()
    .map((name, k) => {
      const n = shapes[name].reduce((a, b) => a * b, 1);
      const values = new Float32Array(n);
      for (let j = 0; j < n; j++) {
        values[j] = name.endsWith('norm.weight') ? 1 : ((((Math.imul(j, 2654435761) + Math.imul(k + 1, 40503)) >>> 0) >>> 16) % 255 - 127) / 8192;
      }
      const bits = new Uint32Array(values.buffer);
      const bf16 = new Uint16Array(n);
      for (let j = 0; j < n; j++) bf16[j] = bits[j] >>> 16;
      return [name, shapes[name], Buffer.from(bf16.buffer)];
    });
  return safetensors(tensors, 'BF16');
}

// A safetensors file split into `count` shards of about as many tensors each, and their index.
function shards(bytes, count = 2) {
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  const data = bytes.subarray(8 + n);
  const names = Object.keys(header).filter((k) => k !== '__metadata__');
  const files = Array.from({ length: count }, (_, k) => `model-${String(k + 1).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.safetensors`);
  const shardOf = (i) => Math.floor((i * count) / names.length);
  const part = (k) => safetensors(names.filter((_, i) => shardOf(i) === k).map((name) => [name, header[name].shape, data.subarray(...header[name].data_offsets)]), header[names[0]].dtype);
  const weightMap = Object.fromEntries(names.map((name, i) => [name, files[shardOf(i)]]));
  return { ...Object.fromEntries(files.map((file, k) => [file, part(k)])), 'model.safetensors.index.json': JSON.stringify({ metadata: { total_size: data.length }, weight_map: weightMap }) };
}

const MM2 = { config: read(FIXTURES, 'minimind2_small', 'config.json'), expected: JSON.parse(read(FIXTURES, 'minimind2_small', 'expected.json')) };
const LLAMA = { config: read(FIXTURES, 'llama_f16', 'config.json'), model: read(FIXTURES, 'llama_f16', 'model.safetensors'), tokenizer: read(FIXTURES, 'llama_f16', 'tokenizer.json'), expected: JSON.parse(read(FIXTURES, 'llama_f16', 'expected.json')) };

const GGUF = (name) => read(ROOT, 'tests', 'fixtures', 'gguf', name, 'model.gguf');

// The last position's logits in a GGUF fixture's trace.safetensors (transformers'), and its ids.
function ggufReference(name) {
  const bytes = read(ROOT, 'tests', 'fixtures', 'gguf', name, 'trace.safetensors');
  const n = Number(bytes.readBigUInt64LE(0));
  const { shape, data_offsets: [start, end] } = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')).logits;
  const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset + 8 + n + start, bytes.byteOffset + 8 + n + end));
  return { ids: JSON.parse(read(ROOT, 'tests', 'fixtures', 'gguf', name, 'input.json')).ids, last: Array.from(all.slice(all.length - shape[1])) };
}

const REPOS = {
  'test-org/MiniMind2-Small': { 'config.json': MM2.config, 'model.safetensors': minimind2(JSON.parse(MM2.config)), 'tokenizer.json': read(ROOT, 'www', 'minimind', 'tokenizer.json'), 'README.md': '# MiniMind2-Small' },
  'test-org/llama-sharded': { 'config.json': LLAMA.config, ...shards(LLAMA.model), 'tokenizer.json': LLAMA.tokenizer },
  'test-org/llama-8-shards': { 'config.json': LLAMA.config, ...shards(LLAMA.model, 8), 'tokenizer.json': LLAMA.tokenizer },
  'test-org/pytorch-only': { 'config.json': MM2.config, 'pytorch_model.bin': Buffer.alloc(1024) },
  'test-org/no-cors': { 'config.json': LLAMA.config, 'model.safetensors': LLAMA.model },
  'test-org/tiny-gguf': { 'README.md': '# tiny', 'model.Q4_0.gguf': GGUF('llama_q4_0'), 'Q8_0/model.Q8_0.gguf': GGUF('llama_q8_0') },
  'test-org/unsized-gguf': { 'model.gguf': GGUF('llama_q4_0') },
};
const STORED = (file) => /\.(safetensors|bin|gguf)$/.test(file); // what the Hub keeps in its file store (LFS) and redirects to

// --- the local Hub ---

const CORS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': 'Content-Length, ETag, X-Repo-Commit, Location' };
const requests = []; // [host, method, path] of every request either server saw
// The file store's downloads of the 8-shard repo: how many are open now (asked for, and neither sent
// whole nor closed by the browser), and the most at once. The store sends those files slowly, as a
// big shard arrives, in 8 pieces 25 ms apart, so that a download the browser has not closed stays open.
const shardDownloads = { open: 0, most: 0 };

function listen(handler, tls) {
  const server = createServer(tls, (req, res) => {
    requests.push([handler.name, req.method, req.url]);
    handler(req, res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `https://127.0.0.1:${server.address().port}/` })));
}

let hub;
let store;
let site;
let browser;
let certs;

before(async () => {
  certs = mkdtempSync(join(tmpdir(), 'attnscope-hub-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-keyout', join(certs, 'key.pem'), '-out', join(certs, 'cert.pem')], { stdio: 'ignore' });
  const tls = { key: read(certs, 'key.pem'), cert: read(certs, 'cert.pem') };
  store = await listen(function store(req, res) {
    const [, repo1, repo2, ...path] = decodeURIComponent(new URL(req.url, 'https://x/').pathname).split('/').slice(1);
    const repo = `${repo1}/${repo2}`;
    const body = REPOS[repo]?.[path.join('/')];
    if (!body) return res.writeHead(404).end();
    // The unsized repo's store sends its file in chunks, without Content-Length.
    const length = repo === 'test-org/unsized-gguf' ? {} : { 'content-length': body.length };
    res.writeHead(200, { ...(repo === 'test-org/no-cors' ? {} : CORS), 'content-type': 'application/octet-stream', ...length });
    if (repo === 'test-org/llama-8-shards' && req.method === 'GET') {
      shardDownloads.open++;
      shardDownloads.most = Math.max(shardDownloads.most, shardDownloads.open);
      res.once('close', () => shardDownloads.open--);
      const piece = Math.ceil(body.length / 8);
      const send = (at) => (at + piece >= body.length ? res.end(body.subarray(at)) : res.write(body.subarray(at, at + piece), () => setTimeout(() => send(at + piece), 25)));
      return send(0);
    }
    res.end(req.method === 'HEAD' ? undefined : body);
  }, tls);
  hub = await listen(function hub(req, res) {
    const path = decodeURIComponent(new URL(req.url, 'https://x/').pathname);
    const api = path.match(/^\/api\/models\/([^/]+\/[^/]+)$/);
    const resolve = path.match(/^\/([^/]+\/[^/]+)\/resolve\/main\/(.+)$/);
    const repo = REPOS[(api ?? resolve)?.[1]];
    const json = (status, value) => res.writeHead(status, { ...CORS, 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (!repo) return json(401, { error: 'Repository not found' });
    if (api) return json(200, { id: api[1], siblings: Object.keys(repo).map((rfilename) => ({ rfilename })) });
    const file = resolve[2];
    if (!repo[file]) return json(404, { error: 'Entry not found' });
    // The Hub sends LFS files from its file store, by a redirect with a signed, expiring address.
    if (STORED(file)) return res.writeHead(302, { ...CORS, location: `${store.url}repos/${resolve[1]}/${file}?expires=1&signature=abc` }).end();
    res.writeHead(200, { ...CORS, 'content-length': Buffer.byteLength(repo[file]) }).end(repo[file]);
  }, tls);
  site = await startServer();
  browser = await launch({ webgpu: false });
});

after(async () => {
  await browser?.close();
  await site?.close();
  hub?.server.close();
  store?.server.close();
  rmSync(certs, { recursive: true, force: true });
});

// A page on the site with the local Hub as its Hub, in a context of its own that trusts the run's certificate.
async function hubPage(hash) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, ignoreHTTPSErrors: true, serviceWorkers: 'block' });
  const page = await context.newPage();
  page.consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && page.consoleErrors.push(m.text()));
  page.on('pageerror', (e) => page.consoleErrors.push(e.stack ?? String(e)));
  await page.goto(`${site.url}?hub=${encodeURIComponent(hub.url)}${hash}`);
  await page.waitForFunction(() => window.attnscope?.app?.source, null, { timeout: 60_000 });
  await settled(page);
  return page;
}

async function typeRepo(page, repo) {
  await page.click('.segment[data-source="own"]');
  await page.fill('#model-hub', repo);
  await page.click('.model-hub button[type="submit"]');
}

async function loaded(page, name) {
  await page.waitForFunction((n) => !window.attnscope.app.loading && window.attnscope.app.source?.name === n, name, { timeout: 120_000 });
  await settled(page);
}

async function refused(page) {
  await page.waitForFunction(() => !window.attnscope.app.loading && !document.querySelector('.model-error').hidden, null, { timeout: 60_000 });
  await settled(page);
  return page.locator('.model-error').innerText();
}

const source = (page) => page.evaluate(() => ({ source: window.attnscope.app.source, model: window.attnscope.app.state.model }));
const logits = (page) => page.evaluate(async () => Array.from(await window.attnscope.tensor('logits')));

test('a Hub repo id loads MiniMind2-Small from resolve/main/, its weights through the file store’s redirect, and computes PyTorch’s numbers; the link keeps the repo', async () => {
  const page = await hubPage(randomModel({ view: 'attention' }));
  requests.length = 0;
  await typeRepo(page, 'test-org/MiniMind2-Small');
  await loaded(page, 'MiniMind2-Small');
  const weights = REPOS['test-org/MiniMind2-Small']['model.safetensors'];
  const { source: meta, model } = await source(page);
  assert.deepEqual([meta.kind, meta.repo, meta.bytes, meta.dtype, meta.weight_count], ['hub', 'test-org/MiniMind2-Small', weights.length, 'BF16', 25_829_888]);
  assert.deepEqual(model, { kind: 'hub', repo: 'test-org/MiniMind2-Small' }, 'the link names the repo');
  const config = await page.evaluate(() => window.attnscope.app.model);
  assert.deepEqual([config.hidden_size, config.num_attention_heads, config.num_key_value_heads, config.head_dim, config.qk_norm], [512, 8, 2, 64, false]);
  // The listing first; then the three files at once, so in any order, each once.
  const asked = requests.map(([host, method, path]) => `${host} ${method} ${path}`);
  assert.equal(asked[0], 'hub GET /api/models/test-org/MiniMind2-Small', 'the listing first');
  assert.deepEqual(
    asked.slice(1).sort(),
    [
      'hub GET /test-org/MiniMind2-Small/resolve/main/config.json',
      'hub GET /test-org/MiniMind2-Small/resolve/main/model.safetensors',
      'hub GET /test-org/MiniMind2-Small/resolve/main/tokenizer.json',
      'store GET /repos/test-org/MiniMind2-Small/model.safetensors?expires=1&signature=abc',
    ],
    'resolve/main/ for each file, the weights from the file store',
  );
  assert.match(await page.locator('.model-info').innerText(), /MiniMind2-Small · from the Hugging Face Hub \(test-org\/MiniMind2-Small\) · 49\.\d+ MiB · BF16/);
  await assertComputesLikePyTorch(page, MM2);
  await screenshot(page, 'hub-loaded');
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  assert.match(await page.locator('.model-info').innerText(), /来自 Hugging Face Hub（test-org\/MiniMind2-Small）/);
  await screenshot(page, 'hub-loaded-zh');

  // The link opens the same repo in a fresh browser (nothing kept there): from the Hub again.
  const link = await page.evaluate(() => window.attnscope.link());
  const fresh = await hubPage(new URL(link).hash);
  await loaded(fresh, 'MiniMind2-Small');
  assert.deepEqual((await source(fresh)).model, { kind: 'hub', repo: 'test-org/MiniMind2-Small' });
  assert.deepEqual(page.consoleErrors, []);
  assert.deepEqual(fresh.consoleErrors, []);
  await fresh.context().close();
  await page.context().close();
});

test('a sharded repo is read shard by shard and joined into one checkpoint that computes PyTorch’s numbers', async () => {
  const page = await hubPage(randomModel({ view: 'attention' }));
  requests.length = 0;
  await typeRepo(page, 'test-org/llama-sharded');
  await loaded(page, 'llama-sharded');
  const files = REPOS['test-org/llama-sharded'];
  const stored = requests.filter(([host]) => host === 'store').map(([, , path]) => path.split('?')[0]);
  assert.deepEqual(stored, ['/repos/test-org/llama-sharded/model-00001-of-00002.safetensors', '/repos/test-org/llama-sharded/model-00002-of-00002.safetensors']);
  const { source: meta } = await source(page);
  // The joined file: one header for all tensors, then both shards' data, as many bytes as the original's data.
  const dataBytes = (b) => b.length - 8 - Number(b.readBigUInt64LE(0));
  assert.equal(dataBytes(files['model-00001-of-00002.safetensors']) + dataBytes(files['model-00002-of-00002.safetensors']), dataBytes(LLAMA.model));
  assert.ok(meta.bytes > dataBytes(LLAMA.model) && meta.dtype === 'F16', `${meta.bytes} bytes, ${meta.dtype}`);
  await assertComputesLikePyTorch(page, LLAMA);

  // Eight shards: at most 3 downloads are open at once (a browser holds at most 6 connections to one
  // host over HTTP/1.1, and opening every shard before reading any stalled at the seventh).
  Object.assign(shardDownloads, { open: 0, most: 0 });
  await page.fill('#model-hub', 'test-org/llama-8-shards');
  await page.click('.model-hub button[type="submit"]');
  await page.waitForFunction(() => !window.attnscope.app.loading && window.attnscope.app.source?.name === 'llama-8-shards', null, { timeout: 120_000 });
  await settled(page);
  assert.ok(shardDownloads.most <= 3, `${shardDownloads.most} downloads of the file store open at once`);
  assert.equal(new Set(requests.filter(([host, , path]) => host === 'store' && path.includes('llama-8-shards')).map(([, , path]) => path)).size, 8, 'every shard read');
  assert.equal((await source(page)).source.bytes, meta.bytes, 'the same file as joined from two shards');
  await assertComputesLikePyTorch(page, LLAMA);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a repo with only pytorch_model.bin, a file store without CORS and a repo that is not there are refused by name; the previous model still answers', async () => {
  const page = await hubPage(randomModel({ view: 'attention' }));
  const before = await logits(page);
  requests.length = 0;
  await typeRepo(page, 'test-org/pytorch-only');
  const pytorch = await refused(page);
  assert.match(pytorch, /test-org\/pytorch-only has its weights only as pytorch_model\.bin/);
  assert.ok(pytorch.includes('pip install torch safetensors'));
  assert.ok(pytorch.includes('import torch; from safetensors.torch import save_file\nsave_file({k: v.clone().contiguous() for k, v in torch.load("pytorch_model.bin", map_location="cpu").items()}, "model.safetensors")'), pytorch);
  assert.ok(!requests.some(([, , path]) => path.includes('pytorch_model.bin')), 'the .bin is never downloaded');
  await screenshot(page, 'hub-refused-pytorch');
  assert.deepEqual(await logits(page), before);

  await page.fill('#model-hub', 'test-org/no-cors');
  await page.click('.model-hub button[type="submit"]');
  assert.match(await refused(page), /could not read model\.safetensors from test-org\/no-cors: that site does not let other pages read its files/);
  assert.deepEqual(await logits(page), before);

  await page.fill('#model-hub', 'test-org/not-there');
  await page.click('.model-hub button[type="submit"]');
  assert.match(await refused(page), /Could not read test-org\/not-there from 127\.0\.0\.1:\d+: the server answered HTTP 401/);
  assert.deepEqual(await logits(page), before);
  assert.ok(page.consoleErrors.every((e) => /no-cors|not-there|401|CORS|net::ERR_FAILED/.test(e)), `only the refused repos log errors: ${page.consoleErrors}`);

  // Not a repo id (a URL, a path out of the repo): refused before anything is fetched.
  for (const typed of ['https://evil.example/x', 'a/../../api']) {
    const seen = requests.length;
    await page.fill('#model-hub', typed);
    await page.click('.model-hub button[type="submit"]');
    assert.ok((await refused(page)).includes(`“${typed}” is not a Hub repo id: it is written owner/name`), typed);
    assert.equal(requests.length, seen, `${typed}: nothing fetched`);
  }
  assert.deepEqual(await logits(page), before);

  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  await page.fill('#model-hub', 'test-org/pytorch-only');
  await page.click('.model-hub button[type="submit"]');
  assert.match(await refused(page), /test-org\/pytorch-only 的权重只有 pytorch_model\.bin 格式/);
  await screenshot(page, 'hub-refused-pytorch-zh');
  assert.deepEqual(await logits(page), before);
  await page.context().close();
});

test('a repo of GGUF files lists them to choose from; repo:file.gguf takes one from the file store and computes transformers’ logits; the link keeps the file; a store that does not say the size is refused by name', async () => {
  const page = await hubPage(randomModel({ view: 'attention' }));
  const before = await logits(page);
  requests.length = 0;
  await typeRepo(page, 'test-org/tiny-gguf');
  await page.waitForFunction(() => !window.attnscope.app.loading && document.querySelector('.model-error.model-choice'), null, { timeout: 60_000 });
  assert.match(await page.locator('.model-error').innerText(), /^test-org\/tiny-gguf holds its model as GGUF files \(2\)\. Choose one:/);
  assert.deepEqual(await page.locator('.gguf-file').allInnerTexts(), ['Q8_0/model.Q8_0.gguf', 'model.Q4_0.gguf']);
  assert.deepEqual(requests.map(([host, , path]) => `${host} ${path}`), ['hub /api/models/test-org/tiny-gguf'], 'only the listing is read before the reader chooses');
  assert.deepEqual(await logits(page), before);
  await screenshot(page, 'hub-gguf-choice');

  await page.click('.gguf-file >> text=model.Q4_0.gguf');
  await loaded(page, 'model.Q4_0');
  assert.equal(await page.inputValue('#model-hub'), 'test-org/tiny-gguf:model.Q4_0.gguf');
  const { source: meta, model } = await source(page);
  assert.deepEqual([meta.kind, meta.format, meta.repo, meta.file], ['hub', 'gguf', 'test-org/tiny-gguf', 'model.Q4_0.gguf']);
  assert.deepEqual(model, { kind: 'hub', repo: 'test-org/tiny-gguf', file: 'model.Q4_0.gguf' });
  assert.ok(requests.some(([host, , path]) => host === 'store' && path.startsWith('/repos/test-org/tiny-gguf/model.Q4_0.gguf?')), 'the file comes from the file store');
  assert.match(await page.locator('.model-info').innerText(), /from the Hugging Face Hub \(test-org\/tiny-gguf:model\.Q4_0\.gguf\) · 56\.13 KiB · Q4_0/);
  const reference = ggufReference('llama_q4_0');
  const ours = await page.evaluate(async (ids) => Array.from(await window.attnscope.tensor('logits', { ids, attention_mask: null })), reference.ids);
  const last = ours.slice(ours.length - reference.last.length);
  assertClose(WASM_VS_PYTORCH, 'llama_q4_0 from the Hub: logits, last row', last, reference.last);

  // A file in a folder of the repo, typed; its link opens it in a fresh browser.
  await page.fill('#model-hub', 'test-org/tiny-gguf:Q8_0/model.Q8_0.gguf');
  await page.click('.model-hub button[type="submit"]');
  await loaded(page, 'model.Q8_0');
  const fresh = await hubPage(new URL(await page.evaluate(() => window.attnscope.link())).hash);
  await loaded(fresh, 'model.Q8_0');
  assert.deepEqual((await source(fresh)).model, { kind: 'hub', repo: 'test-org/tiny-gguf', file: 'Q8_0/model.Q8_0.gguf' });
  await fresh.context().close();

  await page.fill('#model-hub', 'test-org/unsized-gguf:model.gguf');
  await page.click('.model-hub button[type="submit"]');
  assert.match(await refused(page), /test-org\/unsized-gguf:model\.gguf: the server did not say how long model\.gguf is \(Content-Length\)/);
  await page.fill('#model-hub', 'test-org/tiny-gguf:missing.gguf');
  await page.click('.model-hub button[type="submit"]');
  assert.match(await refused(page), /test-org\/tiny-gguf has no file missing\.gguf; its GGUF files are: Q8_0\/model\.Q8_0\.gguf, model\.Q4_0\.gguf\./);
  assert.equal((await source(page)).source.name, 'model.Q8_0');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

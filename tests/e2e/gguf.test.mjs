// llama.cpp's GGUF files in the page. SmolLM2-135M (www/models/smollm2/, fetched by ./build.sh build)
// chosen in the model panel gives transformers' indirect-object prediction and fills the head grid with
// its 30 × 9 heads; a tiny GGUF (tests/fixtures/gguf/llama_q4_0, tools/reference/make_gguf_fixtures.py)
// comes in alone through the file chooser and from a URL and computes transformers' logits (a Hub
// repo's GGUF files: tests/e2e/hub.test.mjs); a damaged
// one is refused by name in both languages while the model before it keeps running; a site built
// without SmolLM2 says so. SmolLM2 loads twice in all (CI's time), downloaded once and then read back
// from the browser on a second visit, whose page the later tests share, in order.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertClose, go, launch, screenshot, settled, startServer, WASM_VS_PYTORCH } from './helpers.mjs';
import { decode } from '../../www/state.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SMOLLM2 = join(ROOT, 'www', 'models', 'smollm2', 'SmolLM2-135M-Instruct.Q4_1.gguf');
const REFERENCE = JSON.parse(readFileSync(join(ROOT, 'tests', 'fixtures', 'smollm2', 'reference.json'), 'utf8'));
const TINY_DIR = join(ROOT, 'tests', 'fixtures', 'gguf', 'llama_q4_0');
const TINY = readFileSync(join(TINY_DIR, 'model.gguf'));
const TINY_IDS = JSON.parse(readFileSync(join(TINY_DIR, 'input.json'), 'utf8')).ids;

// transformers' logits for the tiny file's ids, [T, vocab] in f32, from its trace.safetensors.
function referenceLogits() {
  const bytes = readFileSync(join(TINY_DIR, 'trace.safetensors'));
  const n = Number(bytes.readBigUInt64LE(0));
  const [start, end] = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')).logits.data_offsets;
  const data = bytes.subarray(8 + n + start, 8 + n + end);
  return Array.from(new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length)));
}

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await launch({ webgpu: false });
  page = await freshPage('#lang=en');
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function freshPage(hash, { route = null } = {}) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  if (route) await context.route('**/*.gguf', route);
  const p = await context.newPage();
  p.consoleErrors = [];
  p.on('console', (m) => m.type() === 'error' && p.consoleErrors.push(m.text()));
  p.on('pageerror', (e) => p.consoleErrors.push(e.stack ?? String(e)));
  await p.goto(`${server.url}${hash}`);
  await p.waitForFunction(() => window.attnscope?.app?.source, null, { timeout: 60_000 });
  await settled(p);
  return p;
}

const app = (p) => p.evaluate(() => ({ source: window.attnscope.app.source, model: window.attnscope.app.model, state: window.attnscope.app.state }));
const logits = (p, override = {}) => p.evaluate(async (o) => Array.from(await window.attnscope.tensor('logits', o)), override);

async function loaded(p, test) {
  await p.waitForFunction(test, null, { timeout: 180_000 });
  await settled(p);
}

async function refused(p) {
  await p.waitForFunction(() => !window.attnscope.app.loading && !document.querySelector('.model-error').hidden, null, { timeout: 60_000 });
  await settled(p);
  return p.locator('.model-error').innerText();
}

async function chooseFiles(p, list) {
  await p.click('.segment[data-source="own"]');
  await p.setInputFiles('#model-files', list.map(([name, buffer]) => ({ name, mimeType: 'application/octet-stream', buffer })));
}

async function typeText(p, text) {
  await p.fill('#text', text);
  await p.waitForFunction((t) => window.attnscope.app.state.text === t, text);
  await settled(p);
}

test('SmolLM2 from the model panel: its download counted, “ Mary” at 0.92 as transformers predicts it, 30 × 9 heads, no BOS, named in the link and kept in the browser: the next visit downloads nothing', async (t) => {
  if (!existsSync(SMOLLM2)) return t.skip('www/models/smollm2 has no SmolLM2 (the build could not fetch it)');
  const size = readFileSync(SMOLLM2).length;
  const segment = () => page.locator('.segment[data-source="smollm2"]');
  assert.equal(await segment().innerText(), `SmolLM2-135M · English · ${Math.round(size / 1e6)} MB`, 'the entry says the file’s size');
  await page.evaluate(() => {
    window.progressTexts = [];
    new MutationObserver(() => window.progressTexts.push(document.querySelector('.model-progress-text').textContent)).observe(document.querySelector('.model-progress'), { subtree: true, childList: true, characterData: true });
  });
  await segment().click();
  await loaded(page, () => !window.attnscope.app.loading && window.attnscope.app.source?.kind === 'smollm2');
  const progress = await page.evaluate(() => window.progressTexts);
  assert.ok(progress.some((p) => /^SmolLM2-135M-Instruct\.Q4_1\.gguf: [\d.]+ (KiB|MiB) of 93\.81 MiB$/.test(p)), `the bar counts the file's bytes: ${progress.slice(0, 3)}`);
  const { source, model, state } = await app(page);
  assert.deepEqual([source.format, source.bytes, source.weight_count, model.num_hidden_layers, model.num_attention_heads, model.num_key_value_heads, model.vocab_size], ['gguf', size, 134_515_008, 30, 9, 3, 49_152]);
  assert.deepEqual(state.model, { kind: 'smollm2' });
  assert.match(await page.locator('.model-info').innerText(), /^Loaded: SmolLM2-135M · GGUF from this site · 93\.81 MiB · Q4_1/);
  assert.match(await page.locator('.model-smollm2').innerText(), /It knows English and little Chinese: for the tutorials’ Chinese sentences, keep the built-in model\./);

  // The indirect-object sentence, without BOS (the file names none it was trained with).
  const [ioi] = REFERENCE.prompts;
  await go(page, 'overview');
  await typeText(page, ioi.text);
  assert.deepEqual((await app(page)).state.tokens.ids, ioi.ids, 'the tokenizer from the file gives transformers’ ids');
  const top = page.locator('.ov-predict .ov-top');
  assert.equal(await top.locator('.ov-top-token').innerText(), '␣Mary');
  assert.ok(Math.abs(Number(await top.getAttribute('data-p')) - ioi.top10[0][1]) < 1e-3, `p = ${await top.getAttribute('data-p')} (transformers: ${ioi.top10[0][1]})`);
  assert.equal(await top.getAttribute('data-id'), String(ioi.top10[0][0]));
  assert.equal(await page.$eval('#bos', (box) => box.disabled), true, 'the BOS switch is greyed');
  assert.match(await page.locator('.bos-hint').innerText(), /This GGUF file does not start its text with a BOS token/);

  const link = await page.evaluate(() => window.attnscope.link());
  assert.deepEqual((await decode(new URL(link).hash)).state.model, { kind: 'smollm2' }, 'the link names SmolLM2');

  // Kept once it has run, in a slot of its own: the next visit reads it from here, not from the site.
  await page.waitForSelector('.model-smollm2-kept:not([hidden])');
  const kept = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const open = indexedDB.open('attnscope');
        open.onsuccess = () => {
          const get = open.result.transaction('models').objectStore('models').get('smollm2-checkpoint');
          get.onsuccess = () => resolve({ format: get.result?.format, bytes: get.result?.weights.byteLength, kind: get.result?.meta.kind });
        };
      }),
  );
  assert.deepEqual(kept, { format: 'gguf', bytes: size, kind: 'smollm2' });
  assert.match(await page.locator('.model-smollm2-kept').innerText(), /SmolLM2 is kept in this browser \(93\.81 MiB\): the next visit does not download it again\./);

  // The next visit (the same browser, the link) reads it from there: no download. Its page is the one
  // the next tests use, so that this is the only other SmolLM2 load of the file.
  const context = page.context();
  await page.close();
  const downloads = [];
  context.on('request', (r) => r.url().endsWith('.gguf') && r.method() === 'GET' && downloads.push(r.url()));
  page = await context.newPage();
  page.consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && page.consoleErrors.push(m.text()));
  await page.goto(link);
  await loaded(page, () => !window.attnscope.app.loading && window.attnscope.app.source?.kind === 'smollm2');
  assert.deepEqual(downloads, [], 'nothing downloaded on the second visit');
  assert.equal((await app(page)).source.restored, true);
  assert.match(await page.locator('.model-info').innerText(), /· kept in this browser$/);
  assert.equal(await page.locator('.ov-predict .ov-top .ov-top-token').innerText(), '␣Mary');
  await go(page, 'grid');
  assert.equal(await page.locator('.view-grid .thumb').count(), 30 * 9);
  await screenshot(page, 'gguf-smollm2-grid');

  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  assert.equal(await segment().innerText(), `SmolLM2-135M · 英文 · ${Math.round(size / 1e6)} MB`);
  assert.match(await page.locator('.model-smollm2').innerText(), /它懂英文，中文懂得很少：看教程里的中文句子，请继续用内置模型。/);
  await screenshot(page, 'gguf-smollm2-panel-zh');
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'en');
  assert.deepEqual(page.consoleErrors, []);
});

test('a .gguf file chosen alone, with no config.json, loads with the tokenizer in it, computes transformers’ logits and is kept for the next visit', async () => {
  await chooseFiles(page, [['model.gguf', TINY]]);
  await loaded(page, () => !window.attnscope.app.loading && window.attnscope.app.source?.files?.[0] === 'model.gguf');
  const { source, model, state } = await app(page);
  assert.deepEqual([source.kind, source.format, source.name, source.bytes], ['files', 'gguf', 'model', TINY.length]);
  assert.deepEqual(state.model, { kind: 'files' });
  assert.equal(model.vocab_size, 256);
  assert.match(await page.locator('.model-info').innerText(), /^Loaded: model · from your files \(model\.gguf\) · 56\.13 KiB · Q4_0, F32/);
  const ours = await logits(page, { ids: TINY_IDS, attention_mask: null });
  assertClose(WASM_VS_PYTORCH, 'llama_q4_0 from a file: logits', ours, referenceLogits());
  assert.ok((await app(page)).state.tokens.ids.length > 0, 'the page’s own text runs');
  // Kept as the reader's own model: a visit without a link opens it from the browser, weighed again first.
  await page.waitForSelector('.model-kept:not([hidden])');
  await page.goto(server.url);
  await loaded(page, () => !window.attnscope.app.loading && window.attnscope.app.source?.restored === true);
  assert.deepEqual([(await app(page)).source.format, (await app(page)).source.name], ['gguf', 'model']);
  assert.deepEqual(await logits(page, { ids: TINY_IDS, attention_mask: null }), ours);
});

test('a damaged GGUF file is refused by name in both languages, and the model before it keeps running', async () => {
  const before = await logits(page);
  const name = (await app(page)).source.name;
  await chooseFiles(page, [['cut.gguf', TINY.subarray(0, TINY.length / 2)]]);
  const cut = await refused(page);
  assert.match(cut, /The GGUF file is cut short or damaged: tensor \S+’s [\d,]+ bytes at offset [\d,]+ lie outside its [\d,]+ bytes of tensor data\./);
  assert.match(cut, /The previous model is still loaded\./);
  await screenshot(page, 'gguf-refused-cut');
  assert.equal((await app(page)).source.name, name);
  assert.deepEqual(await logits(page), before);

  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  const renamed = Buffer.from(TINY);
  renamed.write('GGUX', 0);
  await chooseFiles(page, [['renamed.gguf', renamed]]);
  assert.match(await refused(page), /这不是 GGUF 文件：它的开头不是 GGUF 的魔数“GGUF”。/);
  // Two .gguf files: which one is meant is asked, not guessed.
  await chooseFiles(page, [['a.gguf', TINY], ['b.gguf', TINY]]);
  assert.match(await refused(page), /有多个 \.gguf 文件（a\.gguf, b\.gguf）：请只选其中一个。/);
  await screenshot(page, 'gguf-refused-zh');
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'en');
  assert.equal((await app(page)).source.name, name);
  assert.deepEqual(await logits(page), before);
  await typeText(page, 'Still running.');
  assert.ok((await logits(page)).every(Number.isFinite), 'the model before still computes');
});

test('a URL to a .gguf file loads it, sized by what the server announces, and the link keeps the URL', async () => {
  await page.route('https://models.example/**', (route) =>
    route.fulfill({ status: 200, body: TINY, headers: { 'access-control-allow-origin': '*', 'content-length': String(TINY.length) } }),
  );
  const url = 'https://models.example/tiny/tiny.Q4_0.gguf';
  await page.click('.segment[data-source="own"]');
  await page.fill('#model-url', url);
  await page.click('.model-url button[type="submit"]');
  await loaded(page, () => !window.attnscope.app.loading && window.attnscope.app.source?.kind === 'url');
  const { source, state } = await app(page);
  assert.deepEqual([source.format, source.name, source.bytes, source.url], ['gguf', 'tiny.Q4_0', TINY.length, url]);
  assert.deepEqual(state.model, { kind: 'url', url });
  const ours = await logits(page, { ids: TINY_IDS, attention_mask: null });
  assertClose(WASM_VS_PYTORCH, 'llama_q4_0 from a URL: logits', ours, referenceLogits());
  await page.unroute('https://models.example/**');
});

test('a site without SmolLM2 says so before a click and after one, and the built-in model runs on', async () => {
  const missing = await freshPage('#lang=en', { route: (route) => route.fulfill({ status: 404, body: 'not found' }) });
  const segment = () => missing.locator('.segment[data-source="smollm2"]');
  assert.equal(await segment().innerText(), 'SmolLM2-135M · English · 98 MB');
  await segment().click();
  assert.match(await missing.locator('.model-smollm2').innerText(), /SmolLM2 is not on this site: the build that made the site could not download it/);
  assert.match(await refused(missing), /SmolLM2 is not on this site/);
  assert.equal((await app(missing)).source.kind, 'builtin');
  assert.ok((await logits(missing)).every(Number.isFinite));
  await missing.context().close();
});

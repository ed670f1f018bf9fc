// Loading a model: the page opens on the built-in one with a sample sentence; the reader's own
// checkpoint comes in through the file chooser (files or a folder), a drop of files on the page, or
// a folder URL, with its progress in bytes; it is kept in the browser for the next visit until
// forgotten. Every broken input is refused with its own message while the previous model runs on.
//
// The checkpoints are tests/fixtures/checkpoints (tools/reference/make_checkpoints.py): MiniMind-3
// layout in bf16 and Llama layout in f16, with PyTorch's layer-0 probs and last logits for one
// sentence. Broken variants are made here from them with a small safetensors reader and writer.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { assertComputesLikePyTorch, go, launch, randomModel, screenshot, settled, startServer } from './helpers.mjs';
import { FORMAT1_DEFAULTS } from '../../www/state.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURES = join(ROOT, 'tests', 'fixtures', 'checkpoints');
const BUILTIN = join(ROOT, 'www', 'models', 'builtin');

const read = (path) => readFileSync(path);
const fixture = (name) => ({
  dir: join(FIXTURES, name),
  config: read(join(FIXTURES, name, 'config.json')),
  model: read(join(FIXTURES, name, 'model.safetensors')),
  tokenizer: read(join(FIXTURES, name, 'tokenizer.json')),
  expected: JSON.parse(read(join(FIXTURES, name, 'expected.json'))),
});
const MINIMIND = fixture('minimind3_bf16');
const LLAMA = fixture('llama_f16');

const file = (name, buffer, mimeType = 'application/octet-stream') => ({ name, mimeType, buffer: Buffer.from(buffer) });
const filesOf = (ckpt, { config = ckpt.config, model = ckpt.model, tokenizer = ckpt.tokenizer } = {}) =>
  [file('config.json', config, 'application/json'), model && file('model.safetensors', model), tokenizer && file('tokenizer.json', tokenizer, 'application/json')].filter(Boolean);

// config.json with some fields changed; tokenizer.json with the token "a" given `id`.
const withConfig = (config, fields) => JSON.stringify({ ...JSON.parse(config), ...fields });
const withVocabId = (tokenizer, id) => {
  const json = JSON.parse(tokenizer);
  json.model.vocab.a = id;
  return Buffer.from(JSON.stringify(json));
};

// --- safetensors, as far as the broken cases need it ---

function parse(bytes) {
  const n = Number(bytes.readBigUInt64LE(0));
  return { header: JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')), data: bytes.subarray(8 + n) };
}

function write(header, data) {
  const json = Buffer.from(JSON.stringify(header).padEnd(Math.ceil(JSON.stringify(header).length / 8) * 8, ' '));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([length, json, data]);
}

// The checkpoint without one tensor: the others keep their bytes, at new offsets.
function without(bytes, name) {
  const { header, data } = parse(bytes);
  const kept = Object.entries(header).filter(([key]) => key !== name && key !== '__metadata__');
  kept.sort(([, a], [, b]) => a.data_offsets[0] - b.data_offsets[0]);
  const next = { __metadata__: header.__metadata__ };
  const parts = [];
  let at = 0;
  for (const [key, info] of kept) {
    const part = data.subarray(...info.data_offsets);
    next[key] = { ...info, data_offsets: [at, at + part.length] };
    parts.push(part);
    at += part.length;
  }
  return write(next, Buffer.concat(parts));
}

// The same bytes under another shape of the same size.
function reshaped(bytes, name, shape) {
  const { header, data } = parse(bytes);
  header[name] = { ...header[name], shape };
  return write(header, data);
}

// One tensor stored as F32, every entry `value` (the others keep their dtype and bytes).
function filled(bytes, name, value) {
  const { header, data } = parse(bytes);
  const count = header[name].shape.reduce((a, b) => a * b, 1);
  const values = Buffer.alloc(count * 4);
  for (let i = 0; i < count; i++) values.writeFloatLE(value, i * 4);
  const kept = without(bytes, name);
  const rest = parse(kept);
  rest.header[name] = { dtype: 'F32', shape: header[name].shape, data_offsets: [rest.data.length, rest.data.length + values.length] };
  return write(rest.header, Buffer.concat([rest.data, values]));
}

// --- the page ---

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

// A page in a context of its own (its own IndexedDB), recording console errors; `base`: the site.
async function freshPage(hash = '', context = null, base = server.url) {
  const ctx = context ?? (await browser.newContext({ viewport: { width: 1400, height: 1000 } }));
  const page = await ctx.newPage();
  page.consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && page.consoleErrors.push(m.text()));
  page.on('pageerror', (e) => page.consoleErrors.push(e.stack ?? String(e)));
  await page.goto(`${base}${hash}`);
  await page.waitForFunction(() => window.attnscope?.app?.source, null, { timeout: 60_000 });
  await settled(page);
  return page;
}

const app = (page) => page.evaluate(() => ({ source: window.attnscope.app.source, model: window.attnscope.app.model, state: window.attnscope.app.state }));

// Waits for the model named `name` to be loaded and run.
async function loaded(page, name) {
  await page.waitForFunction((n) => !window.attnscope.app.loading && window.attnscope.app.source?.name === n, name, { timeout: 60_000 });
  await settled(page);
}

// Waits for a load to be refused; returns what the model panel says.
async function refused(page) {
  await page.waitForFunction(() => !window.attnscope.app.loading && !document.querySelector('.model-error').hidden, null, { timeout: 60_000 });
  await settled(page);
  return page.locator('.model-error').innerText();
}

async function chooseFiles(page, files) {
  await page.click('.segment[data-source="own"]');
  await page.setInputFiles('#model-files', files);
}

// A drop of files on the drop zone, as a browser makes it: a DataTransfer holding File objects.
async function dropFiles(page, files) {
  await page.click('.segment[data-source="own"]');
  const payload = files.map((f) => ({ name: f.name, type: f.mimeType, bytes: f.buffer.toString('base64') }));
  await page.evaluate((list) => {
    const transfer = new DataTransfer();
    for (const f of list) transfer.items.add(new File([Uint8Array.from(atob(f.bytes), (c) => c.charCodeAt(0))], f.name, { type: f.type }));
    const zone = document.querySelector('.drop-zone');
    zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, payload);
}

const tensor = (page, name) => page.evaluate(async (n) => Array.from(await window.attnscope.tensor(n)), name);

// The model still runs: a fresh run of a changed text gives finite probs.
async function assertStillRuns(page, name) {
  assert.equal((await app(page)).source.name, name, 'the previous model is still the one loaded');
  await page.fill('#text', `Still running ${Math.random()}`);
  await page.waitForFunction(() => window.attnscope.app.state.text.startsWith('Still running'));
  await settled(page);
  const probs = await tensor(page, 'layers.0.attn.probs');
  assert.ok(probs.length > 0 && probs.every(Number.isFinite), 'the previous model computes');
}

// The pattern a sample names, measured here on the probs [nH, T, T] of head h for the token ids: over
// the query rows with at least two tokens before them, the mean weight on the previous token, on the
// first one (the sink) or on the row's own token; for induction and duplicate-token, over the rows
// whose token occurred exactly once before, at j <= i - 2 (on a sentence written twice, its second
// copy), the mean weight on the token after that occurrence (j + 1) or on it (j).
function patternScore(pattern, probs, ids, h) {
  const T = ids.length;
  const p = (i, j) => probs[(h * T + i) * T + j];
  const rows = [];
  if (pattern === 'induction' || pattern === 'duplicate-token') {
    for (let i = 0; i < T; i++) {
      const earlier = ids.slice(0, i).flatMap((id, j) => (id === ids[i] ? [j] : []));
      if (earlier.length === 1 && i - earlier[0] >= 2) rows.push(p(i, earlier[0] + (pattern === 'induction' ? 1 : 0)));
    }
  } else {
    const key = { 'previous-token': (i) => i - 1, 'first-token': () => 0, 'current-token': (i) => i }[pattern];
    for (let i = 2; i < T; i++) rows.push(p(i, key(i)));
  }
  assert.ok(rows.length > 0, `${pattern}: the sentence has rows to measure`);
  return rows.reduce((a, b) => a + b, 0) / rows.length;
}

// The head selects of the attention map: what is picked in the layer and head <select>s.
const pickedHead = (page) => page.$$eval('.toolbar select', (selects) => selects.slice(0, 2).map((s) => Number(s.value)));

test('a visit without a link opens the built-in model on a sample sentence; each sample names a pattern and a head, and one click shows that head doing it', async (t) => {
  if (!existsSync(join(BUILTIN, 'config.json'))) return t.skip('www/models/builtin is not there yet');
  const samples = JSON.parse(read(join(BUILTIN, 'samples.json')));
  const page = await freshPage();
  const { source, state, model } = await app(page);
  assert.equal(state.model.kind, 'builtin');
  assert.equal(source.kind, 'builtin');
  assert.equal(source.dtype, 'F16');
  assert.equal(model.hidden_size, JSON.parse(read(join(BUILTIN, 'config.json'))).hidden_size);
  assert.equal(state.text, samples.en[0].text);
  assert.match(await page.locator('.model-info').innerText(), /Tiny MiniMind · .*F16/);
  for (const lang of ['en', 'zh']) {
    const tags = await page.locator(`.sample[data-lang="${lang}"] .sample-tag`).allInnerTexts();
    assert.deepEqual(tags, samples[lang].map((s) => `${s.pattern} · L${s.layer}H${s.head}`), `the ${lang} buttons name their pattern and head`);
  }

  // Each sample: the text, the attention map of its head, and that head's weights show the pattern.
  for (const lang of ['en', 'zh']) {
    for (const [n, s] of samples[lang].entries()) {
      await page.locator(`.sample[data-lang="${lang}"]`).nth(n).click();
      await page.waitForFunction(({ text, layer, head }) => {
        const now = window.attnscope.app.state;
        return now.text === text && now.view === 'attention' && now.layer === layer && now.head === head && location.hash.startsWith('#s3.');
      }, s);
      await settled(page);
      const shown = await app(page);
      assert.equal(await page.inputValue('#text'), s.text);
      assert.deepEqual([shown.state.view, shown.state.layer, shown.state.head], ['attention', s.layer, s.head], `${s.text}: the attention map of L${s.layer}H${s.head}`);
      assert.deepEqual(await pickedHead(page), [s.layer, s.head], 'the map’s layer and head selects show that head');
      const ids = shown.state.tokens.ids;
      assert.equal(ids[0], JSON.parse(read(join(BUILTIN, 'config.json'))).bos_token_id, 'BOS first, as head_stats.py scored the sample');
      const probs = await tensor(page, `layers.${s.layer}.attn.probs`);
      assert.equal(probs.length, model.num_attention_heads * ids.length * ids.length);
      const score = patternScore(s.pattern, probs, ids, s.head);
      assert.ok(score >= 0.3, `${lang} "${s.text}": L${s.layer}H${s.head} puts ${score.toFixed(3)} (< 0.3) where a ${s.pattern} head looks`);
      if (lang === 'en' && n === 0) await screenshot(page, 'samples-en');
    }
  }
  assert.ok((await app(page)).state.tokens.ids.length > 3, 'the Chinese sample is tokenized');
  await screenshot(page, 'checkpoint-builtin');
  // The page opens on this model, so every view must draw it (the GQA view varies its own config).
  for (const view of ['attention', 'grid', 'masks', 'lines', 'qk', 'rope', 'scale', 'gqa', 'decode', 'flash', 'ffn', 'output', 'stepper']) {
    await go(page, view);
    assert.equal(await page.evaluate(() => window.attnscope.app.phase), 'ready', `${view} draws the built-in model`);
  }
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  await settled(page);
  assert.match(await page.locator('.model-info').innerText(), /已加载：\s*内置 MiniMind · .*F16/);
  assert.equal(await page.locator('.segment[data-source="own"]').innerText(), '自定义模型');
  const zhRoles = { 'previous-token': '看前一个 token', 'first-token': '看首个 token', 'current-token': '看自己', induction: '归纳', 'duplicate-token': '同词回看' };
  const zhTags = await page.locator('.sample[data-lang="zh"] .sample-tag').allInnerTexts();
  assert.equal(await page.locator('.sample').first().getAttribute('data-lang'), 'zh', 'the Chinese sentences first on the Chinese page');
  assert.deepEqual(zhTags, samples.zh.map((s) => `${zhRoles[s.pattern]} · 层 ${s.layer} 头 ${s.head}`), 'the tags in Chinese');
  assert.match(await page.locator('.sample[data-lang="zh"]').first().getAttribute('title'), new RegExp(`^${samples.zh[0].text}\\n层 \\d+ 的头 \\d+（.+）。在它的注意力图里，.+点一下就用这句话运行`));
  await screenshot(page, 'checkpoint-builtin-zh');
  await page.locator('.sample[data-lang="zh"]').first().click();
  await page.waitForFunction((text) => window.attnscope.app.state.text === text && window.attnscope.app.state.view === 'attention', samples.zh[0].text);
  await settled(page);
  await screenshot(page, 'samples-zh');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

// A second choice made while the first is still being built is the one that stays: Random, then
// Built-in at once, ends on the built-in model (the second click was dropped as "already loaded").
test('Random then Built-in in quick succession ends on the built-in model', async () => {
  const page = await freshPage('#view=overview');
  await settled(page);
  for (const gap of [0, 60]) {
    await page.locator('.model-sources button', { hasText: 'Random' }).click();
    if (gap) await page.waitForTimeout(gap);
    await page.locator('.model-sources button', { hasText: 'Built-in' }).click();
    await page.waitForFunction(() => window.attnscope.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin' && !window.attnscope.app.loading, null, { timeout: 60_000 });
    await settled(page);
    await page.waitForTimeout(300);
    const { model, source } = await page.evaluate(() => ({ model: window.attnscope.getState().model, source: window.attnscope.app.source.kind }));
    assert.deepEqual([model, source], [{ kind: 'builtin' }, 'builtin'], `after a ${gap} ms gap`);
    assert.match(await page.locator('.model-info').innerText(), /Tiny MiniMind/);
  }
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a samples.json that does not fit the model hides the samples, quietly', async () => {
  // No service worker: from the second page on it would answer samples.json from its own copy, past
  // the route that replaces it.
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, serviceWorkers: 'block' });
  const broken = [
    ['plain strings (the old format)', { en: ['To be, or not to be.'], zh: [] }],
    ['a head the model lacks', { en: [{ text: 'The cat.', pattern: 'previous-token', layer: 3, head: 99 }], zh: [] }],
    ['an unknown pattern', { en: [{ text: 'The cat.', pattern: 'sink', layer: 0, head: 0 }], zh: [] }],
    ['not JSON', '{"en": ['],
  ];
  for (const [what, body] of broken) {
    await context.route('**/models/builtin/samples.json', (route) => route.fulfill({ contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) }));
    const page = await freshPage('', context);
    assert.equal(await page.locator('.samples').isHidden(), true, `${what}: no samples shown`);
    const { state } = await app(page);
    assert.equal(state.text, FORMAT1_DEFAULTS.text, `${what}: the page opens on its own sentence`);
    assert.equal((await app(page)).source.kind, 'builtin');
    assert.deepEqual(page.consoleErrors, [], what);
    await page.close();
    await context.unroute('**/models/builtin/samples.json');
  }
  await context.close();
});

test('own checkpoints: chosen files (MiniMind-3, bf16) and dropped files (Llama, f16) compute PyTorch’s numbers; broken ones are refused by name', async () => {
  const page = await freshPage('#view=attention');
  await page.evaluate(() => {
    window.progressTexts = [];
    new MutationObserver(() => window.progressTexts.push(document.querySelector('.model-progress-text').textContent)).observe(document.querySelector('.model-progress'), {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });

  await chooseFiles(page, filesOf(MINIMIND));
  await loaded(page, 'minimind');
  let { source, model } = await app(page);
  assert.deepEqual([source.kind, source.dtype, source.files], ['files', 'BF16', ['config.json', 'model.safetensors', 'tokenizer.json']]);
  assert.equal(model.qk_norm, true);
  assert.match(await page.locator('.model-info').innerText(), /minimind.*from your files.*BF16/);
  const progress = await page.evaluate(() => window.progressTexts);
  const size = `${+(MINIMIND.model.length / 1024).toPrecision(4)} KiB`;
  assert.ok(progress.some((text) => text.includes(`${size} of ${size}`)), `the progress bar counted the bytes: ${progress.join(' | ')}`);
  await assertComputesLikePyTorch(page, MINIMIND);
  await screenshot(page, 'checkpoint-files-minimind3-bf16');
  // A link cannot carry files: copying one says so, and how to share the model.
  await page.click('#share-link');
  await page.waitForFunction(() => /a link cannot carry/.test(document.querySelector('.share').textContent));

  await dropFiles(page, filesOf(LLAMA));
  await loaded(page, 'llama');
  ({ source, model } = await app(page));
  assert.deepEqual([source.kind, source.dtype], ['files', 'F16']);
  assert.equal(model.qk_norm, false, 'model_type llama: no Q/K norm');
  assert.equal(model.tie_word_embeddings, false);
  await assertComputesLikePyTorch(page, LLAMA);
  await screenshot(page, 'checkpoint-drop-llama-f16');

  // A chosen folder is read whole; its other files (expected.json) are left alone.
  await page.setInputFiles('#model-folder', LLAMA.dir);
  await loaded(page, 'llama_f16');
  assert.deepEqual((await app(page)).source.files, ['config.json', 'model.safetensors', 'tokenizer.json']);
  await assertComputesLikePyTorch(page, LLAMA);

  const q0 = 'model.layers.0.self_attn.q_proj.weight';
  // A small tensor: without it the file is still as large as the config's weights need.
  const NORM_1 = 'model.layers.1.post_attention_layernorm.weight';
  const broken = [
    { name: 'truncated', files: filesOf(LLAMA, { model: LLAMA.model.subarray(0, LLAMA.model.length - 1000) }), says: /cut short/ },
    { name: 'bad-header', files: filesOf(LLAMA, { model: Buffer.concat([Buffer.from([40, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('{"this is": not a safetensors header}!!!'), LLAMA.model.subarray(48)]) }), says: /not a readable safetensors file: its header is not valid JSON \(it goes wrong at line 1, column 14 of the header\)/ },
    { name: 'missing-tensor', files: filesOf(LLAMA, { model: without(LLAMA.model, NORM_1) }), says: /has no tensor model\.layers\.1\.post_attention_layernorm\.weight \(its shape should be \[32\]\)/ },
    { name: 'misshaped-tensor', files: filesOf(LLAMA, { model: reshaped(LLAMA.model, q0, [16, 64]) }), says: /q_proj\.weight has shape \[16, 64\]; config\.json asks for \[32, 32\]/ },
    { name: 'config-mismatch', files: filesOf(LLAMA, { config: withConfig(LLAMA.config, { intermediate_size: 60 }) }), says: /gate_proj\.weight has shape \[64, 32\]; config\.json asks for \[60, 32\]/ },
    { name: 'config-not-json', files: filesOf(LLAMA, { config: '{"hidden_size": 32,' }), says: /config\.json is not valid JSON: it ends at line 1, column 19, before its JSON is complete \(was the file cut short\?\)\./ },
    { name: 'config-stray-comma', files: filesOf(LLAMA, { config: '{\n  "hidden_size": 32,,\n}' }), says: /config\.json is not valid JSON: it goes wrong at line 2, column 21\./ },
    // Python's json.dump writes NaN, which JSON does not have; a number in quotes is said how to write.
    { name: 'config-nan', files: filesOf(LLAMA, { config: '{"hidden_size": 32, "rope_theta": NaN}' }), says: /config\.json is not valid JSON: NaN at line 1, column 35 is not a JSON number \(Python’s json\.dump writes it/ },
    { name: 'config-quoted', files: filesOf(LLAMA, { config: '{"hidden_size": "32"}' }), says: /hidden_size must be a whole number \(a count, such as 8\), not "32"\. Write it without the quotes: 32\./ },
    { name: 'config-flag-not-bool', files: filesOf(LLAMA, { config: withConfig(LLAMA.config, { tie_word_embeddings: 'no' }) }), says: /config\.json: tie_word_embeddings must be true or false, not "no"\./ },
    { name: 'too-big', files: filesOf(LLAMA, { config: JSON.stringify({ hidden_size: 8192, num_hidden_layers: 64, num_attention_heads: 64, num_key_value_heads: 8, vocab_size: 262144 }) }), says: /over the budget/ },
    { name: 'no-weights', files: filesOf(LLAMA, { model: null }), says: /Missing: model\.safetensors/ },
    { name: 'tokenizer-too-big', files: filesOf(LLAMA, { tokenizer: null }), says: /tokenizer\.json has 6,400 tokens, but the model’s vocabulary \(vocab_size in config\.json\) has only 256\. \(The checkpoint has no tokenizer\.json, so MiniMind’s was tried\.\)/ },
    { name: 'tokenizer-not-json', files: filesOf(LLAMA, { tokenizer: Buffer.from('{"version": ') }), says: /tokenizer\.json is not valid JSON: it ends at line 1, column 12, before its JSON is complete/ },
    { name: 'tokenizer-not-a-tokenizer', files: filesOf(LLAMA, { tokenizer: Buffer.from('{"version": "1.0"}') }), says: /tokenizer\.json is JSON, but not a tokenizer attnscope can read \(the parser says: .+\)\./ },
    // One vocabulary entry with a huge id (issue 12): refused by its size before 400 million pieces are built.
    { name: 'tokenizer-huge-id', files: filesOf(LLAMA, { tokenizer: withVocabId(LLAMA.tokenizer, 400000000) }), says: /tokenizer\.json gives one of its \d+ tokens the id 400,000,000, but the model’s vocabulary \(vocab_size in config\.json\) has only 256 ids, 0 to 255\./ },
    { name: 'tokenizer-id-u32-max', files: filesOf(LLAMA, { tokenizer: withVocabId(LLAMA.tokenizer, 4294967295) }), says: /tokenizer\.json gives one of its \d+ tokens the id 4,294,967,295, but the model’s vocabulary \(vocab_size in config\.json\) has only 256 ids, 0 to 255\./ },
    { name: 'moe', files: filesOf(LLAMA, { config: withConfig(LLAMA.config, { use_moe: true }) }), says: /model\.safetensors is [0-9.]+ KiB, but this config’s weights need at least [0-9.]+ KiB even in f16 or bf16: the file is cut short, or config\.json belongs to another model/ },
    { name: 'gelu', files: filesOf(LLAMA, { config: withConfig(LLAMA.config, { hidden_act: 'gelu' }) }), says: /config\.json: hidden_act is "gelu", but attnscope’s FFN runs silu \(SwiGLU\) only/ },
    // Past the size such a file can be: refused before it is read (a 700 MB one froze the tab).
    { name: 'config-huge', files: filesOf(LLAMA, { config: withConfig(LLAMA.config, { padding: 'x'.repeat(1_100_000) }) }), says: /config\.json is 1,1\d\d,\d\d\d bytes, more than the 1,048,576 bytes such a file can be/ },
    { name: 'eps-zero-in-f32', files: filesOf(LLAMA, { config: withConfig(LLAMA.config, { rms_norm_eps: 1e-50 }) }), says: /rms_norm_eps 1e-50 is 0 in f32, the precision the model computes in/ },
  ];
  for (const bad of broken) {
    await page.evaluate(() => {
      window.progressTexts = [];
    });
    await (bad.name === 'truncated' ? dropFiles : chooseFiles)(page, bad.files);
    const said = await refused(page);
    assert.match(said, bad.says, `${bad.name}: ${said}`);
    assert.match(said, /previous model is still loaded/);
    // The refusal is brought into sight, wherever the page was scrolled when the file came.
    const box = await page.locator('.model-error').boundingBox();
    const height = await page.evaluate(() => innerHeight);
    assert.ok(box.y >= 0 && box.y < height, `${bad.name}: the message is on screen (top ${box.y} of ${height})`);
    await page.evaluate(() => scrollTo(0, 0));
    if (['too-big', 'config-mismatch', 'misshaped-tensor', 'missing-tensor'].includes(bad.name)) {
      const texts = await page.evaluate(() => window.progressTexts);
      assert.ok(!texts.some((text) => /model\.safetensors: .* of /.test(text)), `${bad.name}: refused before the weights were read (${texts.join(' | ')})`);
    }
    if (['truncated', 'missing-tensor', 'too-big', 'tokenizer-too-big', 'tokenizer-huge-id', 'moe'].includes(bad.name)) await screenshot(page, `checkpoint-refused-${bad.name}`);
    await assertStillRuns(page, 'llama_f16');
  }
  // Finite weights whose arithmetic overflows f32 (a final norm of 3e38): the run is refused, naming
  // where, and no view draws NaN or zeros in its place.
  await chooseFiles(page, filesOf(LLAMA, { model: filled(LLAMA.model, 'model.norm.weight', 3e38) }));
  await page.waitForSelector('#view .message-error', { timeout: 60_000 });
  const overflow = await page.locator('#view .message-error').innerText();
  assert.match(overflow, /^This run cannot be shown/);
  assert.match(overflow, /The numbers left f32’s range in logits \(it holds (-?inf|NaN)\)/);
  assert.doesNotMatch(await page.locator('#view').innerText(), /NaN ?%/);
  assert.equal(await page.locator('#view canvas, #view .bar-row').count(), 0, 'nothing is drawn from the run');
  await screenshot(page, 'checkpoint-refused-overflow');
  // A checkpoint that loads but cannot run is not kept in this browser: a reload brings back the
  // last one that ran, not this one broken on every visit.
  await page.reload();
  await page.waitForFunction(() => window.attnscope?.app?.source?.restored && !window.attnscope.app.loading, null, { timeout: 60_000 });
  await settled(page);
  assert.equal(await page.locator('#view .message-error').count(), 0, 'the kept checkpoint runs');
  assert.ok(await page.locator('#view canvas, #view .bar-row, #view .ov-block').count() > 0);
  // Finite weights that flatten every logit (an embedding of 3e38: each RMSNorm's mean square is ∞, so
  // the norms give 0 and so do the logits), as MiniMind's own code computes them: the candidates tie
  // exactly, and the page says so rather than calling the first of them the most likely.
  await page.evaluate(() => window.attnscope.setState({ view: 'output' }));
  await chooseFiles(page, filesOf(LLAMA, { model: filled(LLAMA.model, 'model.embed_tokens.weight', 3e38) }));
  await page.waitForSelector('#view [data-note="tie"]', { timeout: 60_000 });
  assert.match(await page.locator('#view [data-note="tie"]').innerText(), /^Every candidate here ties exactly \([0-9.]+% each\): the model prefers no token at all/);
  await page.setInputFiles('#model-folder', LLAMA.dir);
  await loaded(page, 'llama_f16');
  assert.equal(await page.locator('#view [data-note="tie"]').count(), 0, 'a real model’s candidates do not tie');
  // The core's refusals are said in the reader's language (src/lib.rs `Said`, www/page/error_text.js),
  // with sizes in the page's own units: not an English sentence on the Chinese page.
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  const inChinese = [
    { name: 'moe', files: filesOf(LLAMA, { config: withConfig(LLAMA.config, { use_moe: true }) }), says: /model\.safetensors 只有 [0-9.]+ KiB，而按 config\.json，这个模型的权重即使用 f16 或 bf16 存储也至少需要 [0-9.]+ KiB/ },
    { name: 'missing-tensor', files: filesOf(LLAMA, { model: without(LLAMA.model, NORM_1) }), says: /检查点里缺少张量 model\.layers\.1\.post_attention_layernorm\.weight（它的形状应为 \[32\]）/ },
    { name: 'bad-header', files: broken[1].files, says: /这个检查点不是可读的 safetensors 文件：它的文件头不是有效的 JSON（文件头第 1 行第 14 列处出错）。/ },
    { name: 'tokenizer-too-big', files: filesOf(LLAMA, { tokenizer: null }), says: /^[^]*tokenizer\.json 有 6400 个 token，而模型的词表（config\.json 中的 vocab_size）只有 256 个。（这个检查点没有自带 tokenizer\.json，所以试用了 MiniMind 的分词器。）/ },
    { name: 'gelu', files: broken.find((b) => b.name === 'gelu').files, says: /config\.json：hidden_act 是 "gelu"，而 attnscope 的 FFN 只支持 silu（SwiGLU）。/ },
    // A file that is not JSON is placed by line and column, not in the JSON parser's English.
    { name: 'config-not-json', files: broken.find((b) => b.name === 'config-not-json').files, says: /config\.json 不是有效的 JSON：文件在第 1 行第 19 列就结束了，JSON 还没写完（文件是不是被截断了？）。/ },
    { name: 'tokenizer-stray', files: filesOf(LLAMA, { tokenizer: Buffer.from('{"version": "1.0" x}') }), says: /tokenizer\.json 不是有效的 JSON：第 1 行第 19 列处出错。/ },
  ];
  for (const bad of inChinese) {
    await chooseFiles(page, bad.files);
    const said = await refused(page);
    assert.match(said, bad.says, `${bad.name} in Chinese: ${said}`);
    assert.doesNotMatch(said, /bad weights|bad config|need at least|missing tensor|not a readable|tokenizer:|was tried|but the|EOF|expected|parsing/, `${bad.name}: no English left`);
    if (bad.name === 'moe') await screenshot(page, 'checkpoint-refused-zh');
  }
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a model that loads but cannot run the text says so where it was chosen; a refused load leaves no progress in the top bar', async () => {
  const page = await freshPage('#view=attention&lang=en');
  // Four positions for a sentence of more: the files load, the run is refused.
  await chooseFiles(page, filesOf(MINIMIND, { config: withConfig(MINIMIND.config, { max_position_embeddings: 4 }) }));
  await loaded(page, 'minimind');
  assert.equal(await page.evaluate(() => window.attnscope.app.phase), 'error');
  assert.match(await page.locator('.model-note').innerText(), /^Loaded, but it cannot run this text: the reason is at the top of the view\.$/);
  const box = await page.locator('.view .message-error').boundingBox();
  assert.ok(box && box.y >= 0 && box.y + box.height <= 1000, `the view's message is in sight: ${JSON.stringify(box)}`);
  assert.match(await page.locator('.view .message-error').innerText(), /max_position_embeddings \(4\)/);
  assert.doesNotMatch(await page.locator('#status').innerText(), /Your own/);
  // A tokenizer.json that is no tokenizer is refused: the top bar keeps no "Your own · x / y".
  await chooseFiles(page, filesOf(MINIMIND, { tokenizer: Buffer.from('{}') }));
  assert.match(await refused(page), /not a tokenizer attnscope can read/);
  assert.doesNotMatch(await page.locator('#status').innerText(), /Your own/);
  // A text short enough runs, and the panel's note goes.
  await page.fill('#text', 'Hi');
  await page.waitForFunction(() => window.attnscope.app.phase === 'ready', null, { timeout: 60_000 });
  await settled(page);
  assert.equal(await page.locator('.model-note').isVisible(), false);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a folder URL loads with the bytes counted, its tokenizer read while the weights download; a site without CORS is refused with the reason', async () => {
  const page = await freshPage('#view=attention');
  // What the page asks of its worker, in order (worker_client.js posts each call).
  await page.evaluate(() => {
    window.typesPosted = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (message, transfer) {
      if (message?.type) window.typesPosted.push(message.type);
      return post.call(this, message, transfer);
    };
  });
  const served = { 'config.json': MINIMIND.config, 'model.safetensors': MINIMIND.model, 'tokenizer.json': MINIMIND.tokenizer };
  // The same folder with a tokenizer.json that is JSON but no tokenizer.
  const broken = { ...served, 'tokenizer.json': Buffer.from('{"version": "1.0"}') };
  await page.route('https://models.example/**', async (route) => {
    const path = new URL(route.request().url()).pathname;
    const name = path.split('/').pop();
    const body = (path.startsWith('/broken/') ? broken : served)[name];
    // The weights come after the tokenizer, as a large file does: the core reads the tokenizer meanwhile.
    if (name === 'model.safetensors') await new Promise((resolve) => setTimeout(resolve, 500));
    return body
      ? route.fulfill({ status: 200, body, headers: { 'access-control-allow-origin': '*', 'content-length': String(body.length) } })
      : route.fulfill({ status: 404, body: 'not here', headers: { 'access-control-allow-origin': '*' } });
  });
  // The calls of one load, from its header check on: the tokenizer read ahead comes between the
  // check and the checkpoint it is for.
  const loadCalls = async () => {
    const types = await page.evaluate(() => window.typesPosted.splice(0));
    return types.slice(types.indexOf('checkCheckpoint')).filter((type) => ['checkCheckpoint', 'readTokenizer', 'checkpoint'].includes(type));
  };
  // A site that lets only its own pages read its files (Playwright adds a permissive header otherwise).
  await page.route('https://nocors.example/**', (route) => route.fulfill({ status: 200, body: '{}', headers: { 'access-control-allow-origin': 'https://nocors.example' } }));

  await page.click('.segment[data-source="own"]');
  // An empty field says what it wants, and that goes as soon as the reader types.
  await page.press('#model-url', 'Enter');
  assert.equal(await page.locator('.model-url .field-empty').innerText(), 'Type the address of a model folder first, such as https://…/my-model/');
  assert.equal(await page.getAttribute('#model-url', 'aria-invalid'), 'true');
  await page.fill('#model-url', 'https://models.example/tiny/');
  assert.ok(await page.locator('.model-url .field-empty').isHidden());
  await page.click('.model-url button[type="submit"]');
  await loaded(page, 'tiny');
  const { source } = await app(page);
  assert.deepEqual([source.kind, source.url, source.bytes, source.dtype], ['url', 'https://models.example/tiny/', MINIMIND.model.length, 'BF16']);
  assert.deepEqual((await app(page)).state.model, { kind: 'url', url: 'https://models.example/tiny/' }, 'the link names the URL');
  assert.deepEqual(await loadCalls(), ['checkCheckpoint', 'readTokenizer', 'checkpoint'], 'the tokenizer was read while the weights downloaded');
  await assertComputesLikePyTorch(page, MINIMIND);
  await screenshot(page, 'checkpoint-url');

  // A tokenizer.json the core cannot read is refused in the words it always was, read ahead or not;
  // the model before it still answers.
  await page.fill('#model-url', 'https://models.example/broken/');
  await page.click('.model-url button[type="submit"]');
  assert.match(await refused(page), /tokenizer\.json is JSON, but not a tokenizer attnscope can read \(the parser says: .+\)\./);
  assert.deepEqual(await loadCalls(), ['checkCheckpoint', 'readTokenizer', 'checkpoint'], 'the broken tokenizer was read ahead too');
  await assertStillRuns(page, 'tiny');

  await page.fill('#model-url', 'https://nocors.example/model/');
  await page.click('.model-url button[type="submit"]');
  assert.match(await refused(page), /could not read config\.json from https:\/\/nocors\.example\/model\/.*Access-Control-Allow-Origin/);
  await screenshot(page, 'checkpoint-refused-cors');
  await assertStillRuns(page, 'tiny');
  // Only an http(s) address is fetched: the others are refused as such, not blamed on the site's CORS.
  for (const url of ['javascript:alert(1)', 'file:///etc/passwd', 'http://', 'data:text/plain,x', 'not a url', 'huggingface.co/a/b']) {
    await page.fill('#model-url', url);
    await page.click('.model-url button[type="submit"]');
    await page.waitForFunction((u) => document.querySelector('.model-error').innerText.includes(`“${u}”`), url, { timeout: 60_000 });
    const said = await refused(page);
    assert.ok(said.includes(`“${url}” is not a web address attnscope can load from: give the http:// or https:// address`), `${url}: ${said}`);
    assert.doesNotMatch(said, /Access-Control|Invalid URL/, url);
  }
  // Another site's plain http:// address, which the page's own policy (connect-src 'self' https:)
  // would block before any request: refused as such, not blamed on that site.
  await page.fill('#model-url', 'http://example.com/model/');
  await page.click('.model-url button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('.model-error').innerText.includes('“http://example.com/model/”'), null, { timeout: 60_000 });
  const plain = await refused(page);
  assert.match(plain, /“http:\/\/example\.com\/model\/” is a plain http:\/\/ address on another site: for safety this page loads models only from https:\/\/ addresses or from folders of its own site/);
  assert.doesNotMatch(plain, /Access-Control/);
  await assertStillRuns(page, 'tiny');
  assert.ok(page.consoleErrors.every((e) => /nocors\.example|net::ERR_FAILED/.test(e)), `only the refused site logs errors: ${page.consoleErrors}`);
  await page.context().close();
});

test('a slow download shows its progress bar with the bytes so far, the total from the file’s header', async (t) => {
  if (!existsSync(join(BUILTIN, 'config.json'))) return t.skip('www/models/builtin is not there yet');
  // No service worker, whose fetches the page's network throttling would not slow.
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, serviceWorkers: 'block' });
  // On the random model: the built-in one, already read, would come from the browser's cache.
  const page = await freshPage(randomModel({ view: 'attention' }), context);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: 2e6, uploadThroughput: 1e6 });
  await page.click('.segment[data-source="own"]');
  await page.fill('#model-url', 'models/builtin/');
  await page.click('.model-url button[type="submit"]');
  const total = `${+(readFileSync(join(BUILTIN, 'model.safetensors')).length / 1024 / 1024).toPrecision(4)} MiB`;
  await page.waitForFunction(() => document.querySelector('.model-progress-bar').value > 0.3 * document.querySelector('.model-progress-bar').max, null, { timeout: 30_000 });
  const bar = await page.evaluate(() => ({ value: document.querySelector('.model-progress-bar').value, max: document.querySelector('.model-progress-bar').max }));
  assert.ok(bar.value < bar.max, 'caught halfway');
  assert.match(await page.locator('.model-progress-text').innerText(), new RegExp(`model\\.safetensors: [0-9.]+ MiB of ${total.replace('.', '\\.')}`));
  await page.locator('.model-panel').screenshot({ path: join(ROOT, 'artifacts', 'screenshots', 'checkpoint-progress.png') });
  await loaded(page, 'builtin');
  assert.equal(await page.locator('.model-progress').isHidden(), true);
  assert.deepEqual(page.consoleErrors, []);
  await context.close();
});

test('the reader’s model is kept for the next visit: a reload restores it, a new visit opens it, “Forget it” removes it', async () => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await freshPage('#view=grid', context);
  await chooseFiles(page, filesOf(MINIMIND));
  await loaded(page, 'minimind');
  await page.locator('.model-kept').waitFor();
  assert.match(await page.locator('.model-kept').innerText(), /minimind is kept in this browser/);
  await page.waitForFunction(async () => (await window.attnscope.link()) === location.href, null, { timeout: 10_000 });

  await page.reload();
  await page.waitForFunction(() => window.attnscope?.app?.source?.name === 'minimind' && !window.attnscope.app.loading, null, { timeout: 60_000 });
  await settled(page);
  const { source, state } = await app(page);
  assert.equal(source.restored, true, 'read from the browser, not from files');
  assert.deepEqual(state.model, { kind: 'files' });
  await assertComputesLikePyTorch(page, MINIMIND);
  assert.match(await page.locator('.model-info').innerText(), /kept in this browser/);
  await screenshot(page, 'checkpoint-restored');

  const visit = await freshPage('', context);
  assert.equal((await app(visit)).source.name, 'minimind', 'a visit without a link opens the kept model');
  await visit.close();

  await page.click('.model-forget');
  await page.waitForFunction(() => document.querySelector('.model-kept').hidden);
  assert.match(await page.locator('.model-note').innerText(), /Forgotten/);
  await page.reload();
  await page.locator('.banner').waitFor();
  assert.match(await page.locator('.banner').innerText(), /load its config\.json and model\.safetensors/);
  await page.waitForFunction(() => window.attnscope?.app?.source?.kind === 'random');
  await settled(page);
  assert.equal((await app(page)).state.model.kind, 'random', 'without the files the page shows random weights');
  assert.deepEqual(page.consoleErrors, []);
  await context.close();
});

// --- servers that lie about model.safetensors ---

// model.safetensors as a server under /lies/<how>/ sends it (config.json and tokenizer.json are
// MiniMind-3's, sent plainly). `sent` counts the bytes each one wrote before the page hung up.
const HUGE_HEAD = write({ 'model.embed_tokens.weight': { dtype: 'F32', shape: [2_000_000_000], data_offsets: [0, 8_000_000_000] } }, Buffer.alloc(0));
const sent = {};
const LIES = {
  // No Content-Length: the header alone tells the size.
  chunked: (res) => {
    res.writeHead(200);
    res.write(MINIMIND.model.subarray(0, 100));
    res.end(MINIMIND.model.subarray(100));
  },
  // Compressed: Content-Length counts the compressed bytes, not the file's.
  gzip: (res) => {
    const body = gzipSync(MINIMIND.model);
    res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': body.length });
    res.end(body);
  },
  long: (res) => {
    res.writeHead(200);
    res.write(MINIMIND.model);
    res.end(Buffer.alloc(4096));
  },
  short: (res) => {
    res.writeHead(200);
    res.end(MINIMIND.model.subarray(0, MINIMIND.model.length - 5000));
  },
  // Promises 1000 bytes more than it sends, then closes the connection.
  liar: (res) => {
    res.writeHead(200, { 'content-length': MINIMIND.model.length + 1000 });
    res.write(MINIMIND.model, () => res.socket.destroy());
  },
  // A header describing 8 GB, then zeros for as long as anyone reads them.
  huge: (res) => {
    res.writeHead(200);
    sent.huge = 0;
    const more = () => {
      if (res.destroyed) return;
      const chunk = sent.huge === 0 ? HUGE_HEAD : Buffer.alloc(1 << 16);
      sent.huge += chunk.length;
      res.write(chunk);
      setTimeout(more, 5);
    };
    more();
  },
  // An HTML page where the file should be (a login wall, a wrong link).
  html: (res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><html><body>${'Please sign in. '.repeat(500)}</body></html>`);
  },
};

// A front for the test's server on its own port: /lies/<how>/ answers as above, anything else is
// passed through (so the page, its Content-Security-Policy and the lies are one origin).
function liarFront(upstream) {
  const front = createServer((req, res) => {
    const [, lies, how, file] = req.url.split('/');
    if (lies === 'lies' && LIES[how]) {
      if (file === 'model.safetensors') return LIES[how](res);
      const plain = { 'config.json': MINIMIND.config, 'tokenizer.json': MINIMIND.tokenizer }[file];
      res.writeHead(plain ? 200 : 404);
      return res.end(plain ?? 'not here');
    }
    const forward = request(new URL(req.url, upstream), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    req.pipe(forward);
  });
  return new Promise((resolve) => front.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${front.address().port}/`, close: () => new Promise((done) => front.close(done)) })));
}

test('a download is checked before it is trusted: the header sets the size; a server that sends too much, too little, breaks off or sends no safetensors is refused; the weights move to the worker, not copied', async () => {
  const front = await liarFront(server.url);
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, serviceWorkers: 'block' });
  // Every message to the worker that carries weights: were they transferred (gone from the page)?
  await context.addInitScript(() => {
    window.weightsPosted = [];
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (message, transfer) {
      if (message?.weights) window.weightsPosted.push({ bytes: message.weights.byteLength, transferred: (transfer ?? []).includes(message.weights) });
      const result = post.call(this, message, transfer);
      if (message?.weights) window.weightsPosted.at(-1).left = message.weights.byteLength;
      return result;
    };
  });
  const page = await freshPage('#view=attention', context, front.url);
  const fromUrl = async (how) => {
    await page.click('.segment[data-source="own"]');
    await page.fill('#model-url', `lies/${how}/`);
    await page.click('.model-url button[type="submit"]');
  };

  for (const how of ['chunked', 'gzip']) {
    await fromUrl(how);
    await loaded(page, how);
    assert.equal((await app(page)).source.bytes, MINIMIND.model.length, `${how}: the file's own size, from its header`);
  }
  await assertComputesLikePyTorch(page, MINIMIND);
  const posted = await page.evaluate(() => window.weightsPosted);
  assert.deepEqual(
    posted.map((p) => [p.bytes, p.transferred, p.left]),
    [[readFileSync(join(BUILTIN, 'model.safetensors')).length, true, 0], ...['chunked', 'gzip'].map(() => [MINIMIND.model.length, true, 0])],
    'the built-in model and the two downloads moved to the worker, not copied',
  );
  // The worker gave the weights back whole: the page kept them in IndexedDB for the next visit.
  await page.locator('.model-kept').waitFor();
  const kept = await page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open('attnscope', 1);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const get = open.result.transaction('models').objectStore('models').get('own-checkpoint');
          get.onsuccess = () => resolve(Array.from(new Uint8Array(get.result.weights, 0, 64)).concat(get.result.weights.byteLength));
        };
      }),
  );
  assert.deepEqual(kept, [...MINIMIND.model.subarray(0, 64), MINIMIND.model.length]);

  const total = MINIMIND.model.length.toLocaleString('en-US');
  const refusals = {
    long: new RegExp(`lies/long/: the server sent more than the ${total} bytes model\\.safetensors’s own header describes`),
    short: new RegExp(`lies/short/: the server sent only ${(MINIMIND.model.length - 5000).toLocaleString('en-US')} of the ${total} bytes`),
    liar: /lies\/liar\/: the download of model\.safetensors broke off after [0-9,]+ bytes/,
    huge: /lies\/huge\/: model\.safetensors is 7\.451 GiB, more than the [0-9,]+ weights of this config can take even in f32/,
    html: /lies\/html\/: model\.safetensors does not begin with a safetensors header/,
  };
  for (const [how, message] of Object.entries(refusals)) {
    await fromUrl(how);
    assert.match(await refused(page), message);
    await assertStillRuns(page, 'gzip');
  }
  assert.ok(sent.huge < 4 << 20, `the 8 GB file was dropped after its header: ${sent.huge} bytes were sent`);
  await screenshot(page, 'checkpoint-refused-long');
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  await fromUrl('short');
  assert.match(await refused(page), /服务器只发送了 model\.safetensors 自己的文件头所描述的/);
  await screenshot(page, 'checkpoint-refused-short-zh');
  await assertStillRuns(page, 'gzip');
  assert.ok(page.consoleErrors.every((e) => /lies\/liar\/|ERR_CONTENT_LENGTH_MISMATCH/.test(e)), `only the broken-off download logs errors: ${page.consoleErrors}`);
  await context.close();
  await front.close();
});

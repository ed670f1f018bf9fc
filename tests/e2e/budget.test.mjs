// The tab's memory budgets, seen from the page (issue 12, items 3 and 6). A checkpoint is refused from
// its header when the tab could not hold it while it loads: its file twice (the page's copy, kept for
// the next visit and for a rebuild after Cancel, and the core's), its f32 weights as the core holds them
// (once: the matrices as the matmul kernel's panels), and what the tab holds already for the model loaded now (src/weights.rs check_load_budget). A link that asks for a
// random model and a text whose run would not fit (model + trace + working set, src/model/forward.rs)
// is refused with the core's sentence. Either way the previous model still answers.
//
// The checkpoints here are headers alone: the refusal comes before a byte of tensor data is read,
// so a 1.2 GB file is served as its few hundred bytes of header.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { fragment, FORMAT1_DEFAULTS } from '../../www/state.js';
import { cleanScreenshot, launch, openPage, randomModel, settled, startServer } from './helpers.mjs';

const GIB = 2 ** 30;
const BUDGET = 3 * GIB; // what a tab has for its models (weights::MAX_LOAD_BYTES, forward::MAX_MEMORY_BYTES)

// A Llama-layout config of 329 M weights and the tensors its checkpoint holds, as [name, shape].
const CONFIG = { hidden_size: 4096, num_hidden_layers: 1, num_attention_heads: 32, num_key_value_heads: 8, intermediate_size: 2048, vocab_size: 32000, tie_word_embeddings: false, model_type: 'llama' };
const l = (name) => `model.layers.0.${name}`;
const TENSORS = [
  ['model.embed_tokens.weight', [32000, 4096]],
  [l('input_layernorm.weight'), [4096]],
  [l('self_attn.q_proj.weight'), [4096, 4096]],
  [l('self_attn.k_proj.weight'), [1024, 4096]],
  [l('self_attn.v_proj.weight'), [1024, 4096]],
  [l('self_attn.o_proj.weight'), [4096, 4096]],
  [l('post_attention_layernorm.weight'), [4096]],
  [l('mlp.gate_proj.weight'), [2048, 4096]],
  [l('mlp.up_proj.weight'), [2048, 4096]],
  [l('mlp.down_proj.weight'), [4096, 2048]],
  ['model.norm.weight', [4096]],
  ['lm_head.weight', [32000, 4096]],
];
// In wasm the core holds each weight once, in f32, each matrix padded with zero rows to whole panels of
// the kernel's 12 columns (0.2 M weights here, 0.06 %: under the messages' 0.01 GB).
const WEIGHT_COUNT = TENSORS.reduce((sum, [, shape]) => sum + shape.reduce((a, b) => a * b, 1), 0);

// The header of a safetensors file of TENSORS in `dtype`, and the size of the whole file it describes.
function headerOnly(dtype, bytesPerWeight) {
  const header = {};
  let at = 0;
  for (const [name, shape] of TENSORS) {
    const end = at + shape.reduce((a, b) => a * b, 1) * bytesPerWeight;
    header[name] = { dtype, shape, data_offsets: [at, end] };
    at = end;
  }
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return { head: Buffer.concat([length, json]), size: 8 + json.length + at };
}

const gb = (bytes) => (bytes / 2 ** 30).toFixed(2); // GiB, as the messages say them

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launch({ webgpu: false });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function pageAt(hash) {
  const page = await openPage(browser, `${server.url}${hash}`);
  await page.waitForFunction(() => window.attnscope?.app?.model, null, { timeout: 120_000 });
  await settled(page);
  return page;
}

const logits = (page) => page.evaluate(async () => Array.from(await window.attnscope.tensor('logits')));

// Serves https://big.example/<dtype>/: config.json, a model.safetensors that is its header alone,
// and MiniMind's tokenizer.json (the page asks for the three at once).
async function serveHeaders(page) {
  const files = { f32: headerOnly('F32', 4), f16: headerOnly('F16', 2) };
  const tokenizer = await readFile(new URL('../../assets/minimind/tokenizer.json', import.meta.url));
  await page.route('https://big.example/**', (route) => {
    const [dtype, name] = new URL(route.request().url()).pathname.split('/').filter(Boolean);
    const body = name === 'config.json' ? JSON.stringify(CONFIG) : name === 'model.safetensors' ? files[dtype]?.head : name === 'tokenizer.json' ? tokenizer : null;
    return body
      ? route.fulfill({ status: 200, body, headers: { 'access-control-allow-origin': '*' } })
      : route.fulfill({ status: 404, body: 'not here', headers: { 'access-control-allow-origin': '*' } });
  });
  return files;
}

async function loadUrl(page, url) {
  await page.click('.segment[data-source="own"]');
  await page.fill('#model-url', url);
  await page.click('.model-url button[type="submit"]');
  await page.waitForFunction(() => !window.attnscope.app.loading && !document.querySelector('.model-error').hidden, null, { timeout: 60_000 });
  return page.locator('.model-error').innerText();
}

// The sentence's numbers: need, file, f32 weights, held (GB, as printed).
function parts(message) {
  const m = message.match(/[Tt]his checkpoint needs ([0-9.]+) GiB to load \(its ([0-9.]+) GiB file twice, the page['’]s copy and the core['’]s, ([0-9.]+) GiB of f32 weights, and ([0-9.]+) GiB held for the model loaded now\), more than the 3\.00 GiB a browser tab has for its models/);
  assert.ok(m, `the budget's sentence: ${message}`);
  return m.slice(1).map(Number);
}

test('a checkpoint the tab could hold only without the page’s own copy, or beside nothing, is refused from its header; the previous model still answers', async () => {
  const page = await pageAt(randomModel({ view: 'attention' }));
  const files = await serveHeaders(page);
  const before = await logits(page);

  // f32: the file and its weights (2.63 GB) fit the budget; with the page's copy counted (3.95 GB)
  // they do not.
  const f32 = files.f32.size;
  assert.ok(f32 + WEIGHT_COUNT * 4 <= BUDGET && 2 * f32 + WEIGHT_COUNT * 4 > BUDGET, 'fits only without the counted copy');
  const [need, file, weights, held] = parts(await loadUrl(page, 'https://big.example/f32/'));
  assert.deepEqual([file, weights], [Number(gb(f32)), Number(gb(WEIGHT_COUNT * 4))]);
  const model = await page.evaluate(() => window.attnscope.app.model);
  const padding = model.weight_bytes_held / (model.weight_count * 4) - 1;
  // Zero rows pad each matrix to whole 12-row panels: 1.8 % at this model's hidden size of 64.
  assert.ok(padding >= 0 && padding < 0.03, `the random model's weights, held once with their panels' padding: ${padding}`);
  assert.ok(held >= Number(gb(model.weight_bytes_held)) && held < 0.01, `the small random model is what is held: ${held} GB`);
  assert.ok(Math.abs(need - (2 * file + weights + held)) <= 0.02, `${need} GB is the sum of its parts`);
  await cleanScreenshot(page, 'budget-refused-copy');
  assert.deepEqual(await logits(page), before, 'the previous model still answers, with the same numbers');

  // f16 alone fits (2.63 GB), but not beside a random model of 0.77 GB (its f32 weights) the tab holds now.
  const f16 = files.f16.size;
  assert.ok(2 * f16 + WEIGHT_COUNT * 4 <= BUDGET);
  await page.evaluate(() => window.attnscope.setState({ model: { kind: 'random' }, config: { hidden_size: 2048, num_hidden_layers: 4, num_attention_heads: 16, num_key_value_heads: 4, intermediate_size: 5632 } }));
  await page.waitForFunction(() => window.attnscope.app.model.hidden_size === 2048, null, { timeout: 120_000 });
  await settled(page);
  const big = await page.evaluate(() => window.attnscope.app.model.weight_bytes_held);
  const bigBefore = await logits(page);
  const [need16, , , held16] = parts(await loadUrl(page, 'https://big.example/f16/'));
  assert.ok(held16 >= Number(gb(big)) && held16 <= Number(gb(big)) + 0.05, `the 0.77 GB model loaded now is held: ${held16} GB`);
  assert.ok(need16 > BUDGET / 2 ** 30);
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  await cleanScreenshot(page, 'budget-refused-held-zh');
  assert.deepEqual(await logits(page), bigBefore, 'the model loaded now still answers');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('a link to a random model whose run would not fit in memory is refused with the core’s sentence; the previous model still answers', async () => {
  const page = await pageAt(randomModel({ view: 'attention' }));
  const before = await logits(page);
  const small = await page.evaluate(() => window.attnscope.getState());
  // 1.89 GB of f32 weights (within their own 2 GiB limit), ~900 tokens: a trace within its 1 GiB limit,
  // but weights, trace and the explicit path's score tables together over 3 GiB.
  const config = { hidden_size: 5120, num_hidden_layers: 1, num_attention_heads: 40, num_key_value_heads: 8, intermediate_size: 24576, vocab_size: 6400 };
  const text = 'a '.repeat(900).trim();
  const hash = await fragment({ ...FORMAT1_DEFAULTS, model: { kind: 'random' }, config, text, view: 'attention' });
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
  const message = page.locator('.message-error pre');
  await message.waitFor({ timeout: 120_000 });
  const shown = await message.innerText();
  const m = shown.match(/This run needs ([0-9.]+) GiB at once \(the model['’]s weights ([0-9.]+) GiB, the trace ([0-9.]+) GiB, working memory ([0-9.]+) GiB\), over the budget of 3\.00 GiB\. The text is [0-9,]+ tokens and at most ([0-9,]+) fit: use a shorter text \(the attention weights grow with the square of the number of tokens\)\./);
  assert.ok(m, `the core's sentence: ${shown}`);
  const [total, weights, trace, working] = m.slice(1, 5).map(Number);
  const fits = Number(m[5].replace(/,/g, ''));
  const tokens = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  assert.ok(fits > 0 && fits < tokens, `${fits} of the ${tokens} tokens fit`);
  const d = 5120 / 40;
  const count = 6400 * 5120 + 5120 * (2 * 5120 + 2 * 8 * d + 3 * 24576 + 2) + 2 * d + 5120; // embed (tied), one layer with Q/K norm, final norm
  assert.equal(weights, Number(gb(count * 4)), 'the f32 weights, held once (the tied embedding is lm_head, as panels only)');
  assert.ok(trace <= GIB / 2 ** 30 && weights <= (2 * GIB) / 2 ** 30, 'each part is within its own limit');
  assert.ok(Math.abs(total - (weights + trace + working)) <= 0.02 && total > BUDGET / 2 ** 30);
  await cleanScreenshot(page, 'budget-refused-run');
  // The same refusal on the Chinese page is Chinese, from the core's code and numbers.
  await page.click('#lang-switch');
  await page.waitForFunction(() => /这次运行一下子需要 [0-9.]+ GiB/.test(document.querySelector('.message-error pre')?.innerText ?? ''), null, { timeout: 120_000 });
  assert.match(await message.innerText(), /^这次运行一下子需要 [0-9.]+ GiB（模型权重 [0-9.]+ GiB，记录的张量 [0-9.]+ GiB，计算中的工作内存 [0-9.]+ GiB），超过了 3\.00 GiB 的上限。这段文本有 [0-9]+ 个 token，最多放得下 [0-9]+ 个/);
  await page.click('#lang-switch');
  await page.waitForFunction(() => /This run needs/.test(document.querySelector('.message-error pre')?.innerText ?? ''), null, { timeout: 120_000 });
  // The two switches were two steps of history (the language is part of the link): back over them.
  await page.goBack();
  await page.goBack();

  // Back to the link before: the page opens its model again, with the same numbers.
  await page.goBack();
  await page.waitForFunction((h) => window.attnscope.app.model.hidden_size === h, small.config.hidden_size, { timeout: 120_000 });
  await settled(page);
  assert.equal(await page.locator('.message-error').count(), 0);
  assert.deepEqual(await logits(page), before);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('a text longer than the model has positions is refused in the reader’s language, with both numbers', async () => {
  const page = await pageAt(randomModel({ view: 'attention' }));
  const config = { hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, intermediate_size: 64, max_position_embeddings: 8 };
  const hash = await fragment({ ...FORMAT1_DEFAULTS, model: { kind: 'random' }, config, text: '一二三四五六七八九十', view: 'attention', lang: 'zh' });
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
  const message = page.locator('.message-error pre');
  await message.waitFor({ timeout: 120_000 });
  const tokens = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  assert.ok(tokens > 8);
  assert.equal(await message.innerText(), `输入有 ${tokens} 个 token，超过了这个模型的 max_position_embeddings（8）：后面的 token 没有位置可用。请缩短文本。`);
  await page.click('#lang-switch');
  await page.waitForFunction(() => /^The input is/.test(document.querySelector('.message-error pre')?.innerText ?? ''), null, { timeout: 120_000 });
  assert.equal(await message.innerText(), `The input is ${tokens} tokens, more than this model’s max_position_embeddings (8): it has no positions for the rest. Shorten the text.`);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

// A page on the attention map with `text` pasted into the box (one input event, as a paste makes),
// once the run it starts is refused: the page and its error message.
async function pasted(text) {
  const page = await pageAt('#view=attention');
  await page.evaluate((t) => {
    const box = document.getElementById('text');
    box.value = t;
    box.dispatchEvent(new Event('input', { bubbles: true }));
  }, text);
  const message = page.locator('.message-error pre');
  await message.waitFor({ timeout: 120_000 });
  await settled(page);
  return { page, message };
}

test('a pasted document of 160,000 tokens is refused with the limit; its first 8,192 chips are drawn and the rest counted', async () => {
  const { page, message } = await pasted('The cat sat. '.repeat(40000));
  assert.equal(await message.innerText(), 'The input is 160,002 tokens, over attnscope’s limit of 8,192. Shorten the text.');
  assert.equal(await page.locator('.chips .chip').count(), 8192);
  assert.equal(await page.locator('.chips-more').innerText(), '… and 151,810 more tokens');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('a text whose trace would pass the trace limit is refused with how many tokens fit', async () => {
  const { page, message } = await pasted('好 '.repeat(3000));
  const tokens = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  const m = (await message.innerText()).match(/^Recording this run’s tensors needs [0-9.]+ GiB \(the limit is 1\.00 GiB\)\. The text is [0-9,]+ tokens and at most ([0-9,]+) fit: use a shorter text/);
  assert.ok(m, await message.innerText());
  const fits = Number(m[1].replace(/,/g, ''));
  assert.ok(fits > 0 && fits < tokens, `${fits} of the ${tokens} tokens fit`);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

// A view's own request that the core refuses is said in that view, whose controls stay to fix it: a
// second sentence over the model's positions in Compare (said under its field), a link's target
// token past the vocabulary in Attribution (back to the top-1 token). The other views still draw.
test('a view’s own refusal stays in that view: the compare field is kept, other views still draw', async () => {
  const config = { hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, intermediate_size: 64, max_position_embeddings: 8 };
  const page = await pageAt(`#${await fragment({ ...FORMAT1_DEFAULTS, model: { kind: 'random' }, config, text: '一二三', view: 'compare', lang: 'en' })}`);
  const long = '一二三四五六七八九十';
  await page.fill('.compare-input', long);
  await page.press('.compare-input', 'Enter');
  const refusal = page.locator('.compare-sentences .message-error');
  await refusal.waitFor({ timeout: 60_000 });
  assert.match(await refusal.innerText(), /^The second sentence cannot run: The input is \d+ tokens, more than this model’s max_position_embeddings \(8\)/);
  assert.equal(await page.inputValue('.compare-input'), long, 'the field keeps what was typed');
  assert.equal(await page.locator('.view-error').count(), 0);
  await page.evaluate(() => (location.hash = 'view=grid'));
  await page.waitForSelector('.view-grid .thumb canvas');
  await settled(page);
  assert.equal(await page.locator('.message-error').count(), 0, 'the grid draws the first sentence’s run');
  await page.evaluate(() => (location.hash = 'view=attribution&target=6400'));
  await page.waitForSelector('.view-attribution canvas.heatmap-canvas');
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.getState().target), null, 'a target past the vocabulary is the top-1 token again');
  assert.match(await page.locator('.banner').innerText(), /This link asks for target token 6400, but this model’s vocabulary has 6400 tokens \(ids 0–6399\): head attribution explains the most likely next token instead\./, 'and the page says so');
  // A target past any vocabulary a link can name is said as typed, once, not as the number it was cut to.
  await page.evaluate(() => (location.hash = 'view=attribution&target=99999999999'));
  await page.waitForFunction(() => /99999999999/.test(document.querySelector('.banner')?.innerText ?? ''));
  const banner = await page.locator('.banner').innerText();
  assert.match(banner, /This link asks for target token 99999999999, but this model’s vocabulary has 6400 tokens/);
  assert.doesNotMatch(banner, /262143|out of range or not recognised/, 'no second line about the cut number');
  assert.equal(await page.evaluate(() => window.attnscope.getState().target), null);
  assert.equal(await page.locator('.message-error').count(), 0);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

// Decoding past the model's positions is refused in the reader's language, at the KV cache view's
// top, with its buttons still there (Reset starts over).
test('decoding past max_position_embeddings is said in Chinese and the KV cache view keeps its buttons', async () => {
  const config = { hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, intermediate_size: 64, max_position_embeddings: 8 };
  const page = await pageAt(`#${await fragment({ ...FORMAT1_DEFAULTS, model: { kind: 'random' }, config, text: '一二三', view: 'decode', lang: 'zh' })}`);
  await page.click('#decode-run');
  const refusal = page.locator('.view-error .message-error');
  await refusal.waitFor({ timeout: 60_000 });
  assert.match(await refusal.innerText(), /这个视图没能画出来：[\s\S]*输入有 9 个 token，超过了这个模型的 max_position_embeddings（8）/);
  assert.doesNotMatch(await refusal.innerText(), /bad input|more than/);
  assert.ok(await page.locator('#decode-reset').isVisible());
  await page.click('#decode-reset');
  await page.waitForFunction(() => !document.querySelector('.view-error'));
  await settled(page);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

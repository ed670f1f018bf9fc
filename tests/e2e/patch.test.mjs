// The activation patching view (www/views/patch.js) on the built-in model, with the native fixture
// tests/fixtures/patch_builtin (tools/reference/make_patch_fixtures.py): the page's run equals the
// fixture's tensors and its shares, hover and named cells are read off them; sentences of different
// lengths are refused in both languages with both counts; Cancel stops a run and the page goes on;
// it exports as an SVG and embeds in Chinese.
// SmolLM2's name swap (a minute of partial runs) is not run here. Screenshot:
// artifacts/screenshots/patch-builtin.png.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { assertClose, cleanScreenshot, launch, openPage, readCell, settled, startServer, WASM_VS_PYTORCH } from './helpers.mjs';

const FIXTURE = new URL('../fixtures/patch_builtin/', import.meta.url);
const INPUT = JSON.parse(readFileSync(new URL('input.json', FIXTURE)));

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

function readTrace(url) {
  const bytes = readFileSync(url);
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  const tensors = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const { dtype, data_offsets: [from, to] } = entry;
    assert.equal(dtype, 'F32');
    const data = bytes.subarray(8 + n + from, 8 + n + to);
    tensors[name] = Array.from(new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length)));
  }
  return tensors;
}

const link = (fields) => `${server.url}#${new URLSearchParams({ model: 'builtin', view: 'patch', ...fields })}`;

// The fixture's two inputs as texts the page tokenizes back into its ids (BOS first, as the page's).
async function fixtureTexts(page) {
  return page.evaluate(([a, b]) => Promise.all([a, b].map((ids) => window.attnscope.call('decode', { ids: ids.slice(1) }))), [INPUT.clean, INPUT.corrupt]);
}

async function runPatching(page) {
  await page.click('.patch-run');
  await page.waitForSelector('.patch-result:not([hidden])', { timeout: 60_000 });
  await settled(page);
}

test('the page patches the fixture’s pair as PyTorch does, and its shares, hover and named cells are those numbers', async () => {
  const page = await openPage(browser, link({ lang: 'en' }));
  await settled(page);
  const [clean, corrupt] = await fixtureTexts(page);
  await page.goto(link({ lang: 'en', text: clean, compare: corrupt, patchTarget: INPUT.target, patchAgainst: INPUT.against }));
  await page.waitForSelector('.patch-run:not([disabled])');
  await settled(page);
  assert.deepEqual(await page.evaluate(() => window.attnscope.app.state.tokens.ids), INPUT.clean);
  assert.deepEqual((await page.evaluate((text) => window.attnscope.call('tokenize', { text, bos: true }), corrupt)).ids, INPUT.corrupt);
  assert.equal(await page.locator('select[name="patchTarget"]').inputValue(), String(INPUT.target));
  assert.equal(await page.locator('select[name="patchAgainst"]').inputValue(), String(INPUT.against));
  // Nothing runs until asked.
  assert.ok(await page.locator('.patch-result').isHidden());
  await runPatching(page);

  const reference = readTrace(new URL('trace.safetensors', FIXTURE));
  const core = await page.evaluate(({ clean, corrupt, target, against }) => window.attnscope.call('patch', { clean, corrupt, target, against }).then((r) => ({ ...r, resid_out: Array.from(r.resid_out), head_context: Array.from(r.head_context) })), INPUT);
  assertClose(WASM_VS_PYTORCH, 'patch_builtin: metrics', [core.clean_metric, core.corrupt_metric], [...reference['patch.clean_metric'], ...reference['patch.corrupt_metric']]);
  assertClose(WASM_VS_PYTORCH, 'patch_builtin: patch.resid_out', core.resid_out, reference['patch.resid_out']);
  assertClose(WASM_VS_PYTORCH, 'patch_builtin: patch.head_context', core.head_context, reference['patch.head_context']);

  const { clean_metric: mc, corrupt_metric: mx, positions: T, heads: nH } = core;
  assert.equal(T, INPUT.clean.length);
  const share = (m) => (m - mx) / (mc - mx);
  const metrics = await page.locator('.patch-metrics').innerText();
  assert.ok(metrics.includes(mc.toFixed(3)) && metrics.includes(mx.toFixed(3)), metrics);
  // Hover: the share as the cell's value, the raw metric beside it.
  const [maps] = [page.locator('.patch-result canvas.heatmap-canvas')];
  const [l, p] = [1, T - 1];
  const cell = await readCell(page, maps.nth(0), l, p);
  assert.ok(Math.abs(Number(cell.value) - share(core.resid_out[l * T + p])) < 1e-5, `${cell.value}`);
  assert.ok(cell.text.includes(core.resid_out[l * T + p].toFixed(3)), cell.text);
  const head = await readCell(page, maps.nth(1), 2, 3);
  assert.ok(Math.abs(Number(head.value) - share(core.head_context[2 * nH + 3])) < 1e-5, `${head.value}`);
  // The strongest cells (the best layer at each of the three best positions) and heads named are the
  // largest shares, in order.
  const named = (selector) => page.$$eval(selector, (items) => items.map((li) => ({ l: Number(li.dataset.layer), k: Number(li.dataset.position ?? li.dataset.head), share: Number(li.dataset.share) })));
  const ranked = (values, width) => values.map((v, i) => ({ l: Math.floor(i / width), k: i % width, share: share(v) })).sort((a, b) => b.share - a.share);
  const onePerPosition = ranked(core.resid_out, T).filter((c, i, all) => all.findIndex((d) => d.k === c.k) === i).filter((c) => c.share > 0).slice(0, 3);
  for (const [got, want] of [[await named('.patch-cell'), onePerPosition], [await named('.patch-head'), ranked(core.head_context, nH).slice(0, 3)]]) {
    assert.deepEqual(got.map(({ l, k }) => [l, k]), want.map(({ l, k }) => [l, k]));
    got.forEach((g, i) => assert.ok(Math.abs(g.share - want[i].share) < 1e-5));
  }
  // The last layer's output at the last position is the clean run's answer: all of it restored.
  assert.ok(Math.abs(share(core.resid_out[(core.layers - 1) * T + T - 1]) - 1) < 1e-4);
  await cleanScreenshot(page, 'patch-builtin');
  // It exports as the other views do: an SVG with both maps and the named heads as text.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
  assert.match(download.suggestedFilename(), /^attnscope-patch.*-en\.svg$/);
  const svg = readFileSync(await download.path(), 'utf8');
  assert.equal((svg.match(/<image\b/g) ?? []).length >= 2, true, 'both heatmaps');
  assert.ok(svg.includes(mc.toFixed(3)), 'the metrics line as text');
  // A named head opens its attention map at the last position.
  const first = page.locator('.patch-head').first();
  const [hl, hh] = [Number(await first.getAttribute('data-layer')), Number(await first.getAttribute('data-head'))];
  await first.locator('.patch-open-head').click();
  await page.waitForSelector('.view-attention');
  assert.deepEqual(await page.evaluate(() => ({ l: window.attnscope.app.state.layer, h: window.attnscope.app.state.head, q: window.attnscope.app.state.query })), { l: hl, h: hh, q: T - 1 });
  // Back on the view, the result is kept for the same inputs.
  await page.goBack();
  await page.waitForSelector('.view-patch .patch-result:not([hidden])');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('sentences of different lengths are refused with both counts, in English and Chinese', async () => {
  for (const lang of ['en', 'zh']) {
    const page = await openPage(browser, link({ lang, text: 'When Mary and John went to the store, John gave a drink to', compare: 'When Mary went to the store, John gave a drink to' }));
    await settled(page);
    const said = await page.locator('.patch-refused').innerText();
    const A = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
    const B = (await page.evaluate(() => window.attnscope.call('tokenize', { text: 'When Mary went to the store, John gave a drink to', bos: true }))).ids.length;
    assert.notEqual(A, B);
    assert.ok(said.includes(String(A)) && said.includes(String(B)), said);
    assert.match(said, lang === 'en' ? /same number of tokens/ : /同样多的 token/);
    assert.ok(await page.locator('.patch-run').isDisabled());
    assert.deepEqual(page.consoleErrors, []);
    await page.close();
  }
});

test('Cancel stops a long run; the page answers again and the run can be asked for anew', async () => {
  // Five times the name swap: about 100 tokens, some seconds of partial runs on the built-in model.
  const clean = Array(5).fill('When Mary and John went to the store, John gave a drink to Mary.').join(' ');
  const corrupt = clean.replace(/John gave(?![\s\S]*John gave)/, 'Mary gave');
  const page = await openPage(browser, link({ lang: 'en', text: clean, compare: corrupt }));
  await page.waitForSelector('.patch-run:not([disabled])');
  await settled(page);
  await page.click('.patch-run');
  await page.waitForFunction(() => Number(document.querySelector('.patch-progress')?.value) > 0, null, { timeout: 30_000 });
  const total = Number(await page.locator('.patch-progress').getAttribute('max'));
  await page.click('.patch-cancel');
  await page.waitForSelector('.patch-status .message-empty');
  assert.match(await page.locator('.patch-status').innerText(), /cancelled/);
  assert.ok(await page.locator('.patch-result').isHidden());
  // The rebuilt worker answers at once (no patching left running in it).
  const started = Date.now();
  await page.evaluate(() => window.attnscope.call('coreInfo'));
  assert.ok(Date.now() - started < 5_000);
  assert.ok(total > 400, `${total} partial runs`);
  assert.ok(await page.locator('.patch-run').isEnabled());
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('an embed in Chinese opens the view with its pair, ready to run', async () => {
  const page = await openPage(browser, link({ lang: 'zh', embed: '1', text: 'When Mary and John went to the store, John gave a drink to', compare: 'When Mary and John went to the store, Mary gave a drink to' }));
  await page.waitForSelector('.patch-run:not([disabled])');
  await settled(page);
  assert.equal(await page.locator('.patch-run').innerText(), '运行激活修补');
  assert.match(await page.locator('.patch-cost').innerText(), /次部分|激活/);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

// The deep-dive views in real Chromium: Q·K explained, RoPE, scale, MHA/GQA/MQA, KV cache and
// decoding, flash, FFN and output. For each, a number the view shows is checked against the core's
// own tensors (window.attnscope) or recomputed here from them; then both languages, the keyboard,
// dark mode, a phone-sized screen, and no console errors. Screenshots: artifacts/screenshots/deep-*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cleanScreenshot, go, launch, openPage, randomModel, readCell, settled, startServer, until } from './helpers.mjs';

const D = 16; // head_dim of the default model: hidden 64 over 4 heads
const NH = 4;
const NKV = 2;

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await launch();
  page = await openPage(browser, `${server.url}${randomModel({ view: 'qk' })}`);
  await page.setViewportSize({ width: 1400, height: 1000 });
  await settled(page);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const shot = (name) => cleanScreenshot(page, name);

function tensor(name) {
  return page.evaluate(async (n) => Array.from(await window.attnscope.tensor(n)), name);
}

function tokenCount() {
  return page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
}

// The f32 a view printed (its data-value, the shortest decimal that reads back as that f32).
async function shown(locator) {
  const text = await locator.getAttribute('data-value');
  return text === '-∞' ? -Infinity : Math.fround(Number(text));
}

function close(actual, expected, tol, what) {
  assert.ok(Math.abs(actual - expected) <= tol * Math.max(1, Math.abs(expected)), `${what}: shown ${actual}, expected ${expected}`);
}

async function pick(view, name, value) {
  await page.selectOption(`.view-${view} select[name="${name}"]`, String(value));
  await settled(page);
}

test('Q·K explained takes one score apart on the real q_rope and k_rope', async () => {
  const T = await tokenCount();
  await pick('qk', 'layer', 1);
  await pick('qk', 'head', 3);
  await pick('qk', 'query', T - 2);
  const [q, k, scores, masked, probs] = await Promise.all(['q_rope', 'k_rope', 'scores', 'masked_scores', 'probs'].map((n) => tensor(`layers.1.attn.${n}`)));
  // Before a key is picked, the pair is the query's strongest: the key its row weighs most.
  assert.equal(await page.evaluate(() => window.attnscope.app.state.key), null);
  const row = Array.from(probs).slice((3 * T + T - 2) * T, (3 * T + T - 1) * T);
  const strongest = row.indexOf(Math.max(...row));
  assert.equal(await page.locator('.view-qk select[name="key"]').inputValue(), String(strongest));
  assert.equal(await shown(page.locator('.qk-steps [data-step="prob"] output')), row[strongest]);
  await pick('qk', 'key', 1);
  const i = T - 2;
  const j = 1;
  const h = 3;
  const kv = 1;
  let dot = 0;
  for (let n = 0; n < D; n++) dot += q[(i * NH + h) * D + n] * k[(j * NKV + kv) * D + n];
  close(await shown(page.locator('.qk-steps [data-step="sum"] output')), dot, 1e-5, 'q′·k′');
  const at = (h * T + i) * T + j;
  assert.equal(await shown(page.locator('.qk-steps [data-step="scaled"] output')), scores[at]);
  assert.equal(await shown(page.locator('.qk-steps [data-step="masked"] output')), masked[at]);
  assert.equal(await shown(page.locator('.qk-steps [data-step="prob"] output')), probs[at]);
  close(dot / Math.sqrt(D), scores[at], 1e-5, 'sum / √d is the traced score');
  assert.equal(await page.locator('.terms tbody tr').count(), D);
  await shot('deep-qk');

  // Keyboard: arrows move over the map, Enter picks the pair (a future key: −∞ then 0).
  const canvas = page.locator('.view-qk .heatmap-canvas');
  const cell = await readCell(page, canvas, 0, 2);
  assert.equal(Number(cell.value), probs[(h * T + 0) * T + 2]);
  await canvas.press('Enter');
  await settled(page);
  assert.equal(await page.locator('.qk-steps [data-step="masked"] output').getAttribute('data-value'), '-∞');
  assert.equal(await shown(page.locator('.qk-steps [data-step="prob"] output')), 0);
});

test('Q·K explained: one click opens the tutorial’s pair, Q = 她 and K = 红, in the head where 她 looks at 红 most', async () => {
  const own = await openPage(browser, `${server.url}#view=qk&lang=zh`);
  await own.waitForFunction(() => window.attnscope?.app?.source?.kind === 'builtin', null, { timeout: 120_000 });
  await settled(own);
  await own.click('.qk-tutorial-pair button');
  await own.waitForFunction(() => window.attnscope.app.state.text === '小明把苹果给了小红，她很开心');
  await settled(own);
  const { state, pieces } = await own.evaluate(() => ({ state: window.attnscope.getState(), pieces: window.attnscope.app.state.tokens.pieces }));
  assert.deepEqual([pieces[state.query], pieces[state.key]], ['她', '红']);
  // The head: the one whose probs give 她's row the most weight on 红, over every layer.
  const best = await own.evaluate(async ({ i, j }) => {
    const { app } = window.attnscope;
    let top = { w: -1 };
    for (let l = 0; l < app.model.num_hidden_layers; l++) {
      const { data, shape } = (await app.tensors([`layers.${l}.attn.probs`])).get(`layers.${l}.attn.probs`);
      const [nH, T, S] = shape;
      for (let h = 0; h < nH; h++) if (data[(h * T + i) * S + j] > top.w) top = { l, h, w: data[(h * T + i) * S + j] };
    }
    return top;
  }, { i: state.query, j: state.key });
  assert.deepEqual([state.layer, state.head], [best.l, best.h]);
  assert.match(await own.locator('.qk-walk').innerText(), new RegExp(`probs\\[0, ${best.h}, ${state.query}, ${state.key}\\] = ${best.w.toFixed(4)}`));
  assert.equal(await own.locator('.qk-tutorial-pair').isVisible(), false, 'the button steps aside once the pair is shown');
  // The attention map answers the tutorials' question from the same numbers: in the best head, 红's
  // share and that no head gives more; in another, where it ranks and which head gives the most.
  await own.evaluate(() => window.attnscope.setState({ view: 'attention' }));
  await settled(own);
  const answer = () => own.locator('.view-attention .pair-answer').innerText();
  assert.match(await answer(), new RegExp(`^她在看小红吗？在这个头里，“红”（小红的红）拿到“她”的 ${best.w.toFixed(2)} 权重，.*这个模型里没有哪个头给“红”更多。`));
  const other = (best.h + 1) % 8;
  await own.evaluate((head) => window.attnscope.setState({ head }), other);
  await settled(own);
  assert.match(await answer(), new RegExp(`给它最多的是层 ${best.l} 头 ${best.h}：${best.w.toFixed(2)}。`));
  assert.deepEqual(own.consoleErrors, []);
  await own.close();
});

test('RoPE draws angles with YaRN off and on, rotates q exactly as the trace, scores by distance', async () => {
  await go(page, 'rope');
  await pick('rope', 'query', (await tokenCount()) - 1);
  assert.equal(await page.locator('.view-rope [data-panel="angles"] canvas').count(), 1);
  assert.equal(await page.locator('.view-rope [data-panel="wavelength"] .chart-line').count(), 2);
  assert.equal(await page.locator('.circle-cell').count(), D / 2);
  assert.equal(await shown(page.locator('[data-check="rope-trace"] output')), 0, 'ropeRotate(q_norm) is the traced q_rope');
  // Distance 0: no rotation at all, the plain q_norm · k_norm / √d.
  const T = await tokenCount();
  const state = await page.evaluate(() => window.attnscope.app.state);
  const [qn, kn] = await Promise.all([tensor(`layers.${state.layer}.attn.q_norm`), tensor(`layers.${state.layer}.attn.k_norm`)]);
  const i = state.query ?? T - 1;
  const j = state.key ?? 0;
  const kv = Math.floor(state.head / (NH / NKV));
  let dot = 0;
  for (let n = 0; n < D; n++) dot += qn[(i * NH + state.head) * D + n] * kn[(j * NKV + kv) * D + n];
  const chart = page.locator('.view-rope .line-chart').last();
  await chart.focus();
  await chart.press('Home');
  close(Number(await page.locator('#tooltip').getAttribute('data-value')), dot / Math.sqrt(D), 1e-5, 'score at distance 0');
  await chart.press('ArrowRight');
  assert.match(await page.locator('#tooltip').innerText(), /YaRN/);
  await shot('deep-rope');
  await page.locator('#rope-yarn').check();
  await settled(page);
  assert.equal(await page.locator('[data-check="rope-trace"]').count(), 0, 'the trace has no YaRN, so there is nothing to compare');
  assert.match(await page.locator('[data-check="none"]').innerText(), /^No check with YaRN switched the other way: the model loaded runs without YaRN/);
  assert.doesNotMatch(await page.locator('#view').innerText(), /\bfalse\b/, 'the absent check leaves no stray text');
  await shot('deep-rope-yarn');
  await page.locator('#rope-yarn').uncheck();
  await settled(page);
});

test('RoPE’s distance chart keeps a band for its marker’s label: no curve runs under it', async () => {
  const T = await tokenCount();
  await go(page, 'rope');
  await page.evaluate((last) => window.attnscope.app.set({ query: last, key: 0 }), T - 1);
  await settled(page);
  const clear = await page.locator('.view-rope .line-chart').last().evaluate((svg) => {
    const label = svg.querySelector('.chart-marker-label').getBBox();
    const tops = [...svg.querySelectorAll('.chart-line')].map((p) => Math.min(...p.getAttribute('d').split(/[ML]/).filter(Boolean).map((xy) => Number(xy.split(',')[1]))));
    return { bottom: label.y + label.height, top: Math.min(...tops) };
  });
  assert.ok(clear.top > clear.bottom, `the curves (from y ${clear.top}) stay under the label (to y ${clear.bottom})`);
  await page.evaluate(() => window.attnscope.app.set({ query: null, key: null }));
  await settled(page);
});

test('scale: the seed rows by the core, and τ = √d reproduces the model’s own probabilities', async () => {
  await go(page, 'scale');
  const ownBars = page.locator('.view-scale .card').first().locator('.bars').first();
  const values = await ownBars.locator('.bar-row').evaluateAll((rows) => rows.map((r) => Number(r.dataset.value)));
  assert.equal(values.length, 3);
  assert.ok(values[2] > 0.9999 && values[0] < 1e-8, `softmax([10, 20, 30]) = ${values}`);
  // The divisor opens at the seed's τ = 10, and says so: [10, 20, 30] / 10 is softmax([1, 2, 3]).
  assert.equal(await page.locator('.view-scale output[for="scale-own-tau"]').innerText(), 'τ = 10');
  const divided = await page.locator('.view-scale .card').first().locator('.bars').nth(1).locator('.bar-row').evaluateAll((rows) => rows.map((r) => Number(r.dataset.value)));
  [0.09, 0.2447, 0.6652].forEach((p, n) => close(divided[n], p, 1e-3, `softmax([10, 20, 30] / 10)[${n}]`));
  await page.getByRole('button', { name: '[1, 2, 3]' }).click();
  await settled(page);
  const small = await ownBars.locator('.bar-row').evaluateAll((rows) => rows.map((r) => Number(r.dataset.value)));
  [0.09, 0.2447, 0.6652].forEach((p, n) => close(small[n], p, 1e-3, `softmax([1, 2, 3])[${n}]`));
  // Scores whose quotient by the smallest τ would leave f32's range are refused in a sentence: no
  // NaN, no bars drawn from it (3e38 / 0.1 is ∞ in f32, and softmax of ∞ − ∞ is NaN).
  await page.fill('#scale-row', '3e38, 3e38, 1');
  await page.locator('#scale-row').dispatchEvent('change');
  await page.locator('#scale-own-tau').fill('-1');
  await settled(page);
  const own = page.locator('.view-scale .card').first();
  assert.match(await own.locator('.field-error').innerText(), /^Keep each score between −1,000,000 and 1,000,000/);
  assert.equal(await own.locator('.bars').count(), 0);
  assert.doesNotMatch(await page.locator('#view').innerText(), /NaN/);
  // 1e400 is a number, too large for f32: told the range, not "type numbers"; a pasted row of 3,000
  // is cut to the field's 1,000 characters (334 scores) and refused with its length, not drawn as bars.
  for (const [row, said] of [['1e400, 2, 3', /^Keep each score between/], [Array.from({ length: 3000 }, (_, i) => i % 7).join(', '), /^Up to 32 scores: this row has 334\.$/]]) {
    await page.fill('#scale-row', row);
    await page.locator('#scale-row').dispatchEvent('change');
    await settled(page);
    assert.match(await own.locator('.field-error').innerText(), said);
    assert.equal(await own.locator('.bars').count(), 0);
  }
  // The own row and its divisor travel in the link: opened from it, the page shows the same softmax.
  await page.fill('#scale-row', '2, 4, 8');
  await page.locator('#scale-row').dispatchEvent('change');
  await page.locator('#scale-own-tau').fill('0.5');
  await page.locator('#scale-own-tau').dispatchEvent('input');
  await settled(page);
  assert.deepEqual(await page.evaluate(() => [window.attnscope.app.state.scores, window.attnscope.app.state.scoresTau]), ['2, 4, 8', 10 ** 0.5]);
  const link = await page.evaluate(() => location.hash);
  const sharedBars = await own.locator('.bars').nth(1).locator('.bar-row').evaluateAll((rows) => rows.map((r) => Number(r.dataset.value)));
  await page.getByRole('button', { name: '[10, 20, 30]' }).click();
  await page.locator('#scale-own-tau').fill('1');
  await page.locator('#scale-own-tau').dispatchEvent('input');
  await settled(page);
  assert.equal(await own.locator('.bars').count(), 2);
  const opened = await openPage(browser, new URL(link, page.url()).href);
  await opened.waitForFunction(() => window.attnscope?.app?.phase === 'ready', null, { timeout: 120_000 });
  assert.equal(await opened.inputValue('#scale-row'), '2, 4, 8');
  assert.equal(await opened.locator('.view-scale output[for="scale-own-tau"]').innerText(), 'τ = 3.16');
  await opened.waitForFunction(() => document.querySelectorAll('.view-scale .card .bars').length >= 2);
  const openedBars = await opened.locator('.view-scale .card').first().locator('.bars').nth(1).locator('.bar-row').evaluateAll((rows) => rows.map((r) => Number(r.dataset.value)));
  assert.deepEqual(openedBars, sharedBars, 'the link shows the softmax its maker saw');
  assert.deepEqual(opened.consoleErrors, []);
  await opened.close();

  const T = await tokenCount();
  // No query followed (an earlier view's may be): the keyboard then starts at cell (0, 0).
  await page.evaluate(() => window.attnscope.app.set({ query: null }));
  await settled(page);
  assert.equal(await page.locator('.followed-entropy').count(), 0);
  const { layer, head } = await page.evaluate(() => window.attnscope.app.state);
  const probs = await tensor(`layers.${layer}.attn.probs`);
  const canvas = page.locator('.view-scale .heatmap-canvas');
  for (const [r, c] of [
    [T - 1, 2],
    [3, 1],
  ]) {
    const cell = await readCell(page, canvas, r, c);
    close(Number(cell.value), probs[(head * T + r) * T + c], 1e-6, `probs[${head}, ${r}, ${c}] at τ = √d`);
  }
  const before = await page.locator('.view-scale .bars').nth(2).locator('.bar-row').last().getAttribute('data-value');
  const slider = page.locator('#scale-tau');
  await slider.focus();
  for (let n = 0; n < 12; n++) await slider.press('ArrowLeft');
  await settled(page);
  const divisor = await page.evaluate(() => window.attnscope.app.state.divisor);
  assert.ok(divisor < Math.sqrt(D), `a smaller divisor, got ${divisor}`);
  const afterwards = await page.locator('.view-scale .bars').nth(2).locator('.bar-row').last().getAttribute('data-value');
  assert.ok(Number(afterwards) < Number(before), 'a smaller divisor sharpens the row: lower entropy');
  const markerLabels = () => page.locator('.view-scale .chart-marker-label').allTextContents();
  assert.deepEqual(await markerLabels(), ['√d', 'τ'], 'τ and √d marked apart on the entropy curve');
  // A row clicked is followed: its bar marked, its entropy at this τ set beside the one at √d.
  await readCell(page, canvas, T - 1, 0);
  await canvas.press('Enter');
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.app.state.query), T - 1);
  const note = await page.locator('.followed-entropy').innerText();
  assert.match(note, new RegExp(`\\(position ${T - 1}, counting from 0\\): ${Number(afterwards).toFixed(2)} bits at τ = ${divisor.toFixed(2)}, [0-9.]+ bits at τ = √d`));
  await shot('deep-scale');
  await page.evaluate(() => window.attnscope.app.set({ divisor: null }));
  await settled(page);
  // At τ = √d the two markers are one line and one label, not two labels stacked.
  assert.deepEqual(await markerLabels(), ['τ = √d']);
  assert.equal(await page.locator('.view-scale .chart-marker').count(), 1);
});

test('MHA / GQA / MQA on a trained model: all three designs on random weights of its shape, and the page says so', async () => {
  const trained = await openPage(browser, `${server.url}#view=gqa&lang=en`);
  await trained.waitForFunction(() => window.attnscope?.app?.source?.kind === 'builtin', null, { timeout: 120_000 });
  await settled(trained);
  const nKV = await trained.evaluate(() => window.attnscope.app.model.num_key_value_heads);
  const same = trained.locator(`.view-gqa .multiples .panel-cell[data-kv="${nKV}"]`);
  assert.match(await same.locator('.panel-title').innerText(), new RegExp(`^GQA · ${nKV} KV heads \\(this model’s layout\\)$`));
  // The designs are titled in words, not nKV: "MQA · 1 KV head".
  assert.equal(await trained.locator('.view-gqa .multiples .panel-cell[data-kv="1"] .panel-title').innerText(), 'MQA · 1 KV head');
  assert.equal(await same.locator('canvas').count(), 1, 'its attention, from a random model of the same shape');
  assert.match(await trained.locator('.view-gqa .variants-note').innerText(), /random weights \(seed \d+\)/);
  assert.deepEqual(trained.consoleErrors, []);
  await trained.close();
});

test('MHA / GQA / MQA: repeat_kv groups, three variants, KV-cache bytes from the core', async () => {
  await go(page, 'gqa');
  assert.equal(await page.locator('.view-gqa .kv-groups .kv-group').count(), NKV);
  assert.deepEqual(await page.locator('.view-gqa .kv-group[data-kv="0"] .q-head').evaluateAll((n) => n.map((x) => x.dataset.head)), ['0', '1']);
  // A query head's map is a click away from being the page's head (and marked so).
  const before = await page.evaluate(() => window.attnscope.app.state.head);
  const other = before === 3 ? 2 : 3;
  await page.locator(`.view-gqa .q-head[data-head="${other}"]`).click();
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.app.state.head), other);
  assert.equal(await page.locator(`.view-gqa .q-head[data-head="${other}"]`).getAttribute('class'), 'q-head selected');
  assert.ok((await page.locator('.view-gqa .q-head canvas').first().boundingBox()).width >= 60, 'a query head is drawn large enough to read');
  await page.evaluate((head) => window.attnscope.app.set({ head }), before);
  await settled(page);
  const variants = page.locator('.view-gqa .multiples .panel-cell');
  assert.deepEqual(await variants.evaluateAll((n) => n.map((x) => x.dataset.kv)), ['4', '2', '1']);
  // The three compared maps are read like any attention map: tokens on both axes, the colour key.
  for (const cell of await variants.all()) {
    const canvas = cell.locator('canvas');
    assert.notEqual(await canvas.getAttribute('data-rotated-labels'), '', 'the key columns labelled with their tokens');
    assert.equal(await canvas.getAttribute('data-skipped-labels'), '0', 'every row and column labelled');
    assert.ok(await cell.locator('.heatmap-legend *').count() > 0, 'a colour key');
  }
  const T = await tokenCount();
  assert.match(await variants.nth(2).innerText(), new RegExp(`k_cache \\[1, ${T}, 1, ${D}\\]`));
  // On random weights the current model is one of the three, named so.
  assert.match(await variants.nth(1).locator('.panel-title').innerText(), /\(this model\)$/);
  assert.doesNotMatch(await page.locator('.view-gqa .variants-note').innerText(), /random weights/);
  const bytes = (config, kv, col) => page.locator(`.view-gqa tr[data-config="${config}"][data-kv="${kv}"] td`).nth(col).getAttribute('data-bytes');
  // MiniMind-3: 2 (K and V) × 8 layers × nKV × 96 × 4 bytes.
  assert.equal(await bytes('minimind3', 4, 2), String(2 * 8 * 4 * 96 * 4));
  assert.equal(await bytes('minimind3', 8, 2), String(2 * 8 * 8 * 96 * 4));
  assert.equal(await bytes('minimind3', 1, 2), String(2 * 8 * 1 * 96 * 4));
  assert.equal(await bytes('minimind3', 4, 3), String(2 * 8 * 4 * 96 * 4 * 2048));
  assert.equal(await bytes('current', 2, 2), String(2 * 2 * 2 * D * 4));
  // The design each really has is marked: MiniMind-3's GQA with 4 KV heads, this model's 2.
  assert.deepEqual(await page.$$eval('.view-gqa tr.own-layout', (rows) => rows.map((r) => [r.dataset.config, r.dataset.kv, r.children[1].textContent])), [['minimind3', '4', 'GQA (its default)'], ['current', '2', 'GQA (this model’s)']]);
  await page.fill('#gqa-context', '32768');
  await page.press('#gqa-context', 'Enter');
  await settled(page);
  assert.equal(await bytes('minimind3', 4, 3), String(2 * 8 * 4 * 96 * 4 * 32768));
  // An absurd length is the link's largest, 2^20, never Infinity TiB.
  await page.fill('#gqa-context', '1e308');
  await page.press('#gqa-context', 'Enter');
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.getState().context), 2 ** 20);
  assert.equal(await bytes('minimind3', 4, 3), String(2 * 8 * 4 * 96 * 4 * 2 ** 20));
  assert.doesNotMatch(await page.locator('.view-gqa').innerText(), /Infinity|NaN/);
  // ...and the reader is told that the table stopped there.
  assert.match(await page.locator('.view-gqa .context-capped').innerText(), /1,048,576 tokens/);
  // No length at all (−5, 0, empty) is said too: the table's own length, not a silent reset.
  for (const typed of ['-5', '0', '']) {
    await page.fill('#gqa-context', typed);
    await page.press('#gqa-context', 'Enter');
    await settled(page);
    assert.equal(await page.locator('.view-gqa .context-capped').innerText(), 'A context is a whole number of tokens, at least 1, so the table shows 2,048.', `typed ${JSON.stringify(typed)}`);
  }
  await page.fill('#gqa-context', '32768');
  await page.press('#gqa-context', 'Enter');
  await settled(page);
  assert.equal(await page.locator('.view-gqa .context-capped').isVisible(), false);
  await shot('deep-gqa');
});

test('KV cache: prefill then one token at a time, each step equal to full recomputation', async () => {
  await go(page, 'decode');
  const T = await tokenCount();
  // Before any decoding step, the row shown is the prefill's last row, and the page says so.
  assert.match(await page.locator('.decode-query').innerText(), new RegExp(`^This call was the prefill: it ran all ${T} prompt tokens at once\\. Shown is the row of the last one, “.+”, token ${T - 1} \\(counting from 0\\)`));
  await page.locator('#decode-step').click();
  await page.waitForSelector('.decode-table tbody tr:nth-child(2)');
  await page.locator('#decode-step').click();
  await page.waitForSelector('.decode-table tbody tr:nth-child(3)');
  await settled(page);
  const rows = page.locator('.decode-table tbody tr');
  assert.equal(await rows.count(), 3);
  for (let n = 0; n < 3; n++) {
    const cells = rows.nth(n).locator('td');
    assert.equal(await cells.nth(1).innerText(), String(T + n), 'the cache grows by one position per call');
    assert.equal(await cells.nth(2).getAttribute('data-bytes'), String((T + n) * 2 * 2 * NKV * D * 4));
    const diff = await shown(cells.nth(4).locator('output'));
    assert.ok(diff <= 1e-4, `call ${n}: max |cached − full| = ${diff}`);
  }
  assert.equal(await page.locator('.decode-sequence .chip.generated').count(), 3, 'each call chose one token');
  // Whose row is shown: the newest token fed in (the second chosen one, at position T + 1), and what it predicted.
  const chosen = await page.locator('.decode-sequence .chip.generated .chip-piece').allInnerTexts();
  // Each call's token is written in the table as in the chips (a split character is 扇¹ 扇² in both).
  for (let n = 0; n < 3; n++) assert.equal((await rows.nth(n).locator('td').nth(0).innerText()).split(' · id ')[0], chosen[n], `call ${n}'s token as its chip`);
  // The head picker names the heads by their role on the prompt, the page's input.
  await page.waitForFunction(() => [...document.querySelectorAll('.view-decode select[name="head"] option')].some((o) => o.textContent.includes(' · ')));
  // The step's single row is drawn as a readable band, not a strip, with its colour key.
  const rowMap = page.locator('.decode-query + .heatmap');
  assert.ok((await rowMap.locator('canvas').boundingBox()).height >= 36, 'the row is at least 36 px tall');
  assert.equal(await rowMap.locator('.heatmap-legend .legend').count(), 1);
  assert.equal(await page.locator('.decode-query').innerText(), `The query is “${chosen[1]}”, token ${T + 1} (counting from 0): the newest token fed in at this call. At its position the model predicted “${chosen[2]}”.`);
  // The stack marks the future one way: the prefill's zero weights above the diagonal and the keys
  // not generated yet are both hatched as future tokens, and nothing calls them −∞.
  const legendText = await page.locator('.decode-stack .legend').innerText();
  assert.match(legendText, /masked: a future token \(weight 0\)/);
  assert.doesNotMatch(legendText, /−∞/);
  await shot('deep-decode');
  // The generated tokens go into the text: the page then runs the prompt and them as its input.
  const ids = await page.evaluate(() => [...document.querySelectorAll('.decode-sequence .chip-id')].map((c) => Number(c.textContent)));
  const before = await page.evaluate(() => window.attnscope.app.state.text);
  await page.locator('#decode-use').click();
  await settled(page);
  const after = await page.evaluate(() => window.attnscope.app.state);
  assert.ok(after.text.startsWith(before) && after.text.length > before.length, after.text);
  // All of them, but a last one that only starts a character (no text on its own).
  const added = after.text.slice(before.length);
  const whole = await page.evaluate((tail) => window.attnscope.call('decode', { ids: tail }), ids.slice(T));
  assert.ok(whole === added || (whole.startsWith(added) && whole.endsWith('\uFFFD')), `${added} of ${whole}`);
  assert.ok(!added.includes('\uFFFD'));
  await page.evaluate((text) => window.attnscope.app.navigate({ text }), before);
  await settled(page);
});

test('KV cache: generation stops where the model chooses <|im_end|>, as MiniMind’s generate() does', async () => {
  const text = encodeURIComponent('小明把苹果给了小红，她很开心');
  const own = await openPage(browser, `${server.url}index.html#view=decode&lang=en&text=${text}`);
  await own.setViewportSize({ width: 1280, height: 900 });
  await own.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000 });
  await settled(own);
  for (let i = 0; i < 2; i++) {
    if (await own.locator('#decode-run').isDisabled()) break;
    await own.locator('#decode-run').click();
    await settled(own);
  }
  const pieces = await own.locator('.decode-sequence .chip.generated .chip-piece').allInnerTexts();
  const end = pieces.indexOf('<|im_end|>');
  assert.ok(end >= 0, `the built-in model ends this sentence within 17 tokens: ${pieces.join(' ')}`);
  assert.equal(end, pieces.length - 1, 'nothing is generated after <|im_end|>');
  assert.ok(await own.locator('#decode-step').isDisabled());
  assert.ok(await own.locator('#decode-run').isDisabled());
  const note = own.locator('.decode-limit');
  assert.equal(await note.getAttribute('data-reason'), 'end');
  assert.match(await note.innerText(), /^The model chose <\|im_end\|>, which ends a message in MiniMind’s chat format, so generation stops here/);
  // Prefill again starts over, with the buttons back.
  await own.locator('#decode-reset').click();
  await settled(own);
  assert.equal(await own.locator('#decode-step').isDisabled(), false);
  assert.equal(await own.locator('.decode-sequence [data-note="finished"]').count(), 0, 'this prompt does not end a sentence');
  // A prompt that is a finished sentence: its first guess is a line break, and the page says what follows.
  await own.evaluate(() => window.attnscope.app.navigate({ text: 'I love you more than words can say, and I will love you forever.' }));
  await settled(own);
  assert.match(await own.locator('.decode-sequence [data-note="finished"]').innerText(), /^The prompt is a finished sentence, so the model’s first guess is “↵” \(a line break\)/);
  assert.deepEqual(own.consoleErrors, []);
  await own.close();
});

test('flash: the tile walk ends at the naive path, with the core’s max |diff|', async () => {
  await go(page, 'flash');
  const T = await tokenCount();
  await pick('flash', 'query', T - 1);
  await page.selectOption('#flash-tile', '4');
  await settled(page);
  const tiles = Math.ceil(T / 4);
  assert.match(await page.locator('.view-flash .toolbar .hint').innerText(), new RegExp(`1 .* ${tiles}`));
  // The 4 is how many keys a tile holds, not which tile is shown.
  assert.equal(await page.locator('label[for="flash-tile"]').innerText(), 'Tile size');
  for (let n = 1; n < tiles; n++) {
    await page.locator('body').press('ArrowRight');
    await settled(page);
  }
  assert.equal(await page.locator('.flash-table tbody tr').count(), tiles);
  const diff = await shown(page.locator('[data-check="flash"] output'));
  assert.ok(diff <= 1e-5, `max |flash − naive| = ${diff}`);
  // The running max after the last tile is the row's max; l is Σ exp(s − m).
  const state = await page.evaluate(() => window.attnscope.app.state);
  const masked = await tensor(`layers.${state.layer}.attn.masked_scores`);
  const i = state.query ?? T - 1;
  const row = masked.slice((state.head * T + i) * T, (state.head * T + i + 1) * T);
  const m = Math.max(...row);
  const last = page.locator('.flash-table tbody tr').last().locator('td');
  close(await shown(last.nth(2).locator('output')), m, 1e-6, 'm');
  close(await shown(last.nth(3).locator('output')), row.reduce((s, v) => s + Math.exp(v - m), 0), 1e-5, 'l');
  await shot('deep-flash');
});

test('FFN: gate, silu(gate), up, act and down; the strongest neurons with their numbers', async () => {
  await go(page, 'ffn');
  const { layer: l, query } = await page.evaluate(() => window.attnscope.app.state);
  assert.deepEqual(await page.locator('.view-ffn .tensor-name').allInnerTexts(), [`layers.${l}.ffn.gate`, `silu(layers.${l}.ffn.gate)`, `layers.${l}.ffn.up`, `layers.${l}.ffn.act`, `layers.${l}.ffn.out`]);
  // Each map says in words what it holds, and that each has its own colour range.
  assert.deepEqual((await page.locator('.view-ffn .tensor-figure .figure-note').allInnerTexts()).map((s) => s.split(':')[0].split(' = ')[0]), ['gate', 'silu(gate)', 'up', 'act', 'out']);
  assert.match(await page.locator('.view-ffn .card').last().innerText(), /Each map has its own colour range/);
  // The neuron table's signs are the maps' colours: positive red, negative blue (RdBu).
  const hue = (sign) => page.$eval(`.view-ffn .neuron.${sign} .num`, (n) => getComputedStyle(n).color.match(/\d+/g).map(Number));
  const [pos, neg] = [await hue('pos'), await hue('neg')];
  assert.ok(pos[0] > pos[2] && neg[2] > neg[0], `positive ${pos} is red, negative ${neg} is blue`);
  const T = await tokenCount();
  const [gate, up, act] = await Promise.all(['gate', 'up', 'act'].map((n) => tensor(`layers.${l}.ffn.${n}`)));
  const I = act.length / T;
  const i = query ?? T - 1;
  const rows = page.locator('.view-ffn tr[data-neuron]');
  assert.equal(await rows.count(), 5);
  const top = [...act.slice(i * I, (i + 1) * I).keys()].sort((a, b) => Math.abs(act[i * I + b]) - Math.abs(act[i * I + a]))[0];
  assert.equal(await rows.first().getAttribute('data-neuron'), String(top));
  const cells = rows.first().locator('td output');
  assert.equal(await shown(cells.nth(0)), gate[i * I + top]);
  assert.equal(await shown(cells.nth(2)), up[i * I + top]);
  assert.equal(await shown(cells.nth(3)), act[i * I + top]);
  const z = gate[i * I + top];
  close(await shown(cells.nth(1)), z / (1 + Math.exp(-z)), 1e-6, 'silu(gate)');
  await shot('deep-ffn');
});

test('masks: the weight that goes to the future with the mask off, on average and in the row that peeks most', async () => {
  await go(page, 'masks');
  const { shares } = await page.evaluate(async () => {
    const { app } = window.attnscope;
    const name = `layers.${app.state.layer}.attn.probs`;
    const probs = (await app.tensors([name], { causal: false })).get(name);
    const [, T, S] = probs.shape;
    const h = app.state.head;
    const shares = [];
    for (let i = 0; i < T; i++) {
      let future = 0;
      for (let j = i + 1; j < S; j++) future += probs.data[(h * T + i) * S + j];
      shares.push(future);
    }
    return { shares };
  });
  const mean = shares.reduce((a, b) => a + b, 0) / shares.length;
  const top = shares.indexOf(Math.max(...shares));
  const note = await page.locator('.view-masks').innerText();
  assert.match(note, new RegExp(`On average ${(100 * mean).toFixed(1)}% of each row’s attention goes to future tokens when the mask is off\\. Most of all in row ${top} \\(counting from 0\\), “[^”]+”: ${(100 * shares[top]).toFixed(1)}%`));
  // Each row's maps stand level, whatever their captions and legends.
  for (const row of await page.locator('.view-masks .multiples').all()) {
    const tops = await row.locator('canvas.heatmap-canvas').evaluateAll((cs) => cs.map((c) => Math.round(c.getBoundingClientRect().top)));
    assert.equal(new Set(tops).size, 1, `tops ${tops}`);
  }
});

test('masks: the off − on map’s colours span the real query rows, not a padded row whose weights are never used', async () => {
  // The built-in model, whose real rows change far less than a padded one (a random model's change
  // by nearly 1 too), at its previous-token head, with the first token padded.
  const before = await page.evaluate(() => window.attnscope.getState());
  await page.evaluate(() => window.attnscope.setState({ ...window.attnscope.getState(), model: { kind: 'builtin' }, text: '今天天气很好', bos: false, view: 'masks', layer: 2, head: 1, pad: [0] }));
  await until(page, () => window.attnscope.app.model?.num_hidden_layers === 4 && window.attnscope.app.phase === 'ready');
  await settled(page);
  await page.waitForSelector('.view-masks figure[data-panel="off − on"] .legend-ticks');
  const { real, all } = await page.evaluate(async () => {
    const { app } = window.attnscope;
    const name = `layers.${app.state.layer}.attn.probs`;
    const [off, on] = await Promise.all([app.tensors([name], { causal: false }), app.tensors([name], { causal: true })]);
    const [, T, S] = off.get(name).shape;
    const h = app.state.head;
    let real = 0;
    let all = 0;
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < S; j++) {
        const d = Math.abs(off.get(name).data[(h * T + i) * S + j] - on.get(name).data[(h * T + i) * S + j]);
        all = Math.max(all, d);
        if (app.state.mask[i] !== 0) real = Math.max(real, d);
      }
    }
    return { real, all };
  });
  const ticks = await page.locator('.view-masks figure[data-panel="off − on"] .legend-ticks span').allInnerTexts();
  const top = Number(ticks.at(-1));
  assert.ok(Math.abs(top - real) <= 0.01 * real + 1e-3, `the scale ends at ${top}, the real rows' largest change ${real} (every row's: ${all})`);
  assert.ok(all > real * 1.05, `the padded row changes more (${all}) than the real ones (${real}): the test tells the two apart`);
  await page.evaluate((state) => window.attnscope.setState(state), before);
  await until(page, () => window.attnscope.app.model?.num_hidden_layers !== 4 && window.attnscope.app.phase === 'ready');
  await settled(page);
});

test('a causal run’s weights hatch the future wherever they are drawn: Q·K explained, scale, the masks view, the head grid', async () => {
  for (const [view, selector, legendOf] of [
    ['qk', '.view-qk .heatmap-canvas'],
    ['scale', '.view-scale .heatmap-canvas'],
    ['masks', '.view-masks figure[data-panel="attention weights, causal mask on"] .heatmap-canvas'],
    ['grid', '.view-grid .thumb[data-layer="0"][data-head="0"] .heatmap-canvas', '.view-grid .grid-legend'],
  ]) {
    await go(page, view);
    // No query followed: the keyboard then starts at cell (0, 0).
    await page.evaluate(() => window.attnscope.app.set({ query: null }));
    await settled(page);
    const canvas = page.locator(selector).first();
    const future = await readCell(page, canvas, 1, 5);
    assert.equal(future.value, '0', view);
    assert.match(future.text, /this key comes after the query, so the causal mask set its weight to 0/, view);
    const seen = await readCell(page, canvas, 5, 1);
    assert.doesNotMatch(seen.text, /comes after the query/, view);
    const legendText = legendOf ? await page.locator(legendOf).innerText() : await canvas.locator('xpath=ancestor::div[contains(concat(" ", @class, " "), " heatmap ")][1]').innerText();
    assert.match(legendText, /a future token \(weight 0\)/, `${view}: the legend says what the hatching is`);
  }
});

test('output: the top next tokens are the softmax of the logits row, in order', async () => {
  await go(page, 'output');
  const T = await tokenCount();
  await pick('output', 'query', 2);
  const logits = await tensor('logits');
  const V = logits.length / T;
  const row = logits.slice(2 * V, 3 * V);
  const m = Math.max(...row);
  const z = row.reduce((s, v) => s + Math.exp(v - m), 0);
  const best = row.indexOf(m);
  const bars = page.locator('.view-output .prediction .bar-row');
  assert.equal(await bars.count(), 10);
  close(Number(await bars.first().getAttribute('data-value')), 1 / z, 1e-5, 'top probability');
  assert.match(await bars.first().innerText(), new RegExp(`· id ${best}\\b`));
  const ps = await bars.evaluateAll((r) => r.map((x) => Number(x.dataset.value)));
  assert.deepEqual([...ps].sort((a, b) => b - a), ps);
  await shot('deep-output');
});

test('output: temperature, top-k and top-p as MiniMind samples, the draw, and the drawn token written into the text', async () => {
  await go(page, 'output');
  const T = await tokenCount();
  await pick('output', 'query', T - 1);
  const logits = await tensor('logits');
  const V = logits.length / T;
  const row = Array.from(logits.slice((T - 1) * V, T * V));
  const order = row.map((x, id) => ({ id, x })).sort((a, b) => b.x - a.x || a.id - b.id);
  const softmax = (xs) => {
    const m = Math.max(...xs);
    const e = xs.map((x) => Math.exp(x - m));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / z);
  };
  const bars = page.locator('.view-output .sampling .bar-row');
  const shown = () => bars.evaluateAll((r) => r.map((x) => Number(x.dataset.value)));
  const summary = () => page.locator('.sampling-summary').innerText();
  // Temperature 0.5, top-k 3: softmax(logits / 0.5) over the three most likely; the rest are cut to 0.
  await page.evaluate(() => window.attnscope.app.set({ temperature: 0.5, topK: 3, topP: 1 }));
  await settled(page);
  const sharp = softmax(order.slice(0, 3).map((c) => c.x / 0.5));
  const ps = await shown();
  assert.equal(ps.length, 10);
  sharp.forEach((p, n) => close(ps[n], p, 1e-5, `p[${n}] after T = 0.5, top-k 3`));
  assert.deepEqual(ps.slice(3), Array(7).fill(0));
  assert.match(await bars.nth(5).innerText(), /cut \(softmax/);
  assert.match(await summary(), new RegExp(`3 of the ${V.toLocaleString('en-US')} tokens can be drawn`));
  const drawnIndex = await bars.evaluateAll((r) => r.findIndex((x) => x.classList.contains('highlight')));
  assert.ok(drawnIndex >= 0 && drawnIndex < 3, `the drawn token is one of those kept, got row ${drawnIndex}`);
  // top-p 0.5 at temperature 1: the fewest most likely tokens whose probabilities reach one half.
  await page.evaluate(() => window.attnscope.app.set({ temperature: 1, topK: 0, topP: 0.5 }));
  await settled(page);
  const full = softmax(order.map((c) => c.x));
  let kept = 0;
  for (let acc = 0; acc < 0.5; kept++) acc += full[kept];
  assert.match(await summary(), new RegExp(`${kept.toLocaleString('en-US')} of the`));
  // MiniMind's own chat settings (eval_llm.py: temperature 0.85, top-p 0.85) are one click away.
  await page.locator('#sampling-minimind').click();
  await settled(page);
  assert.deepEqual(await page.evaluate(() => { const s = window.attnscope.getState(); return [s.temperature, s.topK, s.topP]; }), [0.85, 0, 0.85]);
  // With nothing cut, the summary says all of them, not "6,400 of the 6,400".
  await page.evaluate(() => window.attnscope.app.set({ temperature: 1, topK: 0, topP: 1 }));
  await settled(page);
  assert.match(await summary(), new RegExp(`^With these settings all ${V.toLocaleString('en-US')} tokens can be drawn`));
  // A new seed is a new draw, and the link keeps it.
  await page.locator('#sampling-again').click();
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.getState().draw), 1);
  // A draw from outside the ten listed is put down to the temperature only above 1; at 1 it is the
  // model's own spread, and the listed tokens' share is said.
  const outsideAt = async (temperature) => {
    await page.evaluate((tau) => window.attnscope.app.set({ temperature: tau, topK: 0, topP: 1 }), temperature);
    await settled(page);
    for (let n = 0; n < 60; n++) {
      const said = await page.locator('.sampling-drawn').innerText();
      if (/not among the top/.test(said)) return said;
      await page.locator('#sampling-again').click();
      await settled(page);
    }
    return null;
  };
  const atOne = await outsideAt(1);
  assert.ok(atOne, 'a draw at temperature 1 lands outside the ten listed within 60 draws');
  const share = (await shown()).reduce((a, b) => a + b, 0);
  assert.match(atOne, new RegExp(`together they hold ${(share * 100).toFixed(share >= 0.1 ? 1 : 2).replace('.', '\\.')}% of the probability`));
  assert.doesNotMatch(atOne, /temperature/);
  assert.match(await outsideAt(2.5), /not among the top 10 above: a temperature above 1 flattens the distribution/);
  // Temperature 0 is greedy: the argmax is taken, there is nothing to draw again.
  await page.locator('#sampling-temperature').fill('0');
  await settled(page);
  assert.match(await summary(), /Temperature 0 means no draw/);
  assert.equal(await page.locator('#sampling-again').count(), 0);
  const best = (await page.locator('.view-output .prediction .bar-row .bar-label').first().innerText()).split(' · ')[0];
  assert.ok((await page.locator('.sampling-drawn').innerText()).startsWith(`Taken: “${best}”, the most likely token.`), best);
  // At an earlier position there is no end of the text to add to.
  await pick('output', 'query', 1);
  assert.equal(await page.locator('#sampling-append').count(), 0);
  assert.match(await page.locator('.sampling-drawn').innerText(), /choose the last position/);
  await pick('output', 'query', T - 1);
  // The drawn token goes on the end of the text, and the page runs one token further.
  const before = await page.evaluate(() => window.attnscope.app.state.text);
  const piece = await page.evaluate((id) => window.attnscope.call('decode', { ids: [id] }), order[0].id);
  // A blank (a space, a line break) is said to be one: its mark alone reads as nothing much.
  assert.equal(/\(a blank\)/.test(await page.locator('#sampling-append').innerText()), /^\s+$/.test(piece), piece);
  await page.locator('#sampling-append').click();
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.app.state.text), before + piece);
  const ran = await page.evaluate(async () => {
    const { app, call } = window.attnscope;
    return { ids: app.state.tokens.ids, expected: (await call('tokenize', { text: app.state.text })).ids };
  });
  assert.deepEqual(ran.ids.slice(-ran.expected.length), ran.expected, 'every view now runs the longer text');
  assert.ok(ran.ids.length - ran.expected.length <= 1, 'after BOS, if the model has one');
  await page.evaluate((text) => window.attnscope.app.navigate({ text }), before);
  await settled(page);
  await page.evaluate(() => window.attnscope.app.set({ temperature: 1, topK: 0, topP: 1, draw: 0, query: null }));
  await settled(page);
});

test('every deep view renders in 简体中文 too', async () => {
  await page.locator('#lang-switch').click();
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.app.state.lang), 'zh');
  assert.equal(await page.locator('.tab[data-view="lessons"]').innerText(), '课程');
  for (const view of ['qk', 'rope', 'scale', 'gqa', 'decode', 'flash', 'ffn', 'output']) {
    await go(page, view);
    const text = await page.locator('.view').innerText();
    assert.match(text, /[\u4e00-\u9fff]/, `${view} shows Chinese`);
    await shot(`deep-zh-${view}`);
  }
  await page.locator('#lang-switch').click();
  await page.waitForFunction(() => document.documentElement.lang === 'en');
  await settled(page);
});

test('the tabs are reachable by keyboard and every new view has a link', async () => {
  await page.locator('.tab[data-view="stepper"]').focus();
  for (const view of ['qk', 'rope', 'scale', 'gqa', 'decode', 'flash', 'ffn', 'output', 'lessons']) {
    const tab = page.locator(`.tab[data-view="${view}"]`);
    assert.match(await tab.getAttribute('href'), new RegExp(`view=${view}`));
  }
  // The basics' last tab but one, then Tab to the next: Output.
  await page.locator('.tab[data-view="masks"]').focus();
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.view-output');
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.app.state.view), 'output');
});

test('dark mode follows the toggle, with the page’s own colours', async () => {
  await go(page, 'qk');
  await page.locator('#theme-toggle').click();
  await settled(page);
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const [r, g, b] = bg.match(/\d+/g).map(Number);
  assert.ok(r + g + b < 150, `a dark background, got ${bg}`);
  await shot('deep-dark-qk');
  await go(page, 'rope');
  await shot('deep-dark-rope');
  // The second press picks the system's own theme (light here): the page follows the system again.
  await page.locator('#theme-toggle').click();
  await settled(page);
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme ?? null), null);
  assert.equal(await page.evaluate(() => localStorage.getItem('attnscope.theme')), '');
  const light = (await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).match(/\d+/g).map(Number);
  assert.ok(light[0] + light[1] + light[2] > 600, `a light background again: ${light}`);
});

test('on a phone-sized screen the view comes before the input panels', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await go(page, 'qk');
  const view = await page.locator('#view').boundingBox();
  const input = await page.locator('.sidebar').boundingBox();
  assert.ok(view.y < input.y, 'the view is first');
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390 + 1, `no sideways scrolling of the page, scrollWidth ${width}`);
  await shot('deep-phone-qk');
  assert.ok(await page.locator('.tab.active').evaluate((tab) => tab.getBoundingClientRect().right <= innerWidth), 'the active tab is scrolled into the strip');
  // The strip shows › where more tabs lie beyond its edge, and a tap on it scrolls on.
  const nav = page.locator('#nav');
  await nav.evaluate((n) => (n.scrollLeft = 0));
  await until(page, () => getComputedStyle(document.querySelector('#nav .tabs-more.end')).visibility === 'visible');
  // The fades follow the strip's scroll event, which comes after the scroll: waited for, then checked.
  await until(page, () => getComputedStyle(document.querySelector('#nav .tabs-more.start')).visibility === 'hidden').catch(() => {});
  assert.equal(await page.locator('#nav .tabs-more.start').evaluate((n) => getComputedStyle(n).visibility), 'hidden', 'nothing before the first tab');
  await page.locator('#nav .tabs-more.end').click();
  await until(page, () => document.querySelector('#nav').scrollLeft > 50);
  await until(page, () => getComputedStyle(document.querySelector('#nav .tabs-more.start')).visibility === 'visible');
  await page.screenshot({ path: 'artifacts/screenshots/deep-phone-qk-screen.png' });
  await go(page, 'decode');
  await shot('deep-phone-decode');
  // The masks view asks for a click on a token chip, a long way down on a phone: its button goes there.
  await go(page, 'masks');
  if (await page.evaluate(() => window.attnscope.app.state.mask.every((m) => m === 1))) {
    await page.locator('.view-masks .to-chips').click();
    await until(page, () => {
      const chip = document.querySelector('.sidebar .chips .chip').getBoundingClientRect();
      return chip.top >= 0 && chip.bottom <= innerHeight && document.activeElement?.classList.contains('chip');
    });
  } else assert.fail('the masks view opens with nothing padded');
  await page.setViewportSize({ width: 1400, height: 1000 });
});

test('no console errors', () => {
  assert.deepEqual(page.consoleErrors, []);
});

// Bad input a reader can make by clicking: every token marked as padding leaves the scale view no row
// to measure; it says so rather than drawing charts whose axes read ±∞. A size field left empty shows
// the value the model was built with.
test('every token padded: the scale view says there is no row to measure; an empty size field shows the default used', async () => {
  const own = await openPage(browser, `${server.url}${randomModel({ view: 'scale' })}`);
  await own.waitForFunction(() => window.attnscope?.app?.phase === 'ready', null, { timeout: 120_000 });
  await settled(own);
  const T = await own.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  await own.evaluate((n) => window.attnscope.setState({ pad: Array.from({ length: n }, (_, i) => i) }), T);
  await settled(own);
  assert.match(await own.locator('.scale-all-padded').innerText(), /^Every token is marked as padding, so no query row is left to measure/);
  assert.equal(await own.locator('.view-scale svg line[y1="NaN"]').count(), 0);
  const layers = own.locator('input[name="num_hidden_layers"]');
  await layers.fill('');
  await layers.dispatchEvent('change');
  await settled(own);
  await own.waitForFunction(() => document.querySelector('input[name="num_hidden_layers"]').placeholder !== '');
  const built = await own.evaluate(() => window.attnscope.app.model.num_hidden_layers);
  assert.equal(await layers.getAttribute('placeholder'), String(built), 'the default the model was built with');
  assert.deepEqual(own.consoleErrors, []);
  await own.close();
});

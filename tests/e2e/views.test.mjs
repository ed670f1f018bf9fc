// The views, driven as a learner drives them: type a sentence, step through the whole pipeline,
// switch layer and head, open a head from the grid, toggle the causal mask and a padding chip, give
// the core a config it refuses. Every view is screenshotted into artifacts/screenshots/views-*.png.
// A value read from a heatmap's tooltip must be the worker's own tensor value (window.attnscope),
// and the page must log no console errors.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { go as goTo, launch, openPage, randomModel, readCell as readHeatmapCell, screenshot, settled as pageSettled, startServer } from './helpers.mjs';

const SENTENCE = 'Attention lets every token look back at the others.';

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await launch();
  page = await openPage(browser, `${server.url}${randomModel({ view: 'stepper' })}`);
  await page.setViewportSize({ width: 1400, height: 1000 });
  await settled();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const settled = () => pageSettled(page);
const go = (view) => goTo(page, view);
const readCell = (canvas, r, c) => readHeatmapCell(page, canvas, r, c);

// The f32 at a flat index of a tensor of the current run, as the worker's Session returns it.
function tensorValue(name, index) {
  return page.evaluate(async ([n, i]) => (await window.attnscope.tensor(n))[i], [name, index]);
}

function sameF32(shown, actual) {
  assert.equal(Math.fround(Number(shown)), actual, `tooltip shows ${shown}, tensor holds ${actual}`);
}

test('the page loads a default model and shows its tokens', async () => {
  const chips = await page.locator('.chip').count();
  assert.ok(chips > 0, 'the sample sentence has token chips');
  assert.match(await page.locator('#status').innerText(), /cpu|gpu/i);
  await screenshot(page, 'views-stepper-default');
});

test('typing a sentence tokenizes it live into chips with ids', async () => {
  await page.fill('#text', SENTENCE);
  await page.waitForFunction((n) => window.attnscope.app.state.text === n, SENTENCE);
  await settled();
  const { ids, pieces } = await page.evaluate(() => window.attnscope.app.state.tokens);
  assert.ok(ids.length >= 8, `"${SENTENCE}" has ${ids.length} tokens`);
  assert.equal(await page.locator('.chip').count(), ids.length);
  assert.equal(await page.locator('.chip .chip-id').first().innerText(), String(ids[0]));
  assert.equal(pieces.length, ids.length);
  // The ␣ of a word's token is said once, with the first such token of this text as the example.
  const first = pieces.find((p) => /^[ Ġ]\S/.test(p));
  assert.equal(await page.locator('.chips-marks-note').innerText(), `In “␣${first.slice(1)}”, ␣ is a space: the space before an English word usually goes into the token that starts the word, and sometimes stands as a token of its own.`);
});

test('a right-to-left override in the text turns no page words around: named as the chips name it, the sentence line isolated', async () => {
  const text = 'start \u202e reversed: 123 end';
  await page.fill('#text', text);
  await page.waitForFunction((n) => window.attnscope.app.state.text === n, text);
  await settled();
  await page.evaluate(() => window.attnscope.app.set({ view: 'decode' }));
  await settled();
  const note = await page.locator('.view-decode').innerText();
  assert.match(note, /U\+202E¹ U\+202E²: one character whose UTF-8 bytes/, 'the split character named by its code point');
  assert.ok(!note.includes('\u202e'), 'no raw override in the view’s words');
  // The phone's sentence line holds the text in a <bdi>, the quote marks outside it.
  assert.equal(await page.locator('#phone-sentence bdi').first().textContent(), text);
  await page.fill('#text', SENTENCE);
  await page.waitForFunction((n) => window.attnscope.app.state.text === n, SENTENCE);
  await page.evaluate(() => window.attnscope.app.set({ view: 'overview' }));
  await settled();
});

// Typing waits for a pause before it tokenizes: a tab or the language button clicked before then
// keeps what was typed (the box once went back to the old text, the typing lost).
test('text typed just before a tab or the language button is clicked is kept and run', async () => {
  for (const [typed, click] of [['a cat sat on the mat', '.tab[data-view="grid"]'], ['the mat sat on a cat', '#lang-switch']]) {
    await page.fill('#text', typed);
    await page.click(click);
    await page.waitForFunction((s) => window.attnscope.app.state.text === s, typed);
    await settled();
    assert.equal(await page.inputValue('#text'), typed, click);
    const { tokens } = await page.evaluate(() => window.attnscope.app.state);
    assert.equal(tokens.pieces.join('').replace(/Ġ/g, ' ').trim(), typed, `${click}: the view runs the typed text`);
  }
  await page.click('#lang-switch');
  await page.waitForFunction(() => window.attnscope.app.state.lang === 'en');
  // Longer than a link carries: it runs whole, and the box says the link keeps only the first 2,000.
  const long = 'ab '.repeat(700);
  await page.fill('#text', long);
  await page.waitForFunction((s) => window.attnscope.app.state.text === s, long);
  await settled();
  assert.equal(await page.locator('.long-text').innerText(), 'The text is 2,100 characters; a link (and so a reload or a shared copy) keeps only the first 2,000.');
  // Back and Forward keep all of it: the history entry holds the whole text, the link its first 2,000.
  await page.waitForFunction(() => location.hash.startsWith('#s3.') && history.state?.text?.length === 2100);
  await page.click('.tab[data-view="attention"]');
  await page.waitForSelector('.view-attention');
  await settled();
  await page.goBack();
  await page.waitForFunction(() => window.attnscope.app.state.view === 'grid');
  await settled();
  assert.equal(await page.inputValue('#text'), long, 'Back brings the whole text');
  assert.equal(await page.evaluate(() => window.attnscope.app.state.text), long);
  await page.fill('#text', SENTENCE);
  await page.waitForFunction((n) => window.attnscope.app.state.text === n, SENTENCE);
  assert.ok(await page.locator('.long-text').isHidden());
  // Typed and the page reloaded at once (within the typing pause, or a run in flight): the reload
  // opens the typed text, not the link's older one.
  await page.fill('#text', 'a reload keeps this');
  await page.reload();
  await page.waitForFunction(() => window.attnscope?.app?.phase === 'ready');
  await settled();
  assert.equal(await page.inputValue('#text'), 'a reload keeps this');
  assert.equal(await page.evaluate(() => window.attnscope.app.state.text), 'a reload keeps this');
  await page.fill('#text', SENTENCE);
  await page.waitForFunction((n) => window.attnscope.app.state.text === n, SENTENCE);
  await settled();
});

test('the stepper walks every pipeline step with the arrow keys, each with a shape and a heatmap', async () => {
  await go('stepper');
  await page.locator('[data-step="embed"]').click();
  await settled();
  assert.equal(await page.locator('.rail-step').count(), 21);
  // The walk: embed, each layer's 17 steps, final_norm, logits and the prediction (pipeline.test.mjs
  // checks the layer boundaries and the prediction's numbers).
  const layers = await page.evaluate(() => window.attnscope.app.model.num_hidden_layers);
  const total = 1 + 17 * layers + 3; // 17: the built-in model is GQA, so repeat_kv is a step
  for (let i = 0; i < total; i++) {
    if (i > 0) {
      await page.locator('body').press('ArrowRight');
      await settled();
    }
    const kicker = await page.locator('.step-kicker').innerText();
    assert.match(kicker, new RegExp(`\\b${i + 1} / ${total}`));
    const step = await page.locator('.rail-step.active').getAttribute('data-step');
    if (step === 'prediction') {
      assert.equal(i, total - 1, 'the prediction is the last step');
      assert.equal(await page.locator('.view-stepper .bar-row').count(), 10);
    } else {
      const shapes = await page.locator('.tensor-figure .shape').allInnerTexts();
      assert.ok(shapes.length > 0, `step ${i + 1} shows a tensor`);
      for (const shape of shapes) assert.match(shape, /^\[1, \d+/, `shape ${shape} starts with the batch`);
      assert.ok((await page.locator('.tensor-figure canvas').count()) > 0);
      // A step drawn one panel per head keeps each panel wide enough to read its token labels.
      const panels = await page.locator('.multiples.heads .panel-cell').evaluateAll((cells) => cells.map((c) => c.getBoundingClientRect().width));
      assert.ok(panels.every((w) => w >= 280), `step ${i + 1}: per-head panels ${panels.map(Math.round)} px wide`);
    }
    assert.ok((await page.locator('.formula').innerText()).length > 3);
    const layer = await page.evaluate(() => window.attnscope.app.state.layer);
    if (i >= 1 && i < total - 3) assert.match(kicker, new RegExp(`layer ${layer} of ${layers}`, 'i'));
    // Every step kind once: the first layer's steps and the global ones.
    if (i < 18 || i >= total - 3) await screenshot(page, `views-stepper-${String(i + 1).padStart(2, '0')}-${step}`);
  }
  await page.locator('body').press('ArrowLeft');
  await settled();
  assert.match(await page.locator('.step-kicker').innerText(), new RegExp(`${total - 1} / ${total}`));
});

test('the stepper shows q as [1, T, nH, d] and switches layer', async () => {
  await page.locator('[data-step="qkv"]').click();
  await settled();
  const { ids } = await page.evaluate(() => window.attnscope.app.state.tokens);
  const shapes = await page.locator('.tensor-figure .shape').allInnerTexts();
  assert.deepEqual(shapes, [`[1, ${ids.length}, 4, 16]`, `[1, ${ids.length}, 2, 16]`, `[1, ${ids.length}, 2, 16]`]);
  // The formula's letters with this run's numbers, said under it.
  assert.equal(await page.locator('.step-symbols').innerText(), `where T = ${ids.length} tokens; nH = 4 query heads; nKV = 2 KV heads; d = 16, each head’s size (head_dim).`);
  await page.selectOption('.view-stepper select[name="layer"]', '1');
  await settled();
  assert.match(await page.locator('.step-kicker').innerText(), /layer 1/i);
  assert.equal(await page.locator('.tensor-name').first().innerText(), 'layers.1.attn.q');
  const canvas = page.locator('.tensor-figure canvas').first();
  const { value, text } = await readCell(canvas, 2, 5);
  assert.match(text, /layers\.1\.attn\.q/);
  sameF32(value, await tensorValue('layers.1.attn.q', 2 * 64 + 5));
});

test('the attention map shows one head with exact values at each stage', async () => {
  await go('attention');
  await page.selectOption('.view-attention select[name="head"]', '3');
  await settled();
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  const canvas = page.locator('.attention-figure canvas');
  // The key labels turn together: once one word is turned, every word is (one character stays
  // upright). At 1000 px wide some of this sentence's words fit their columns and some do not.
  await page.setViewportSize({ width: 1000, height: 1000 });
  await settled();
  // The map redraws after the resize (a frame or more later): waited for until its words turn.
  await page.waitForFunction(() => (document.querySelector('.attention-figure canvas').dataset.rotatedLabels ?? '') !== '');
  const pieces = await page.evaluate(() => window.attnscope.app.state.tokens.pieces);
  const rotated = (await canvas.getAttribute('data-rotated-labels')).split('\n').filter(Boolean);
  const words = pieces.filter((p) => [...p].length > 1);
  assert.ok(rotated.length > 0, 'this sentence has words too long to stand upright');
  assert.equal(rotated.length, words.length, `every word turned: ${rotated.join(' ')}`);
  await page.setViewportSize({ width: 1400, height: 1000 });
  await settled();
  const { value, text } = await readCell(canvas, 4, 2);
  assert.match(text, /\[0, 3, 4, 2\]/); // [batch, head, query, key], as the shape [1, nH, T, S] beside it
  sameF32(value, await tensorValue('layers.1.attn.probs', (3 * T + 4) * T + 2));

  // The mouse sees the same cell the keyboard focused.
  const box = await page.locator('.heatmap-focus').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  assert.equal(await page.locator('#tooltip').getAttribute('data-value'), value);
  // The cell's row label and column label are lit (a crosshair), level with the cell, and the
  // input's chips light its query (Q) and key (K).
  const guides = await page.locator('.attention-figure .heatmap-guide').all();
  const [row, col] = await Promise.all(guides.map((g) => g.boundingBox()));
  assert.ok(row && Math.abs(row.y + row.height / 2 - (box.y + box.height / 2)) < 2 && row.x + row.width <= box.x, `row guide beside the cell: ${JSON.stringify(row)}`);
  assert.ok(col && Math.abs(col.x + col.width / 2 - (box.x + box.width / 2)) < 2 && col.y + col.height <= box.y, `column guide above the cell: ${JSON.stringify(col)}`);
  const lit = () => page.evaluate(() => Object.fromEntries([...document.querySelectorAll('.chip[data-lit]')].map((c) => [c.dataset.index, c.dataset.lit])));
  assert.deepEqual(await lit(), { 4: 'Q', 2: 'K' });
  await screenshot(page, 'views-attention-probs');
  await page.mouse.move(5, 5);
  assert.deepEqual(await lit(), {}, 'the chips go dark when the pointer leaves the map');
  assert.equal(await page.locator('.attention-figure .heatmap-guide:not([hidden])').count(), 0);

  // Row sums are drawn beside the weights (each row sums to 1), never beside scores.
  assert.equal(await canvas.getAttribute('data-row-sums'), 'true');
  for (const stage of ['scores', 'masked']) {
    await page.locator(`.segment[data-stage="${stage}"]`).click();
    await settled();
    assert.equal(await canvas.getAttribute('data-row-sums'), 'false', `no Σ row beside the ${stage}`);
    await screenshot(page, `views-attention-${stage}`);
  }
  const masked = await readCell(canvas, 1, 5);
  assert.equal(masked.value, '-∞', 'a future key is masked with -∞');
  // The tutorial's step 2, Q × Kᵀ before ÷ √d: the recorded scaled scores × √head_dim, named so.
  await page.locator('.segment[data-stage="scores"]').click();
  await settled();
  const scaled = Number((await readCell(canvas, 3, 1)).value);
  await page.locator('.segment[data-stage="raw"]').click();
  await settled();
  const raw = Number((await readCell(canvas, 3, 1)).value);
  const d = await page.evaluate(() => window.attnscope.app.model.head_dim);
  assert.ok(Math.abs(raw - scaled * Math.sqrt(d)) <= 1e-4 * Math.max(1, Math.abs(raw)), `raw ${raw} = scaled ${scaled} × √${d}`);
  assert.match(await page.locator('.attention-figure figcaption').innerText(), new RegExp(`attn\\.scores\\[0, \\d+\\] × √${d}`));
  assert.match(await page.locator('.attention-figure .explain').innerText(), /before ÷ √d/);
  // How large this head's raw scores get, and the RMS of its q′ and k′ numbers, from the trace.
  const sizes = await page.evaluate(async () => {
    const { layer, head } = window.attnscope.app.state;
    const { num_attention_heads: nH, num_key_value_heads: nKV, head_dim: d } = window.attnscope.app.model;
    const [scores, q, k] = await Promise.all(['attn.scores', 'attn.q_rope', 'attn.k_rope'].map((n) => window.attnscope.tensor(`layers.${layer}.${n}`)));
    const T = q.length / (nH * d);
    const rms = (x, h, heads) => {
      let s = 0;
      for (let r = 0; r < T; r++) for (let c = 0; c < d; c++) s += x[(r * heads + h) * d + c] ** 2;
      return Math.sqrt(s / (T * d));
    };
    let max = 0;
    for (const v of scores.subarray(head * T * T, (head + 1) * T * T)) if (Number.isFinite(v)) max = Math.max(max, Math.abs(v) * Math.sqrt(d));
    return { max: max.toFixed(1), q: rms(q, head, nH).toFixed(2), k: rms(k, Math.floor(head / (nH / nKV)), nKV).toFixed(2), d };
  });
  assert.match(await page.locator('.attention-figure .raw-size').innerText(), new RegExp(`^In this head the raw scores reach ±${sizes.max} with d = ${sizes.d}: here the numbers of q′ and k′ have an RMS of ${sizes.q} and ${sizes.k},`));
  await screenshot(page, 'views-attention-raw');
  await page.locator('.segment[data-stage="probs"]').click();
  await settled();
  // On the weights the future is hatched too, and read as what it is: weight 0, masked.
  const future = await readCell(canvas, 1, 5);
  assert.equal(future.value, '0');
  assert.match(future.text, /masked: this key comes after the query, so the causal mask set its weight to 0/);
  assert.match(await page.locator('.attention-figure .legend').innerText(), /masked: a future token \(weight 0\)/);

  // A click on a row follows it, and its sentence appears above the map: the page scrolls by as
  // much, so the map stays under the pointer and the tooltip still names the row clicked.
  await page.evaluate(() => window.scrollTo(0, 0));
  const top = (await canvas.boundingBox()).y;
  const cell = await page.locator('.heatmap-focus').boundingBox();
  const [x, y] = [cell.x + cell.width / 2, cell.y + cell.height / 2];
  await page.mouse.move(x, y);
  const clickedRow = Number((await page.locator('#tooltip').innerText()).match(/query position\s+(\d+)/)[1]);
  await page.mouse.click(x, y);
  await page.waitForFunction((r) => window.attnscope.getState().query === r, clickedRow);
  await settled();
  assert.equal(await page.locator('.followed-lead').count(), 1);
  assert.ok(Math.abs((await canvas.boundingBox()).y - top) <= 1, `the map stays where it was: ${top} → ${(await canvas.boundingBox()).y}`);
  await page.mouse.move(x, y + 1);
  assert.match(await page.locator('#tooltip').innerText(), new RegExp(`query position\\s+${clickedRow} `));
  await page.evaluate(() => window.attnscope.app.set({ query: null }));
  await settled();
  // A click on a row's word, left of the map, follows that row too (readers click the word first);
  // the tooltip over the word says so, and a second click lets the row go.
  const guide = page.locator('.attention-figure .heatmap-guide').first();
  await page.mouse.move(x, y);
  const litRow = await guide.boundingBox();
  const word = [litRow.x + litRow.width / 2, litRow.y + litRow.height / 2];
  await page.mouse.move(...word);
  const wordTip = await page.locator('#tooltip').innerText();
  assert.match(wordTip, /^Click to follow “.+”, position \d+ \(counting from 0\), as the query$/);
  await page.mouse.click(...word);
  await page.waitForFunction((r) => window.attnscope.getState().query === r, Number(wordTip.match(/position (\d+)/)[1]));
  await settled();
  await page.mouse.move(word[0], word[1] + 1);
  assert.match(await page.locator('#tooltip').innerText(), /^Click to stop following “.+”$/);
  await page.mouse.click(word[0], word[1] + 1);
  await page.waitForFunction(() => window.attnscope.getState().query === null);
  await settled();
});

test('the head grid groups heads by KV head and opens a head on click', async () => {
  await go('grid');
  assert.deepEqual(await page.locator('.kv-label').allInnerTexts(), ['KV 0', 'KV 1']);
  assert.equal(await page.locator('.thumb').count(), 2 * 4);
  // Every role a thumbnail is labelled with is explained once above the grid, with ⊘.
  const legend = await page.locator('.role-legend li').allInnerTexts();
  assert.equal(legend.length, 7);
  assert.match(legend.at(-1), /^⊘ knocks the head out/);
  // A fixed-token head's label is its arrow and token (→ “I” 0.35): the key writes it that way.
  assert.match(await page.locator('.role-legend li[data-role="fixed"]').innerText(), /^one fixed token \(→ “word”\) /);
  const shownRoles = await page.locator('.thumb .role-badge').evaluateAll((badges) => [...new Set(badges.map((b) => [...b.classList].find((c) => c.startsWith('role-') && c !== 'role-badge')))]);
  for (const role of shownRoles.filter((r) => r !== 'role-none')) assert.equal(await page.locator(`.role-legend .${role}`).count(), 1, role);
  await screenshot(page, 'views-grid');
  await page.locator('.thumb[data-layer="0"][data-head="2"] canvas').click();
  await page.waitForSelector('.view-attention');
  await settled();
  assert.equal(await page.locator('.view-attention select[name="layer"]').inputValue(), '0');
  assert.equal(await page.locator('.view-attention select[name="head"]').inputValue(), '2');
});

test('turning the causal mask off removes every -∞ and lets queries see later keys', async () => {
  await page.locator('#cfg-causal').uncheck();
  await settled();
  const masked = await page.evaluate(async () => Array.from(await window.attnscope.tensor('layers.0.attn.masked_scores')));
  assert.ok(!masked.includes(-Infinity));
  await page.locator('.segment[data-stage="masked"]').click();
  await settled();
  await screenshot(page, 'views-attention-causal-off');
  await page.locator('#cfg-causal').check();
  await settled();
  const again = await page.evaluate(async () => Array.from(await window.attnscope.tensor('layers.0.attn.masked_scores')));
  assert.ok(again.includes(-Infinity));
});

test('a padding chip masks its key column with -1e9 in every view', async () => {
  const chip = page.locator('.chip[data-index="1"]');
  await chip.click();
  await settled();
  assert.equal(await chip.getAttribute('aria-pressed'), 'true');
  // The status beside the run says the input has padding, on every view.
  assert.match(await page.locator('#status').innerText(), / · padding tokens: 1$/);
  // The overview's token strip strikes the padded token through too.
  await go('overview');
  assert.deepEqual(await page.$$eval('.ov-token.padded', (nodes) => nodes.map((n) => n.dataset.index)), ['1']);
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  const masked = await page.evaluate(async () => Array.from(await window.attnscope.tensor('layers.0.attn.masked_scores')));
  for (let i = 1; i < T; i++) assert.ok(masked[i * T + 1] <= -1e8, `row ${i} masks padded key 1`);
  await go('masks');
  assert.equal(await page.locator('.view-masks .multiples figure').count(), 6);
  assert.ok((await page.locator('.swatch-padding').count()) > 0, 'the legend names the padding mask');
  assert.match(await page.locator('.leak-note').innerText(), /\d+(\.\d)?%/);
  // The head grid's thumbnails hatch it too, and their key says so.
  await go('grid');
  await page.evaluate(() => window.attnscope.app.set({ stage: 'probs' }));
  await settled();
  assert.match(await page.locator('.view-grid .grid-legend').innerText(), /padded key \(weight 0\)/);
  await go('masks');
  // The weights with the causal mask on and off hatch the padded key's column as the padding mask
  // does (its weight 0), not as a dark cell read as any small weight.
  for (const panel of ['attention weights, causal mask on', 'attention weights, causal mask off']) {
    assert.match(await page.locator(`.view-masks figure[data-panel="${panel}"] .legend`).innerText(), /padded key \(weight 0\)/, panel);
    const cell = await readCell(page.locator(`.view-masks figure[data-panel="${panel}"] canvas.heatmap-canvas`), 3, 1);
    assert.equal(Number(cell.value), 0, panel);
    assert.match(cell.text, /masked: key is padding/, panel);
  }
  // The three weight maps start level, whatever their legends below.
  const tops = await page.locator('.view-masks .multiples').nth(1).locator('canvas.heatmap-canvas').evaluateAll((cs) => cs.map((c) => Math.round(c.getBoundingClientRect().top)));
  assert.equal(new Set(tops).size, 1, `tops ${tops}`);
  await screenshot(page, 'views-masks-padding');
  // Every row padded: no row to average, said so, not "0.0%".
  for (let i = 0; i < T; i++) {
    if (i === 1) continue;
    await page.locator(`.chip[data-index="${i}"]`).click();
    await settled();
  }
  assert.equal(await page.locator('.leak-note').innerText(), 'Every query row is padding here, so there is no row whose peeking could be averaged: click a token to restore it.');
  for (let i = 0; i < T; i++) {
    if (i === 1) continue;
    await page.locator(`.chip[data-index="${i}"]`).click();
    await settled();
  }
  // The attention weights: the padded key's column is hatched and said to be a padded key of weight 0
  // (a dark cell read as any small weight before), its exact 0 in the tooltip.
  await page.evaluate(() => window.attnscope.app.set({ view: 'attention', stage: 'probs', layer: 0, head: 0 }));
  await settled();
  assert.match(await page.locator('.view-attention .legend').innerText(), /padded key \(weight 0\)/);
  const probs = await page.evaluate(async () => Array.from(await window.attnscope.tensor('layers.0.attn.probs')));
  assert.equal(probs[3 * T + 1], 0, 'the run gives the padded key weight 0');
  const cell = await readCell(page.locator('.view-attention canvas.heatmap-canvas'), 3, 1);
  assert.equal(Number(cell.value), 0);
  assert.match(cell.text, /masked: key is padding/);
  await chip.click();
  await settled();
  assert.equal(await chip.getAttribute('aria-pressed'), 'false');
  await screenshot(page, 'views-masks');
});

test('token lines draw one line per attended key and focus on hover', async () => {
  await go('lines');
  const all = await page.locator('.attn-line').count();
  assert.ok(all > 0);
  await page.locator('.lines-svg .token[data-side="q"][data-index="3"]').hover();
  const visible = await page.locator('.attn-line:not(.hidden)').count();
  assert.ok(visible > 0 && visible <= 4, `query 3 attends to at most 4 keys under the causal mask, saw ${visible}`);
  await screenshot(page, 'views-lines-focus');
  assert.ok(await page.locator('.lines-key').isHidden(), 'one head: one colour, no key');
  await page.locator('#lines-all').check();
  await settled();
  // All heads: a key says which colour is which head, and the head picker has nothing to pick.
  const nH = await page.evaluate(() => window.attnscope.app.model.num_attention_heads);
  const key = await page.locator('.lines-key .legend-item').evaluateAll((items) => items.map((n) => [n.textContent, getComputedStyle(n.querySelector('.swatch')).backgroundColor]));
  assert.deepEqual(key.map(([label]) => label), Array.from({ length: nH }, (_, h) => `head ${h}`));
  const lineColours = await page.locator('.attn-line').evaluateAll((ls) => [...new Set(ls.map((l) => getComputedStyle(l).stroke))]);
  assert.ok(lineColours.every((c) => key.some(([, swatch]) => swatch === c)), `every line's colour is in the key: ${lineColours} vs ${key.map(([, c]) => c)}`);
  assert.ok(await page.locator('.view .picker select[name="head"]').isDisabled());
  await page.mouse.move(5, 5);
  await screenshot(page, 'views-lines-all-heads');
  await page.locator('#lines-all').uncheck();
  await settled();
  assert.ok(!(await page.locator('.view .picker select[name="head"]').isDisabled()));
});

test('a config the core refuses is explained inline and the page keeps working', async () => {
  await page.fill('#cfg-num_key_value_heads', '3');
  await page.press('#cfg-num_key_value_heads', 'Enter');
  const error = page.locator('#cfg-num_key_value_heads-error');
  await error.waitFor({ state: 'visible' });
  assert.match(await error.innerText(), /must be a multiple of num_key_value_heads \(3\): in GQA/);
  await settled();
  await screenshot(page, 'views-config-error');
  await go('stepper');
  assert.ok((await page.locator('.tensor-figure canvas').count()) > 0, 'the previous model still shows');

  await page.fill('#cfg-num_key_value_heads', '1');
  await page.press('#cfg-num_key_value_heads', 'Enter');
  await error.waitFor({ state: 'hidden' });
  await settled();
  assert.match(await page.locator('.config-summary').innerText(), /MQA/);
  await go('grid');
  assert.deepEqual(await page.locator('.kv-label').allInnerTexts(), ['KV 0']);
  await screenshot(page, 'views-grid-mqa');
  // What the link would change is refused under its field: a copied link opens the model on screen.
  const before = await page.evaluate(() => window.attnscope.getState().seed);
  for (const [field, value, says] of [['seed', '1.5', /^seed must be a whole number from 0 to 9,007,199,254,740,991\./], ['rope_theta', '1e308', /^rope_theta must be a number from 1\.0001 to 1,000,000,000,000\./]]) {
    await page.fill(`#cfg-${field}`, value);
    await page.press(`#cfg-${field}`, 'Enter');
    const refused = page.locator(`#cfg-${field}-error`);
    await refused.waitFor({ state: 'visible' });
    assert.match(await refused.innerText(), says);
    assert.equal(await page.evaluate(() => window.attnscope.getState().seed), before, 'nothing applied');
  }
  await page.fill('#cfg-seed', String(before));
  await page.fill('#cfg-rope_theta', '1000000');
  await page.press('#cfg-rope_theta', 'Enter');
  await page.locator('#cfg-rope_theta-error').waitFor({ state: 'hidden' });
  await settled();
});

test('by keyboard: a skip link to the view, one Tab stop for the stepper rail, Enter on a grid thumbnail opens its head with the focus kept, Escape puts the tooltip away, and the title names the view', async () => {
  await go('stepper');
  // One Tab stop for the rail: the step shown.
  const stops = await page.locator('.rail-step').evaluateAll((bs) => bs.filter((b) => b.tabIndex === 0).map((b) => b.getAttribute('aria-current')));
  assert.deepEqual(stops, ['step']);
  // Enter on ← at the second step reaches the first, which disables ←: the focus goes to the step shown.
  await page.locator('[data-step="embed"]').click();
  await settled();
  await page.locator('.view-stepper > .toolbar > button').last().focus();
  await page.keyboard.press('Enter');
  await settled();
  const back = page.locator('.view-stepper > .toolbar > button').first();
  await back.focus();
  await page.keyboard.press('Enter');
  await settled();
  assert.ok(await back.isDisabled());
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains('rail-step') && document.activeElement.getAttribute('aria-current')), 'step');
  // The arrows step the pipeline from the view, not from a tab in the top bar.
  const step = await page.evaluate(() => window.attnscope.getState().step);
  await page.locator('a.tab[data-view="grid"]').focus();
  await page.keyboard.press('ArrowRight');
  await settled();
  assert.equal(await page.evaluate(() => window.attnscope.getState().step), step);
  // Escape in an unfolded group of tabs folds it and gives the focus back to its button.
  const fold = page.locator('[data-group="deep"] .tab-fold');
  await fold.click();
  assert.equal(await fold.getAttribute('aria-expanded'), 'true');
  await page.locator('#tabs-deep a.tab').first().focus();
  await page.keyboard.press('Escape');
  assert.equal(await fold.getAttribute('aria-expanded'), 'false');
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains('tab-fold')), true);
  // The skip link is the first Tab stop and lands on the view.
  const first = await page.evaluate(() => document.querySelector('a[href], button, input, select, textarea, [tabindex="0"]').textContent);
  assert.equal(first, 'Skip to the view', 'the first Tab stop');
  await page.focus('#skip-link');
  assert.ok((await page.locator('#skip-link').boundingBox()).y >= 0, 'shown while focused');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'view');
  assert.equal(await page.evaluate(() => location.hash.includes('view=stepper') || !location.hash.includes('#view')), true, 'the address keeps the link');

  await go('grid');
  assert.match(await page.title(), /^Head grid · attnscope/);
  // A knock-out toggle redraws the grid, itself included: the focus stays on its twin, so Enter again undoes it.
  const toggle = '.thumb[data-layer="1"][data-head="2"] .ablate-toggle';
  await page.locator(toggle).focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.attnscope.getState().ablate.length === 1);
  await settled();
  await page.waitForFunction((sel) => document.activeElement?.matches(sel), toggle);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.attnscope.getState().ablate.length === 0);
  await settled();
  await page.waitForFunction((sel) => document.activeElement?.matches(sel), toggle);
  const thumb = page.locator('.thumb[data-layer="1"][data-head="0"] canvas.heatmap-canvas');
  assert.equal(await thumb.getAttribute('role'), 'application');
  assert.equal(await thumb.getAttribute('aria-roledescription'), 'heatmap');
  assert.match(await thumb.getAttribute('aria-label'), /Enter opens it/);
  // Escape puts a cell's tooltip away.
  await thumb.focus();
  await page.keyboard.press('ArrowRight');
  assert.ok(await page.locator('#tooltip').isVisible());
  await page.keyboard.press('Escape');
  assert.ok(await page.locator('#tooltip').isHidden());
  // Enter on a thumbnail, before any cell was picked, opens that head; the focus goes to the view.
  await thumb.evaluate((node) => node.blur());
  await thumb.focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => window.attnscope.getState().view === 'attention');
  await settled();
  assert.deepEqual(await page.evaluate(() => [window.attnscope.getState().layer, window.attnscope.getState().head]), [1, 0]);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'view');
  assert.equal(await page.title(), `${await page.locator('a.tab[data-view="attention"]').innerText()} · attnscope — MiniMind attention, tensor by tensor`);
  // The map's accessible name says what it is in words, then the tensor.
  assert.match(await page.locator('.view-attention canvas.heatmap-canvas').first().getAttribute('aria-label'), /^(Attention weights|Scaled scores|Masked scores) \(layers\.1\.attn\.\w+\), head 0\. /);
});

// A restless reader changes the state 400 times without waiting for the page (through the scripting
// API, now in one task, now in the next), then waits once: the page ends on exactly the last state
// asked for, its padding included, and nothing on the way throws (a map whose labels were laid out
// for one sentence and its cells painted for another did). Four rounds, each its own sequence.
test('a restless reader: 400 changes without waiting, then one settle, end on the last state asked, without an error', async () => {
  const texts = ['The cat sat.', SENTENCE, 'A much longer sentence, with many more words in it, so that its maps have many more keys to show.', 'Hi there you'];
  for (let round = 0; round < 4; round++) {
    const before = page.consoleErrors.length;
    const last = await page.evaluate(
      async ({ texts, round }) => {
        // Every error a view shows in its place on the way is counted, however soon it goes.
        window.viewErrors = [];
        window.viewWatch?.disconnect();
        window.viewWatch = new MutationObserver((records) => {
          for (const node of records.flatMap((r) => [...r.addedNodes])) if (node.classList?.contains('view-error')) window.viewErrors.push(node.textContent);
        });
        window.viewWatch.observe(document.getElementById('view'), { childList: true, subtree: true });
        let seed = 7919 * (round + 1);
        const rand = (n) => {
          seed = (seed * 1103515245 + 12345) % 2147483648;
          return Math.floor((seed / 2147483648) * n);
        };
        const views = ['attention', 'masks', 'qk', 'grid', 'scale', 'gqa'];
        const stages = ['raw', 'scores', 'masked', 'probs'];
        let asked = null;
        for (let i = 0; i < 400; i++) {
          // The last change keeps the sentence of the one before and pads other tokens, as a click
          // on a chip right after typing does.
          const last = i === 399;
          const pad = last ? [[1], [2], [1, 2]].find((p) => JSON.stringify(p) !== JSON.stringify(asked.pad)) : [1, 2].filter(() => rand(2));
          asked = { text: last ? asked.text : texts[rand(texts.length)], pad, view: views[rand(views.length)], layer: rand(2), head: rand(4), stage: stages[rand(stages.length)], query: null, key: null };
          window.attnscope.setState(asked).catch(() => {});
          // Now and then the next change comes in a later task, after the worker has answered something.
          if (i < 398 && rand(3) === 0) await new Promise((r) => setTimeout(r, rand(30)));
        }
        return asked;
      },
      { texts, round },
    );
    await settled();
    const state = await page.evaluate(() => window.attnscope.getState());
    assert.deepEqual(Object.fromEntries(Object.keys(last).map((k) => [k, state[k]])), last, `round ${round + 1}: the last state asked for`);
    assert.equal(await page.locator(`.view-${last.view}`).count(), 1);
    assert.deepEqual(await page.evaluate(() => window.viewErrors), [], `round ${round + 1}: no view failed on the way`);
    assert.deepEqual(page.consoleErrors.slice(before), [], `round ${round + 1}: no error`);
  }
});

test('no console errors', () => {
  assert.deepEqual(page.consoleErrors, []);
});

// The lessons in real Chromium, each with the seed's own numbers: 她 → 小红 = 0.493 in the first,
// softmax([1, 2, 3]) against softmax([10, 20, 30]), the causal example's real rows beside the
// illustrative ones it prints, padding against causal, MiniMind-3's shapes [1, 6, 8, 96] and
// [1, 6, 4, 96], two heads. Numbers come from the core; here they are recomputed independently (in
// double precision) and must agree. Editing a cell recomputes; both languages render (in English the
// tutorial's words translated, she → Mary, with its original words one switch away, and doors to the
// same idea in English, on SmolLM2 where it takes a model that learned English); no console errors.
// Screenshots: artifacts/screenshots/lesson-*.png.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { cleanScreenshot, launch, openLesson, openPage, readCell, settled, softmax, startServer, until } from './helpers.mjs';

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await launch();
  page = await openPage(browser, `${server.url}#view=lessons&lesson=qk`);
  await page.setViewportSize({ width: 1400, height: 1000 });
  await settled(page);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const shot = (name) => cleanScreenshot(page, name);

const lesson = (id) => openLesson(page, id);

// A matrix's cells as numbers (data-value), row by row.
function matrix(locator) {
  return locator.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td[data-value]')].map((td) => (td.dataset.value === '-∞' ? -Infinity : Number(td.dataset.value)))));
}


function near(actual, expected, tol, what) {
  assert.equal(actual.length, expected.length, what);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) <= tol, `${what}[${i}]: ${v} vs ${expected[i]}`));
}

test('Q·K matching: the seed’s scores, softmax rows and she → Mary (她 → 小红) = 0.493; the switch shows the tutorial’s words', async () => {
  const scores = await matrix(page.locator('[data-matrix="scores"] table'));
  near(scores[2], [1.46, 0.11, 1.2], 1e-6, 'scores row 她');
  near(scores[0], [0.4, 0.14, 0.3], 1e-6, 'scores row 小红');
  const probs = await matrix(page.locator('[data-matrix="probs"] table'));
  near(probs[2], [0.4925, 0.1277, 0.3798], 1e-4, 'probs row 她');
  near(probs[0], [0.3737, 0.2881, 0.3381], 1e-4, 'probs row 小红');
  near(probs[1], [0.3263, 0.357, 0.3167], 1e-4, 'probs row 很');
  assert.deepEqual(await page.locator('[data-matrix="probs"] tbody th').allInnerTexts(), ['Mary', 'very', 'she']);
  const pair = page.locator('.answer .pair[data-key="Mary"]');
  assert.match(await pair.innerText(), /she→Mary: 0\.493/);
  assert.ok(Math.abs(Number(await pair.locator('output').getAttribute('data-value')) - 0.4925) < 1e-4);
  const walk = await page.locator('.walk-formula').innerText();
  assert.match(walk, /scores\[2\]\[0\] = 0\.9×0\.8 \+ 0\.1×0\.2 \+ 0\.8×0\.9 \+ 0×0\.1/);
  assert.match(walk, /= 0\.72 \+ 0\.02 \+ 0\.72 \+ 0\n/);
  assert.match(walk, /= 1\.46$/);
  assert.equal(await page.locator('[data-note="words"]').innerText(), 'The tutorial’s examples are in Chinese; here its words are translated and its numbers kept: 小红 → Mary · 很 → very · 她 → she.');
  await shot('lesson-qk');
  // The tutorial's own words, one switch away: the same numbers under 小红 / 很 / 她, and the door
  // goes back to the tutorial's sentence on the built-in model.
  await page.locator('#lesson-original').check();
  await page.waitForFunction(() => document.querySelector('.answer .pair[data-key="小红"]') && document.querySelector('.lesson-door .door-sentence')?.textContent === '小明把苹果给了小红，她很开心');
  await settled(page);
  assert.deepEqual(await page.locator('[data-matrix="probs"] tbody th').allInnerTexts(), ['小红', '很', '她']);
  near((await matrix(page.locator('[data-matrix="probs"] table')))[2], probs[2], 0, 'the same numbers');
  assert.match(await page.locator('.answer .pair[data-key="小红"]').innerText(), /她→小红: 0\.493/);
  assert.match(await page.locator('.walk').innerText(), /the query of “她” and the key of “小红”/);
  assert.match(await page.locator('[data-note="words"]').innerText(), /^The tables and the door below show the tutorial’s own words/);
  assert.equal(await page.locator('.lesson-door h3').innerText(), 'See this on the built-in model');
  await shot('lesson-qk-original');
  // The switch is the lesson's own: the next lesson reads in English.
  await lesson('who');
  assert.equal(await page.locator('#lesson-original').isChecked(), false);
  assert.deepEqual(await page.locator('[data-matrix="probs"] thead th').allInnerTexts(), ['Q \\ K', 'John', 'apple', 'Mary', 'happy']);
  await lesson('qk');
  assert.equal(await page.locator('#lesson-original').isChecked(), true, 'kept while the page is open');
  await page.locator('#lesson-original').uncheck();
  await page.waitForFunction(() => document.querySelector('.answer .pair[data-key="Mary"]'));
  await settled(page);
});

test('Q·K matching: editing a cell by keyboard recomputes with the core, and reset restores the seed', async () => {
  const cell = page.locator('table.editable').first().locator('tbody tr').nth(2).locator('input').first();
  await cell.focus();
  await cell.fill('0.1');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => document.querySelector('.answer .pair[data-key="Mary"] output').textContent !== '0.493');
  await settled(page);
  // The redraw with the edit's results keeps the reader in the cell Tab took them to, with their table.
  assert.deepEqual(await page.evaluate(() => ({ ...document.activeElement.dataset, tag: document.activeElement.tagName })), { tag: 'INPUT', cellOf: 'q', r: '2', c: '1', entered: '0.1' });
  // A redraw landing while a number is half typed keeps it, and it enters on Tab as it would have.
  await page.keyboard.press('End'); // Tab selected the cell's text
  await page.keyboard.type('5'); // 0.1 → 0.15, not entered yet
  await page.evaluate(() => window.attnscope.app.redraw());
  await settled(page);
  assert.deepEqual(await page.evaluate(() => [document.activeElement.dataset.r, document.activeElement.dataset.c, document.activeElement.value]), ['2', '1', '0.15']);
  await page.keyboard.press('Tab');
  await settled(page);
  assert.equal(await page.locator('table.editable').first().locator('tbody tr').nth(2).locator('input').nth(1).inputValue(), '0.15', 'the half-typed number entered');
  await page.locator('table.editable').first().locator('tbody tr').nth(2).locator('input').nth(1).fill('0.1');
  await page.keyboard.press('Tab');
  await settled(page);
  const probs = await matrix(page.locator('[data-matrix="probs"] table'));
  // Row 她 with q = [0.1, 0.1, 0.8, 0.0]: scores [0.82, 0.11, 0.64].
  near(probs[2], softmax([0.1 * 0.8 + 0.1 * 0.2 + 0.8 * 0.9, 0.1 * 0 + 0.1 * 0.3 + 0.8 * 0.1, 0.1 * 0.7 + 0.1 * 0.1 + 0.8 * 0.7]), 1e-6, 'edited row');
  // A number past what a link keeps (1e39 is ∞ in f32) is refused under its cell; nothing changes.
  const before = await page.evaluate(() => JSON.stringify(window.attnscope.getState().edits));
  const big = page.locator('table.editable').first().locator('tbody tr').nth(2).locator('input').first();
  await big.fill('1e39');
  await page.keyboard.press('Tab');
  await settled(page);
  assert.equal(await big.getAttribute('aria-invalid'), 'true');
  // It says the results below are still the last number's, and it covers no button under the table.
  assert.equal(await page.locator('.cell-refused').innerText(), 'A number from −1,000,000 to 1,000,000; what follows still uses 0.1');
  const note = await page.locator('.cell-refused').boundingBox();
  for (const button of await page.locator('.view-lessons button').all()) {
    const b = await button.boundingBox();
    if (b) assert.ok(note.y + note.height <= b.y || b.y + b.height <= note.y || note.x + note.width <= b.x || b.x + b.width <= note.x, `the note covers “${await button.innerText()}”`);
  }
  // A decimal comma is said as such; hexadecimal is not a number here.
  await big.fill('1,5');
  await page.keyboard.press('Tab');
  assert.equal(await page.locator('.cell-refused').innerText(), 'Write a decimal with a point (1.5); what follows still uses 0.1');
  await big.fill('0x10');
  await page.keyboard.press('Tab');
  assert.equal(await page.locator('.cell-refused').innerText(), '“0x10” is not a number: write one like 0.5 or −2; what follows still uses 0.1');
  assert.equal(await page.evaluate(() => JSON.stringify(window.attnscope.getState().edits)), before);
  assert.doesNotMatch(await page.locator('.view-lessons').innerText(), /Infinity|NaN|could not draw/);
  // The largest number a cell keeps is shown whole, not cut to −100000 by the cell's width.
  await big.fill('-1000000');
  await page.keyboard.press('Tab');
  await settled(page);
  const widest = page.locator('table.editable').first().locator('tbody tr').nth(2).locator('input').first();
  assert.equal(await widest.inputValue(), '-1000000');
  const fits = await widest.evaluate((n) => n.scrollWidth <= n.clientWidth);
  assert.ok(fits, 'the cell is as wide as its number');
  await big.fill('0.1');
  await page.keyboard.press('Tab');
  await settled(page);
  assert.equal(await page.locator('.cell-refused').count(), 0);
  // Clicking a score walks that one.
  await page.locator('[data-matrix="scores"] td[data-r="1"][data-c="2"] button').click();
  await settled(page);
  assert.match(await page.locator('.walk-formula').innerText(), /^scores\[1\]\[2\] = 0×0\.7 \+ 0\.1×0\.1/);
  // The intro says the numbers match the tutorial's: with an edit in place, a line under it says they no longer do.
  assert.match(await page.locator('.lesson-edited').innerText(), /^You have changed some of the tutorial’s numbers/);
  await page.getByRole('button', { name: /tutorial’s numbers/ }).first().click();
  await settled(page);
  assert.match(await page.locator('.answer .pair[data-key="Mary"]').innerText(), /0\.493/);
});

test('the lessons stay when the Text box has nothing to run: its message is one line above them', async () => {
  const empty = await openPage(browser, `${server.url}#view=lessons&lesson=causal&text=&bos=0&lang=en`);
  await empty.waitForSelector('.lesson-tab[data-lesson="causal"][aria-current="page"]', { timeout: 120_000 });
  await settled(empty);
  assert.equal(await empty.evaluate(() => window.attnscope.app.phase), 'empty');
  assert.equal(await empty.locator('.lesson h2').innerText(), 'The causal mask');
  assert.ok((await empty.locator('.lesson table').count()) > 0, 'the lesson draws its tables');
  assert.equal(await empty.locator('.runless-note').innerText(), 'The lessons use their own numbers, so they are here whatever the Text box holds. (Your sentence: Type a sentence in the Text box (under Input) to see every tensor the model computes for it.)');
  // Another view still says what is missing, in place of the view.
  await empty.evaluate(() => (location.hash = 'view=attention&text=&bos=0&lang=en'));
  await empty.waitForSelector('.message');
  assert.equal(await empty.locator('.runless-note').count(), 0);
  assert.match(await empty.locator('#view').innerText(), /Type a sentence in the Text box \(under Input\)/);
  assert.deepEqual(empty.consoleErrors, []);
  await empty.close();
});

test('Lessons has the page’s width: the sentence, model and share sidebar waits behind a button', async () => {
  const sidebar = page.locator('.sidebar');
  const toggle = page.locator('#lessons-sidebar');
  assert.equal(await sidebar.isVisible(), false, 'collapsed on Lessons');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
  assert.equal(await toggle.innerText(), 'Show sentence & model');
  const width = (await page.locator('.lesson').boundingBox()).width;
  assert.ok(width > 1400 - 2 * 24 - 40, `the lesson gets the width (${width}px)`);
  // The language and theme buttons stay at the right end of the top bar, as on every other view.
  const prefs = await page.locator('.topbar .prefs').boundingBox();
  assert.ok(prefs.x + prefs.width > 1400 - 24 - 4, `the buttons at the right (${prefs.x + prefs.width}px)`);
  await toggle.click();
  assert.equal(await sidebar.isVisible(), true, 'the button brings it back');
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  assert.ok((await page.locator('.lesson').boundingBox()).width < width - 300);
  await shot('lesson-sidebar-open');
  await toggle.click();
  assert.equal(await sidebar.isVisible(), false);
  // Other views keep their sidebar.
  await page.evaluate(() => {
    location.hash = 'view=attention';
  });
  await page.waitForSelector('.view-attention');
  await settled(page);
  assert.equal(await sidebar.isVisible(), true);
  await lesson('qk');
  assert.equal(await sidebar.isVisible(), false);
});

test('why divide by √d: the seed’s two rows, and big d against ÷ √d', async () => {
  await lesson('sqrt_d');
  const rows = page.locator('.lesson [data-row]');
  const small = await rows.nth(0).locator('.bar-row').evaluateAll((r) => r.map((x) => Number(x.dataset.value)));
  near(small, softmax([1, 2, 3]), 1e-6, 'softmax([1, 2, 3])');
  assert.deepEqual(await rows.nth(0).locator('.bar-value').allInnerTexts(), ['0.090', '0.245', '0.665']);
  const big = await rows.nth(1).locator('.bar-row').evaluateAll((r) => r.map((x) => Number(x.dataset.value)));
  near(big, softmax([10, 20, 30]), 1e-6, 'softmax([10, 20, 30])');
  assert.deepEqual(await rows.nth(1).locator('.bar-value').allInnerTexts(), ['0.000', '0.000', '1.000']);
  const entropy = async (variant) => Number(await page.locator(`[data-variant="${variant}"] .hint output`).getAttribute('data-value'));
  assert.ok((await entropy('raw')) < 0.5 * (await entropy('scaled')), 'at d = 512 the unscaled softmax is far more peaked');
  await shot('lesson-sqrt-d');
});

test('the causal mask: −∞ above the diagonal, and the seed’s illustrative rows told apart', async () => {
  await lesson('causal');
  const masked = await matrix(page.locator('[data-matrix="masked"] table'));
  assert.deepEqual(masked[0].slice(1), [-Infinity, -Infinity, -Infinity]);
  near(masked[2].slice(0, 3), [0.3, 0.7, 0.4], 1e-6, 'masked row 很');
  assert.equal(masked[2][3], -Infinity);
  const probs = await matrix(page.locator('[data-matrix="probs"] table'));
  near(probs[2], [...softmax([0.3, 0.7, 0.4]), 0], 1e-6, 'row 很');
  assert.deepEqual(probs[2].map((p) => p.toFixed(3)), ['0.278', '0.415', '0.307', '0.000']);
  near(probs[3], softmax([0.2, 0.5, 0.3, 0.8]), 1e-6, 'row 好');
  const verdicts = await page.locator('table.compare tbody tr').evaluateAll((r) => r.map((x) => x.dataset.agrees));
  assert.deepEqual(verdicts, ['true', 'true', 'false', 'false']);
  assert.match(await page.locator('table.compare tbody tr[data-row="2"]').innerText(), /\[0\.24, 0\.47, 0\.29, 0\.00\]\s+\[0\.278, 0\.415, 0\.307, 0\.000\]/);
  const tiny = await page.locator('.lesson .bars').last().locator('.bar-value').allInnerTexts();
  assert.deepEqual(tiny, ['0.27', '0.73', '0.00']);
  await shot('lesson-causal');
  await page.locator('#lesson-causal').uncheck();
  await settled(page);
  const open = await matrix(page.locator('[data-matrix="probs"] table'));
  near(open[0], softmax([0.8, 0.1, 0.4, 0.3]), 1e-6, 'row 今天 without the mask');
  await shot('lesson-causal-off');
});

// The checkboxes a reader can see whose label speaks of the causal mask.
const causalSwitches = () =>
  page.locator('input[type="checkbox"]').evaluateAll((boxes) =>
    boxes.filter((b) => b.checkVisibility() && /causal|因果/i.test(b.closest('label')?.textContent ?? '')).map((b) => b.id),
  );

test('the causal lesson has one causal-mask control, its own, and it leaves the model’s alone', async () => {
  await lesson('causal');
  await page.locator('#lesson-causal').check();
  await settled(page);
  assert.deepEqual(await causalSwitches(), ['lesson-causal'], 'with the sidebar collapsed');
  await page.locator('#lessons-sidebar').click();
  assert.equal(await page.locator('.sidebar').isVisible(), true);
  assert.deepEqual(await causalSwitches(), ['lesson-causal'], 'the model panel’s switch is not shown beside the lesson’s');
  assert.match(await page.locator('label:has(#lesson-causal)').innerText(), /this example/);
  assert.match(await page.locator('#lesson-causal-note').innerText(), /model panel’s causal switch/);
  const modelCausal = await page.evaluate(() => window.attnscope.getState().causal);
  await page.locator('#lesson-causal').uncheck();
  await settled(page);
  const open = await matrix(page.locator('[data-matrix="probs"] table'));
  near(open[0], softmax([0.8, 0.1, 0.4, 0.3]), 1e-6, 'the lesson’s switch counts in the lesson');
  assert.equal(await page.evaluate(() => window.attnscope.getState().causal), modelCausal, 'and not on the model');
  const verdicts = await page.locator('table.compare tbody tr').evaluateAll((r) => r.map((x) => x.dataset.verdict));
  assert.deepEqual(verdicts, ['maskOff', 'maskOff', 'maskOff', 'maskOff']);
  await page.locator('#lesson-causal').check();
  await page.locator('#lessons-sidebar').click();
  await settled(page);
  assert.equal(await page.locator('.sidebar').isVisible(), false);
  // On any other view, the model's switch is back.
  await page.evaluate(() => {
    location.hash = 'view=masks';
  });
  await page.waitForSelector('.view-masks');
  await settled(page);
  assert.deepEqual(await causalSwitches(), ['cfg-causal']);
  await lesson('causal');
});

test('the causal lesson: a row the reader edited says “your numbers”, not “illustrative in the tutorial”', async () => {
  await lesson('causal');
  const verdicts = () => page.locator('table.compare tbody tr').evaluateAll((r) => r.map((x) => x.dataset.verdict));
  assert.deepEqual(await verdicts(), ['agrees', 'agrees', 'illustrative', 'illustrative']);
  const cell = (r, c) => page.locator('table.editable').first().locator('tbody tr').nth(r).locator('input').nth(c);
  // 很 → 今天: 0.3 becomes 0.9. Rows 今天 and 天气 keep the tutorial's numbers; 很 is the reader's now.
  await cell(2, 0).fill('0.9');
  await cell(2, 0).press('Tab');
  await page.waitForFunction(() => document.querySelector('table.compare tr[data-row="2"]')?.dataset.verdict === 'yours');
  await settled(page);
  assert.deepEqual(await verdicts(), ['agrees', 'agrees', 'yours', 'illustrative']);
  const row = page.locator('table.compare tbody tr[data-row="2"]');
  assert.match(await row.innerText(), /your numbers/);
  assert.doesNotMatch(await row.innerText(), /illustrative/);
  const computed = (await row.locator('.computed').innerText()).replace(/[[\]]/g, '').split(', ').map(Number);
  near(computed, [...softmax([0.9, 0.7, 0.4]), 0], 6e-4, 'row 很 of the reader’s numbers');
  // A cell above the diagonal is masked: editing it leaves its row the tutorial's.
  await cell(0, 3).fill('5');
  await cell(0, 3).press('Tab');
  await settled(page);
  assert.deepEqual(await verdicts(), ['agrees', 'agrees', 'yours', 'illustrative']);
  await page.locator('#lessons-sidebar').click();
  await shot('lesson-causal-yours');
  await page.locator('#lessons-sidebar').click();
  await page.getByRole('button', { name: /tutorial’s numbers/ }).click();
  await settled(page);
  assert.deepEqual(await verdicts(), ['agrees', 'agrees', 'illustrative', 'illustrative']);
});

test('padding vs causal: only the padding mask keeps real tokens off <pad> on the left', async () => {
  await lesson('padding');
  const leak = async (mode) => Number(await page.locator(`[data-leak="${mode}"] output`).getAttribute('data-value'));
  assert.ok((await leak('causal')) > 0.1, 'with the causal mask alone, left padding is visible to every real token');
  assert.ok((await leak('padding')) < 1e-6);
  assert.ok((await leak('both')) < 1e-6);
  const both = await matrix(page.locator('[data-mode="both"] table').nth(0));
  assert.ok(both[2][0] <= -1e8 && both[2][0] > -Infinity, 'a padding key gets −1e9, not −∞');
  assert.equal(both[1][3], -Infinity, 'a future key gets −∞');
  // Written as the code adds it, not in exponent form.
  assert.equal(await page.locator('[data-mode="both"] table').nth(0).locator('td.cell-padding').first().innerText(), '−1e9');
  // The <pad> row, padded on the left, sees only masked keys under both masks: its weight all goes to
  // a masked cell, and the page says why (−1e9 is finite); the padding-only panel's <pad> row sees real keys.
  const bothProbs = await matrix(page.locator('[data-mode="both"] table').nth(1));
  assert.ok(Math.abs(bothProbs[0][0] - 1) < 1e-6, `the <pad> row's weight on itself: ${bothProbs[0][0]}`);
  assert.match(await page.locator('[data-mode="both"] [data-note="pad-row"]').innerText(), /−1e9 is a finite number, not −∞/);
  assert.doesNotMatch(await page.locator('[data-mode="padding"] [data-note="pad-row"]').innerText(), /finite/);
  assert.match(await page.locator('[data-note="side"]').innerText(), /only the padding mask \(attention_mask\)/);
  await shot('lesson-padding');
  await page.locator('[data-side="right"]').click();
  await settled(page);
  assert.ok((await leak('causal')) < 1e-6, 'right padding sits in every real token’s future');
  assert.match(await page.locator('[data-note="side"]').innerText(), /the causal mask already hides it from them: all three panels give <pad> 0/);
  await shot('lesson-padding-right');
});

test('MiniMind-3 shapes: xq [1, 6, 8, 96], xk and xv [1, 6, 4, 96], and what GQA saves', async () => {
  await lesson('shapes');
  await page.waitForSelector('.lesson-door [data-note="door"]');
  assert.match(await page.locator('.lesson-door [data-note="door"]').innerText(), /a sentence in the tutorials’ style typed in \(this one is not in them\)/);
  const shapes = await page.locator('table.shapes tbody tr').evaluateAll((r) => r.map((x) => [x.dataset.tensor, x.querySelector('.shape').textContent]));
  assert.deepEqual(shapes, [
    ['xq', '[1, 6, 8, 96]'],
    ['xk', '[1, 6, 4, 96]'],
    ['xv', '[1, 6, 4, 96]'],
  ]);
  assert.match(await page.locator('[data-proj="q"]').innerText(), /q_proj: 768 → 768/);
  assert.match(await page.locator('[data-proj="kv"]').innerText(), /k_proj \/ v_proj: 768 → 384/);
  assert.deepEqual(await page.locator('.lesson .kv-group-title').allInnerTexts(), ['Q0, Q1 → KV0', 'Q2, Q3 → KV1', 'Q4, Q5 → KV2', 'Q6, Q7 → KV3']);
  // The first map's columns are positions (a word over a narrow column broke into characters), its
  // rows tokens; the two grids of a box stand level.
  const box = await page.locator('.lesson .kv-group[data-kv="0"] canvas.heatmap-canvas').evaluateAll((cs) => cs.map((c) => { const r = c.getBoundingClientRect(); return { bottom: Math.round(r.bottom), width: Math.round(r.width) }; }));
  assert.equal(box.length, 2);
  assert.equal(box[0].bottom, box[1].bottom, 'the two maps of a box stand level');
  assert.match(await page.locator('.lesson [data-note="read"]').innerText(), /top to bottom 0 .+ · 1 /);
  // The eight query heads' weights hatch their future keys, under one colour key.
  assert.match(await page.locator('.lesson .kv-groups + div .legend').innerText(), /masked: a future token \(weight 0\)/);
  assert.match((await readCell(page, page.locator('.lesson .kv-group canvas.heatmap-canvas').first(), 0, 1)).text, /comes after the query, so the causal mask set its weight to 0/);
  const perToken = await page.locator('.lesson tr[data-kind] td[data-bytes]').evaluateAll((c) => c.map((x) => Number(x.dataset.bytes)));
  assert.deepEqual(perToken, [49152, 49152 * 2048, 24576, 24576 * 2048, 6144, 6144 * 2048]);
  await shot('lesson-shapes');
});

// softmax(q·k / √2) of one query against the keys, in double precision.
const headRow = (q, keys) => softmax(keys.map((k) => (q[0] * k[0] + q[1] * k[1]) / Math.SQRT2));

test('multi-head: two heads that look at different things, each with its own softmax', async () => {
  await lesson('multihead');
  const heads = page.locator('.lesson [data-head]');
  assert.equal(await heads.count(), 2);
  // Head 0: d0 and d2 of the first lesson's Q and K (content). Head 1: places 90° apart, length 2;
  // 她's query carries the place of 很, the token before it.
  const content = headRow([0.9, 0.8], [[0.8, 0.9], [0.0, 0.1], [0.7, 0.7]]);
  const position = headRow([0, 2], [[2, 0], [0, 2], [-2, 0]]);
  near((await matrix(heads.nth(0).locator('table').nth(1)))[2], content, 1e-6, 'head 0 row 她');
  near((await matrix(heads.nth(1).locator('table').nth(1)))[2], position, 1e-6, 'head 1 row 她');
  const gap = Math.max(...content.map((p, j) => Math.abs(p - position[j])));
  assert.ok(gap > 0.4, `the heads' rows 她 differ clearly (${gap.toFixed(3)})`);
  assert.ok(position[1] > 0.8 && content[0] > content[1], 'head 1 follows the previous token, head 0 the content');
  // Why 0.493 became smaller: the sentence quotes the first lesson's one head and head 0, both computed.
  const one = softmax([1.46, 0.11, 1.2])[0];
  const note = await page.locator('[data-note="compare"]').innerText();
  assert.ok(note.includes(`= ${one.toFixed(3)}`) && note.includes(`= ${content[0].toFixed(3)}`) && note.includes(position[1].toFixed(3)), note);
  const context = await matrix(page.locator('.lesson table').last());
  assert.equal(context[0].length, 4);
  await shot('lesson-multihead');
});

test('√d: d = 96, MiniMind-3’s head_dim, beside the hidden sizes 512 and 768, each √d computed', async () => {
  await lesson('sqrt_d');
  const rows = await page.locator('table.sizes tbody tr').evaluateAll((r) => r.map((x) => [Number(x.dataset.d), Number(x.querySelector('td output').dataset.value)]));
  assert.deepEqual(rows.map(([d]) => d), [4, 16, 64, 96, 512, 768]);
  for (const [d, root] of rows) assert.ok(Math.abs(root - Math.sqrt(d)) < 1e-9, `√${d}: ${root}`);
  // The typical |q·k| (RMS over random pairs) follows √d, and grows with d: the table does not
  // seem to say that scores at d = 64 are smaller than at d = 16.
  const typical = await page.locator('table.sizes td[data-column="typical"] output').evaluateAll((o) => o.map((x) => Number(x.dataset.value)));
  typical.forEach((v, i) => assert.ok(Math.abs(v / Math.sqrt(rows[i][0]) - 1) < 0.15, `typical at d = ${rows[i][0]}: ${v} against √d ${Math.sqrt(rows[i][0])}`));
  assert.ok(typical.every((v, i) => i === 0 || v > typical[i - 1]), `growing: ${typical}`);
  assert.match(await page.locator('table.sizes tr[data-d="96"]').innerText(), /head_dim/);
  assert.match(await page.locator('table.sizes tr[data-d="512"]').innerText(), /hidden size/);
  const overstates = await page.locator('[data-note="overstates"]').innerText();
  assert.ok(overstates.includes(`√512 ≈ ${Math.sqrt(512).toFixed(1)}`) && overstates.includes(`√96 ≈ ${Math.sqrt(96).toFixed(1)}`), overstates);
  assert.match(await page.locator('[data-note="entropy"]').innerText(), /says how spread out a row of weights is \(lower = more focused\)/);
  await page.locator('#lesson-d').selectOption('96');
  await settled(page);
  assert.match(await page.locator('.lesson').innerText(), /at d = 96:/);
  await shot('lesson-sqrt-d-96');
});

test('each lesson leads on to the next, in the tutorials’ order (many heads before GQA shares K and V); the last back to the overview', async () => {
  const order = await page.locator('.lesson-tab').evaluateAll((tabs) => tabs.map((a) => a.dataset.lesson));
  assert.deepEqual(order, ['qk', 'who', 'flow', 'sqrt_d', 'causal', 'padding', 'multihead', 'shapes']);
  // The two tutorials are named above the lessons, and each lesson says where in them it is.
  assert.match(await page.locator('.lessons-sources').innerText(), /two Chinese tutorials on MiniMind’s attention: ① 《MiniMind — 阶段 2\.5：Attention、Causal Mask》.* ② the walk through MiniMind’s Attention code/);
  assert.deepEqual((await page.locator('.lesson-tab-source').allTextContents()).map((s) => s.trim()), ['①', '①', '①', '①', '①②', '②', '①②', '②']);
  await lesson('causal');
  assert.equal(await page.locator('.lesson-source').innerText(), 'From tutorial ①, section 4; tutorial ②, section 6');
  // 今天天气很好 is tutorial ①'s own sentence for the causal mask, here in English: the door says so.
  await page.waitForSelector('.lesson-door [data-note="door"]');
  assert.match(await page.locator('.lesson-door [data-note="door"]').innerText(), /on the built-in MiniMind with the tutorial’s sentence, in English, typed in\./);
  const next = page.locator('.lesson-next');
  assert.equal(await next.innerText(), 'Next lesson: Padding mask vs causal mask →');
  await next.scrollIntoViewIfNeeded();
  await next.click();
  await page.waitForSelector('.lesson-tab[data-lesson="padding"][aria-current="page"]');
  await settled(page);
  // The next lesson starts at its title, just under the top bar, not at the old lesson's scroll (the
  // reader was at the end of the page), and the title has the focus.
  const where = await page.evaluate(() => {
    const h2 = document.querySelector('.lesson h2');
    return { top: h2.getBoundingClientRect().top, bar: document.querySelector('.topbar').offsetHeight, text: h2.textContent, focused: document.activeElement === h2 };
  });
  assert.equal(where.text, 'Padding mask vs causal mask');
  assert.ok(where.top >= where.bar && where.top < where.bar + 120, `the title at y = ${where.top}, the top bar ${where.bar} high`);
  assert.ok(where.focused, 'the new lesson’s title has the focus');
  await lesson('multihead');
  // Its 语法/情感/位置 motivation closes tutorial ①'s section 4; tutorial ② §3 is where heads differ.
  assert.equal(await page.locator('.lesson-source').innerText(), 'From tutorial ①, section 4; tutorial ②, section 3');
  assert.equal(await next.innerText(), 'Next lesson: The shapes of MiniMind’s default model, and GQA →');
  await lesson('shapes');
  assert.equal(await next.innerText(), 'That was the last lesson. Back to the whole model →');
  await next.click();
  await page.waitForSelector('.view-overview');
  await settled(page);
});

// Each lesson's door to the tutorial's own sentence (for an English reader, behind the lesson's
// switch): the sentence the lesson names, the view, and the tokens the page then holds.
const DOORS = {
  qk: ['qk', '小明把苹果给了小红，她很开心'],
  who: ['attention', '小明把苹果给了小红，她很开心'],
  flow: ['attention', '今天小红很开心，她很好'],
  sqrt_d: ['scale', '小明把苹果给了小红，她很开心'],
  causal: ['masks', '今天天气很好'],
  padding: ['masks', '<|endoftext|><|im_start|>今天天气很好'],
  shapes: ['gqa', '小明把苹果给了她'],
  multihead: ['grid', '小明把苹果给了小红，她很开心'],
};

// The lesson's switch to the tutorial's original words set `on` (or off), once the door has followed it.
async function original(on, text) {
  await page.locator('#lesson-original').setChecked(on);
  await page.waitForFunction((s) => document.querySelector('.lesson-door .door-sentence')?.textContent === s, text);
  await settled(page);
}

test('every lesson ends with a door to the same idea on the built-in model, the tutorial’s sentence typed in', async () => {
  for (const [id, [view, text]] of Object.entries(DOORS)) {
    await lesson(id);
    await original(true, text);
    const door = page.locator('.lesson-door');
    assert.equal(await door.getAttribute('data-view'), view, id);
    // As the page tokenizes its input: the built-in model's BOS token first, but for the padding
    // door, which pads on the left before BOS as MiniMind's batched generation does.
    const bos = id !== 'padding';
    const { pieces } = await page.evaluate(({ s, bos }) => window.attnscope.call('tokenize', { text: s, bos }), { s: text, bos });
    const chips = await door.locator('.chip-piece').allInnerTexts();
    assert.deepEqual(chips, pieces.map((p) => (p === ' ' ? '␣' : p)), `${id}: the door shows the tokenizer's tokens`);
    const spaces = pieces.filter((p) => p === ' ').length;
    assert.equal(await door.locator('[data-note="spaces"]').count(), spaces > 0 ? 1 : 0, `${id}: spaces noted only where they are tokens`);
    if (pieces.includes('红') && pieces.includes('小')) assert.match(await door.locator('[data-note="split"]').innerText(), /小红 → 小 \+ 红/, `${id}: 小红 is two tokens`);
    assert.equal(await door.locator('[data-note="look"]').count(), 1, `${id}: says what to look for`);
    // A laptop's window for the door of 她: the row it comes for lies below the fold there unless the page brings it up.
    if (id === 'who') await page.setViewportSize({ width: 1280, height: 720 });
    await door.locator('.door-link').click();
    await page.waitForSelector(`.view-${view}`);
    await settled(page);
    const opened = await page.evaluate(() => ({ state: window.attnscope.getState(), pieces: window.attnscope.app.state.tokens.pieces }));
    assert.equal(opened.state.view, view, id);
    assert.equal(opened.state.text, text, id);
    assert.deepEqual(opened.state.model, { kind: 'builtin' });
    assert.deepEqual(opened.pieces, pieces, `${id}: the view runs the sentence's tokens`);
    if (['qk', 'who', 'flow', 'sqrt_d', 'multihead'].includes(id)) assert.equal(opened.state.query, pieces.lastIndexOf('她'), `${id}: the row of 她 is chosen`);
    if (['qk', 'who', 'flow'].includes(id)) {
      // The attention map opens on the head in which 她 puts the most weight on 红 (of 小红), found
      // here from every layer's probs of the run on screen.
      const she = pieces.lastIndexOf('她');
      const red = pieces.lastIndexOf('红', she);
      const best = await page.evaluate(async ({ she, red }) => {
        const { app } = window.attnscope;
        const names = Array.from({ length: app.model.num_hidden_layers }, (_, l) => `layers.${l}.attn.probs`);
        const found = await app.tensors(names);
        let top = { w: -1 };
        names.forEach((name, layer) => {
          const { data, shape } = found.get(name);
          const [nH, T, S] = shape;
          for (let head = 0; head < nH; head++) if (data[(head * T + she) * S + red] > top.w) top = { layer, head, w: data[(head * T + she) * S + red] };
        });
        return top;
      }, { she, red });
      assert.deepEqual([opened.state.layer, opened.state.head], [best.layer, best.head], `${id}: opens on the head where 她 looks at 红 most (${best.w})`);
      assert.ok(best.w > 0.1, `${id}: 她 → 红 ${best.w}`);
      // A head fixed on a token past position 2 (红 here, or 苹果) is not said to rest there as on an
      // early token: the reader is asked to move the word instead.
      if (id !== 'qk') assert.doesNotMatch(await page.locator('.view-attention').innerText(), /early token \(1 or 2\)/, `${id}: no resting caveat`);
      if (id === 'qk') {
        // The Q·K view opens on the lesson's own pair, 她 and 红, and takes that score apart.
        assert.equal(opened.state.key, red, 'qk: 红 is the key');
        assert.match(await page.locator('.view-qk').innerText(), /Sum of the 32 products/);
        // The head picker's label is the head's habit over the sentence; what 她 does in it is said beside it.
        assert.match(await page.locator('.view-qk .qk-row-note').innerText(), new RegExp(`in the row of “她”, token ${she} \\(counting from 0\\), its weight goes most to “.+”, 0\\.\\d\\d\\.$`));
      } else {
        // What the door came for is said first, above the head's summary over all its rows.
        const lead = page.locator('.view-attention .followed-lead');
        assert.match(await lead.innerText(), new RegExp(`“她” \\(position ${she}, counting from 0\\): in this head its weight goes most to “红” ${best.w.toFixed(2)}`), id);
        assert.ok((await lead.boundingBox()).y < (await page.locator('.view-attention .head-role-line').boundingBox()).y, `${id}: before the head's role`);
      }
    }
    assert.equal(opened.state.bos, bos, `${id}: BOS as the door says`);
    assert.deepEqual(opened.state.pad, id === 'padding' ? [0] : [], `${id}: padding as the door says`);
    if (id === 'padding') {
      assert.deepEqual(opened.pieces.slice(0, 2), ['<|endoftext|>', '<|im_start|>']);
      assert.match(await page.locator('.view-masks').innerText(), /−1e9 on the columns of padded tokens/);
    }
    // Nothing padded: the padding mask's panel says why it is blank, and how to pad a token.
    if (id === 'causal') assert.match(await page.locator('.view-masks').innerText(), /No token is padding now, so this mask adds nothing/);
    if (id === 'sqrt_d') {
      // The scale view follows 她 too: its entropy bar marked, and its entropy at τ against √d said.
      const she = pieces.lastIndexOf('她');
      assert.match(await page.locator('.view-scale .bar-row.highlight').innerText(), new RegExp(`^${she} 她`));
      assert.match(await page.locator('.followed-entropy').innerText(), new RegExp(`“她” \\(position ${she}, counting from 0\\): [0-9.]+ bits at τ = √d, as the model divides`));
    }
    if (id === 'who') {
      // The attention map follows 她's row: outlined, its weights read, and for each earlier word the
      // head that gives it most of 她's weight, computed from every layer's probs; 红 (of 小红) among them.
      const she = pieces.lastIndexOf('她');
      // The page arrives with 她's row in sight, whatever lies above the map.
      const rowAt = await page.evaluate((r) => {
        const canvas = document.querySelector('.view-attention canvas.heatmap-canvas');
        const [top, height] = canvas.dataset.cells.split(' ').map(Number);
        const y = canvas.getBoundingClientRect().top + top + ((r + 0.5) * height) / window.attnscope.app.state.tokens.ids.length;
        return { y, inner: window.innerHeight };
      }, she);
      assert.ok(rowAt.y > 0 && rowAt.y < rowAt.inner, `the row of 她 on screen: ${JSON.stringify(rowAt)}`);
      await page.setViewportSize({ width: 1400, height: 1000 });
      assert.match(await page.locator('.query-row-title').innerText(), new RegExp(`“她” \\(position ${she}, counting from 0\\)`));
      const heads = await page.locator('.query-row-head').evaluateAll((bs) => bs.map((b) => ({ text: b.textContent, layer: Number(b.dataset.layer), head: Number(b.dataset.head) })));
      const red = heads.find((h) => h.text.startsWith('红 '));
      assert.ok(red, `红 is among the words 她 looks at: ${heads.map((h) => h.text).join(' | ')}`);
      const weight = Number(red.text.split(' ')[1]);
      const probs = await page.evaluate(async ({ layer }) => {
        const t = (await window.attnscope.app.tensors([`layers.${layer}.attn.probs`])).get(`layers.${layer}.attn.probs`);
        return { data: Array.from(t.data), shape: t.shape };
      }, red);
      const [, T, S] = probs.shape;
      const at = probs.data[(red.head * T + she) * S + pieces.indexOf('红')];
      assert.ok(Math.abs(at - weight) <= 0.005, `the listed weight is the run's: ${weight} vs ${at}`);
      // The keyboard starts on the followed row: the first arrow key reads 她's first key.
      const canvas = page.locator('.view-attention canvas.heatmap-canvas');
      await canvas.focus();
      await canvas.press('ArrowRight');
      assert.match(await page.locator('#tooltip').innerText(), new RegExp(`${she} 她`));
      await page.locator('.query-row-head', { hasText: /^红 / }).click();
      await settled(page);
      const picked = await page.evaluate(() => window.attnscope.getState());
      assert.deepEqual([picked.layer, picked.head, picked.query], [red.layer, red.head, she], 'the head opens with the row kept');
      assert.equal(await page.locator('.query-row-head[aria-current]').count(), 1);
      await shot('door-who-attention-row');
    }
    if (id === 'shapes') {
      // The q shape the door promises is printed there, with k and v before and after repeat_kv.
      const m = await page.evaluate(() => window.attnscope.app.model);
      const T = pieces.length;
      assert.equal(await page.locator('.view-gqa .gqa-shapes').innerText(), `In this model, on this sentence: q [1, ${T}, ${m.num_attention_heads}, ${m.head_dim}]; k and v [1, ${T}, ${m.num_key_value_heads}, ${m.head_dim}]; after repeat_kv (each KV head copied ${m.num_attention_heads / m.num_key_value_heads} times) k and v [1, ${T}, ${m.num_attention_heads}, ${m.head_dim}], one per query head.`);
    }
    if (id === 'causal') await shot('door-causal-masks');
  }
  // The switches back to English, lesson by lesson.
  for (const [id, [, text, model]] of Object.entries(EN_DOORS)) {
    await lesson(id);
    await original(false, model === 'smollm2' && !HAS_SMOLLM2 ? DOORS[id][1] : text);
  }
  await lesson('qk');
});

// Each lesson's door for an English reader: the view, the tutorial's sentence in English (or one in
// its style), and the model that shows the idea. Masks and shapes do not depend on what a model
// learned: the built-in one. 她 → 小红 becomes she → Mary, which takes a model that learned English.
const SHE = 'John gave Mary the apple, and she was very happy.';
const EN_DOORS = {
  causal: ['masks', 'The weather is good', 'builtin'],
  padding: ['masks', '<|endoftext|><|im_start|>The weather is good', 'builtin'],
  shapes: ['gqa', 'John gave it to her', 'builtin'],
  qk: ['qk', SHE, 'smollm2'],
  who: ['attention', SHE, 'smollm2'],
  flow: ['attention', 'This morning Mary was very happy, and she was well.', 'smollm2'],
  sqrt_d: ['scale', SHE, 'smollm2'],
  multihead: ['grid', SHE, 'smollm2'],
};
const HAS_SMOLLM2 = existsSync(fileURLToPath(new URL('../../www/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf', import.meta.url)));

// The weights of the query at `focus` on each piece of `text`, in every head of every layer of the
// model loaded, from a run of the page's own core: [{layer, head, at(piece)}].
function rowsOf(text, focus) {
  return page.evaluate(
    async ({ text, focus }) => {
      const { app } = window.attnscope;
      const { ids, pieces } = await app.tokenize(text, false);
      const names = Array.from({ length: app.model.num_hidden_layers }, (_, l) => `layers.${l}.attn.probs`);
      const found = await app.tensors(names, { ids, attention_mask: null, prefix_len: 0, causal: true });
      const T = ids.length;
      const q = pieces.lastIndexOf(focus);
      return names.flatMap((name, layer) => {
        const { data } = found.get(name);
        return Array.from({ length: data.length / (T * T) }, (_, head) => ({ layer, head, w: Object.fromEntries(pieces.slice(0, q).map((p, j) => [p, data[(head * T + q) * T + j]])) }));
      });
    },
    { text, focus },
  );
}

test('in English every door opens the tutorial’s sentence in English: masks and shapes on the built-in model, she → Mary on SmolLM2', async () => {
  for (const [id, [view, text, model]] of Object.entries(EN_DOORS)) {
    await lesson(id);
    await page.waitForSelector('.lesson-door [data-note="door"]');
    const door = page.locator('.lesson-door');
    if (model === 'smollm2' && !HAS_SMOLLM2) {
      // A site built without SmolLM2: the tutorial's own sentence on the built-in model, and why.
      assert.equal(await door.locator('.door-sentence').textContent(), DOORS[id][1], id);
      assert.match(await door.locator('[data-note="no-smollm2"]').innerText(), /^This site has no SmolLM2/);
      continue;
    }
    assert.equal(await door.locator('.door-sentence').textContent(), text, id);
    assert.equal(await door.locator('.door-sentence q').getAttribute('lang'), 'en');
    assert.equal(await door.getAttribute('data-view'), view, id);
    assert.equal(await door.locator('[data-note="look"]').count(), 1, `${id}: says what to look for`);
    const chips = (await door.locator('.chip-piece').allInnerTexts()).map((c) => c.replace(/^␣/, ' '));
    if (model === 'builtin') {
      const bos = id !== 'padding';
      const { pieces } = await page.evaluate(({ s, bos }) => window.attnscope.call('tokenize', { text: s, bos }), { s: text, bos });
      assert.deepEqual(chips, pieces, `${id}: the built-in tokenizer's tokens`);
      assert.match(await door.locator('[data-note="door"]').innerText(), id === 'shapes' ? /on the built-in MiniMind with a sentence in the tutorials’ style typed in/ : /on the built-in MiniMind with the tutorial’s sentence, in English, typed in/);
      if (id === 'shapes') assert.match(await door.locator('[data-note="split"]').innerText(), /gave → g \+ ave/);
    } else {
      assert.equal(await door.locator('h3').innerText(), 'See this on a real model that reads English: SmolLM2');
      assert.match(await door.locator('[data-note="door"]').innerText(), /on SmolLM2-135M with (the tutorial’s sentence|a sentence in the tutorials’ style), in English, typed in.* switch on “Show the tutorial’s original words \(中文\)” above/);
    }
    await door.locator('.door-link').click();
    await page.waitForFunction((k) => !window.attnscope.app.loading && window.attnscope.app.source?.kind === k && window.attnscope.getState().view !== 'lessons', model, { timeout: 120_000 });
    await page.waitForSelector(`.view-${view}`);
    await settled(page);
    const opened = await page.evaluate(() => ({ state: window.attnscope.getState(), pieces: window.attnscope.app.state.tokens.pieces }));
    assert.equal(opened.state.view, view, id);
    assert.equal(opened.state.text, text, id);
    assert.deepEqual(opened.state.model, { kind: model }, id);
    assert.deepEqual(opened.pieces, chips, `${id}: the view runs the tokens the door showed`);
    if (model === 'smollm2') {
      const she = opened.pieces.lastIndexOf(' she');
      const mary = opened.pieces.lastIndexOf(' Mary', she);
      assert.equal(opened.state.query, she, `${id}: the row of “she” is chosen`);
      // The door's head is the one where " she" puts the most weight on " Mary", measured here.
      const rows = await rowsOf(text, ' she');
      const best = rows.reduce((a, b) => (b.w[' Mary'] > a.w[' Mary'] ? b : a));
      assert.deepEqual([opened.state.layer, opened.state.head], [best.layer, best.head], `${id}: the head where “she” looks at “Mary” most (${best.w[' Mary']})`);
      assert.ok(best.w[' Mary'] > 0.5, `${id}: she → Mary ${best.w[' Mary']}`);
      if (id === 'qk') assert.equal(opened.state.key, mary, 'qk: Mary is the key');
      if (id === 'who') {
        // What the door came for is said first; and the head tells the pronouns apart, as its note says.
        assert.match(await page.locator('.view-attention .followed-lead').innerText(), new RegExp(`“␣she” \\(position ${she}, counting from 0\\): in this head its weight goes most to “␣Mary” ${best.w[' Mary'].toFixed(2)}`));
        const he = (await rowsOf(SHE.replace(' she ', ' he '), ' he')).find((r) => r.layer === best.layer && r.head === best.head);
        assert.ok(best.w[' Mary'] > best.w.John && he.w.John > he.w[' Mary'], `she: Mary ${best.w[' Mary']}, John ${best.w.John}; he: Mary ${he.w[' Mary']}, John ${he.w.John}`);
      }
    }
    await shot(`door-en-${id}`);
  }
  // Back to the built-in model, which the tests after this one expect.
  await page.evaluate(() => window.attnscope.app.navigate({ view: 'lessons', lesson: 'qk', model: 'builtin' }));
  await page.waitForFunction(() => !window.attnscope.app.loading && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000 });
  await lesson('qk');
});


// A lesson link as a reader would share it: the address, once the page has written the state to it.
async function linkAfterEdit() {
  await until(page, async () => new URL(await window.attnscope.link()).hash === location.hash);
  return page.evaluate(() => location.hash);
}

test('an edit survives the link: a new page opens the lesson with the edited cell and its results', async () => {
  await lesson('qk');
  const cell = page.locator('table[data-table="q"] tbody tr').nth(2).locator('input').first();
  await cell.fill('0.1');
  await cell.press('Tab');
  await page.waitForFunction(() => window.attnscope.getState().edits?.['qk.q'] !== undefined);
  await settled(page);
  assert.deepEqual((await page.evaluate(() => window.attnscope.getState())).edits, { 'qk.q': [[2, 0, 0.1]] });
  const hash = await linkAfterEdit();
  const fresh = await openPage(browser, `${server.url}${hash}`);
  await fresh.setViewportSize({ width: 1400, height: 1000 });
  await settled(fresh);
  await fresh.waitForFunction(() => document.querySelector('table[data-table="q"] tbody tr:nth-child(3) input')?.value === '0.1');
  await settled(fresh);
  const probs = await matrix(fresh.locator('[data-matrix="probs"] table'));
  near(probs[2], softmax([0.1 * 0.8 + 0.1 * 0.2 + 0.8 * 0.9, 0.1 * 0 + 0.1 * 0.3 + 0.8 * 0.1, 0.1 * 0.7 + 0.1 * 0.1 + 0.8 * 0.7]), 1e-6, 'the restored row 她');
  assert.equal(await fresh.locator('.banner').count(), 0, 'a link the page wrote opens without complaint');
  await cleanScreenshot(fresh, 'lesson-qk-restored');
  // The lesson's reset is also the link's: no edits left.
  await fresh.getByRole('button', { name: /tutorial’s numbers/ }).first().click();
  await fresh.waitForFunction(() => window.attnscope.getState().edits === null);
  await settled(fresh);
  assert.match(await fresh.locator('.answer .pair[data-key="Mary"]').innerText(), /0\.493/);
  assert.ok(await fresh.locator('.lesson-edited').isHidden(), 'the tutorial’s numbers again: no line saying they were changed');
  assert.deepEqual(fresh.consoleErrors, []);
  await fresh.close();
  // The multi-head lesson's tables get it for free: their ids are all it takes.
  await lesson('multihead');
  const v = page.locator('table[data-table="k"] tbody tr').nth(0).locator('input').nth(2);
  await v.fill('-2');
  await v.press('Tab');
  await page.waitForFunction(() => window.attnscope.getState().edits?.['multihead.k'] !== undefined);
  await settled(page);
  const other = await openPage(browser, `${server.url}${await linkAfterEdit()}`);
  await settled(other);
  assert.equal(await other.locator('table[data-table="k"] tbody tr').nth(0).locator('input').nth(2).inputValue(), '-2');
  assert.deepEqual(await matrix(other.locator('.lesson [data-head="1"] table').nth(1)), await matrix(page.locator('.lesson [data-head="1"] table').nth(1)));
  await other.close();
  await page.getByRole('button', { name: /tutorial’s numbers/ }).first().click();
  await settled(page);
});

test('a cell typed back to the tutorial’s number is no edit: the link and the “changed” line forget it', async () => {
  await lesson('qk');
  const cell = page.locator('table[data-table="q"] tbody tr').nth(2).locator('input').first();
  const own = await cell.inputValue();
  await cell.fill('0.1');
  await cell.press('Tab');
  await page.waitForFunction(() => window.attnscope.getState().edits?.['qk.q'] !== undefined);
  await settled(page);
  assert.ok(await page.locator('.lesson-edited').isVisible(), 'an edit is said');
  // A second cell edited, then the first typed back: only the second stays.
  const other = page.locator('table[data-table="q"] tbody tr').nth(0).locator('input').nth(1);
  const otherOwn = await other.inputValue();
  await other.fill('0.5');
  await other.press('Tab');
  await page.waitForFunction(() => window.attnscope.getState().edits?.['qk.q']?.length === 2);
  await cell.fill(own);
  await cell.press('Tab');
  await page.waitForFunction(() => window.attnscope.getState().edits?.['qk.q']?.length === 1);
  assert.deepEqual((await page.evaluate(() => window.attnscope.getState())).edits, { 'qk.q': [[0, 1, 0.5]] });
  await other.fill(otherOwn);
  await other.press('Tab');
  await page.waitForFunction(() => window.attnscope.getState().edits === null);
  await settled(page);
  assert.ok(await page.locator('.lesson-edited').isHidden(), 'the tutorial’s numbers again: no line saying they were changed');
  assert.match(await page.locator('.answer .pair[data-key="Mary"]').innerText(), /0\.493/);
});

test('every table a reader can edit, in every lesson, keeps its edits in the link', async () => {
  for (const id of ['qk', 'who', 'flow', 'sqrt_d', 'causal', 'padding', 'multihead', 'shapes']) {
    await lesson(id);
    const unnamed = await page.$$eval('.lesson table.editable', (tables) => tables.filter((tb) => !tb.dataset.table).map((tb) => tb.querySelector('caption, th')?.textContent));
    assert.deepEqual(unnamed, [], `${id}: every editable table has an id`);
  }
  // The lesson of 她 and the flow lesson: an edit reaches the link and comes back in a new page.
  for (const [id, table] of [['who', 'q'], ['flow', 'x']]) {
    await lesson(id);
    const cell = page.locator(`table[data-table="${table}"] tbody tr`).nth(0).locator('input').first();
    await cell.fill('2.5');
    await cell.press('Tab');
    await page.waitForFunction((key) => window.attnscope.getState().edits?.[key] !== undefined, `${id}.${table}`);
    await settled(page);
    const other = await openPage(browser, `${server.url}${await linkAfterEdit()}`);
    await settled(other);
    assert.equal(await other.locator(`table[data-table="${table}"] tbody tr`).nth(0).locator('input').first().inputValue(), '2.5', `${id}: the edit back`);
    await other.close();
    await page.getByRole('button', { name: /tutorial’s numbers/ }).first().click();
    await page.waitForFunction(() => window.attnscope.getState().edits === null);
    await settled(page);
  }
});

// A format-2 link holding `json` as it is.
async function rawLink(json) {
  const stream = new Blob([new TextEncoder().encode(json)]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return `#s2.${Buffer.from(await new Response(stream).arrayBuffer()).toString('base64url')}`;
}

test('hostile edits in a link: cut to size, wrong shapes and unknown tables refused with the banner', async () => {
  const huge = Array.from({ length: 5000 }, (_, n) => [n % 64, n % 60, 1]);
  // 200 cells, each a valid cell of some table, all outside Q's 3 × 4.
  const outside = Array.from({ length: 200 }, (_, n) => [10 + Math.floor(n / 10), 10 + (n % 10), 1]);
  const link = await rawLink(JSON.stringify({ lang: 'en', view: 'lessons', lesson: 'qk', edits: { 'qk.q': [[2, 0, 0.1], [9, 9, 1], [0, 0, 'NaN'], [1, 1, null], ...outside], 'qk.k': huge, 'qk.nope': [[0, 0, 1]], 'causal.scores': [[0, 0, 2]] } }));
  const hostile = await openPage(browser, `${server.url}${link}`);
  await settled(hostile);
  await hostile.waitForSelector('.banner');
  await settled(hostile);
  const banner = await hostile.locator('.banner').innerText();
  assert.match(banner, /edits/, banner);
  assert.match(banner, /qk\.q: 201 cells/, banner);
  assert.match(banner, /qk\.nope/, banner);
  // Thousands of cells outside a table are one line, not one each.
  assert.ok(banner.split('\n').length < 12, `a short banner: ${banner.split('\n').length} lines`);
  assert.equal(await hostile.locator('table[data-table="q"] tbody tr').nth(2).locator('input').first().inputValue(), '0.1', 'the cell that fits is kept');
  const edits = await hostile.evaluate(() => window.attnscope.getState().edits);
  assert.deepEqual(edits, { 'qk.q': [[2, 0, 0.1]] }, 'what did not fit is gone from the link');
  const probs = await matrix(hostile.locator('[data-matrix="probs"] table'));
  assert.ok(probs.flat().every(Number.isFinite));
  await cleanScreenshot(hostile, 'lesson-edits-refused');
  assert.deepEqual(hostile.consoleErrors, []);
  await hostile.close();
});

test('every lesson reads in English on a phone too: its words English, no sideways scrolling', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  for (const id of ['qk', 'who', 'flow', 'sqrt_d', 'causal', 'padding', 'multihead', 'shapes']) {
    await lesson(id);
    await page.waitForSelector('.lesson-door [data-note="door"]');
    await settled(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${id}: no sideways scrolling on a phone (${overflow}px)`);
    // No Chinese in the lesson but the switch (its label, the line of the tutorial's words beside it,
    // and the door's line that names it).
    const shown = await page.locator('.lesson').evaluate((n) => {
      const copy = n.cloneNode(true);
      copy.querySelectorAll('.lesson-words, .lesson-door [data-note="door"]').forEach((w) => w.remove());
      return copy.innerText;
    });
    assert.doesNotMatch(shown, /[\u4e00-\u9fff]/, `${id}: ${shown.match(/.{0,40}[\u4e00-\u9fff].{0,40}/)?.[0]}`);
    await shot(`lesson-en-${id}-phone`);
  }
  await page.setViewportSize({ width: 1400, height: 1000 });
  await lesson('qk');
});

test('every lesson renders in 简体中文', async () => {
  await page.locator('#lang-switch').click();
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  await settled(page);
  for (const id of ['qk', 'sqrt_d', 'causal', 'padding', 'shapes', 'multihead']) {
    await lesson(id);
    const title = await page.locator('.lesson h2').innerText();
    assert.match(title, /[\u4e00-\u9fff]|Q·K/, `${id}: ${title}`);
    assert.match(await page.locator('.lesson-intro').innerText(), /[\u4e00-\u9fff]/);
    await shot(`lesson-zh-${id}`);
  }
  await lesson('who');
  assert.match(await page.locator('.lesson-door').innerText(), /在内置模型上看看[\s\S]*注意力图打开的是内置模型里“她”最关注“红”（小红的“红”）的那个头，“她”这一行已作为 Q（查询）框出/);
  await lesson('sqrt_d');
  assert.match(await page.locator('[data-note="overstates"]').innerText(), /几百甚至上千[\s\S]*√96 ≈ 9\.8/);
  await lesson('multihead');
  assert.match(await page.locator('[data-note="compare"]').innerText(), /她→小红 = 0\.493/);
  await lesson('causal');
  assert.equal(await page.locator('#lessons-sidebar').innerText(), '显示句子和模型');
  assert.match(await page.locator('label:has(#lesson-causal)').innerText(), /因果掩码（只作用于本例）/);
  await page.locator('table.editable').first().locator('tbody tr').nth(2).locator('input').first().fill('0.9');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => document.querySelector('table.compare tr[data-row="2"]')?.dataset.verdict === 'yours');
  await settled(page);
  assert.match(await page.locator('table.compare tr[data-row="2"]').innerText(), /你的数字/);
  await shot('lesson-zh-causal-yours');
  // Dark, and a phone.
  await page.emulateMedia({ colorScheme: 'dark' });
  await settled(page);
  await shot('lesson-zh-causal-dark');
  await page.setViewportSize({ width: 390, height: 844 });
  await settled(page);
  assert.equal(await page.locator('.sidebar').isVisible(), false);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `no sideways scrolling on a phone (${overflow}px)`);
  await shot('lesson-zh-causal-phone-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await shot('lesson-zh-causal-phone');
  await page.setViewportSize({ width: 1400, height: 1000 });
  await page.getByRole('button', { name: '恢复教程里的数字' }).click();
  await settled(page);
  await lesson('qk');
  assert.equal(await page.locator('.lesson h2').innerText(), 'Q·K 匹配');
  // On a phone the worked sum keeps its lines (its = signs in one column) and fits its box.
  await page.setViewportSize({ width: 390, height: 844 });
  await settled(page);
  const walk = page.locator('.walk-formula').first();
  assert.ok(await walk.evaluate((n) => n.scrollWidth <= n.clientWidth + 1), 'the worked sum fits its box');
  assert.match(await walk.innerText(), /0×0\.1\n/, 'the first line ends on its last term');
  // The lesson of 她's sum of four terms wraps between terms on a phone: its answer, 0.802×V[小红], whole in sight.
  await lesson('who');
  const sum = page.locator('.walk-formula.walk-terms');
  assert.ok(await sum.evaluate((n) => n.scrollWidth <= n.clientWidth + 1), 'the sum of 她 fits its box');
  assert.equal(await sum.locator('.walk-term').count(), 4);
  assert.ok(await sum.locator('.walk-term').evaluateAll((ts) => ts.every((s) => s.getClientRects().length === 1)), 'no term split over two lines');
  await lesson('qk');
  await page.setViewportSize({ width: 1400, height: 1000 });
  await settled(page);
  assert.match(await page.locator('.answer').innerText(), /“她”这一行：\s*她→小红: 0\.493/);
});

test('no console errors', () => {
  assert.deepEqual(page.consoleErrors, []);
});

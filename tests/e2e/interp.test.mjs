// The experiments in real Chromium on the built-in model: compare two inputs, knock out heads,
// logit lens, head attribution. Every number checked here is recomputed by the test from the
// worker's own tensors of a run it asks for itself (window.attnscope.call), with its own softmax and
// KL in float64; then the link round trip, both languages and no console errors.
// Screenshots: artifacts/screenshots/interp-*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cleanScreenshot, launch, openPage, settled, softmax, startServer } from './helpers.mjs';

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await launch();
  page = await openPage(browser, `${server.url}#${new URLSearchParams({ lang: 'en', view: 'compare', text: 'The king said to his son: you must be brave.', compare: 'The king said to her son: you must be brave.' })}`);
  await page.setViewportSize({ width: 1400, height: 1000 });
  await settled(page);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

// Opens plain fields on the page (they change only what they name) and waits for it to draw.
async function open(fields) {
  await page.evaluate((hash) => {
    location.hash = hash;
  }, new URLSearchParams(fields).toString());
  await page.waitForFunction((f) => Object.entries(f).every(([k, v]) => k === 'text' || String(window.attnscope.getState()[k]) === v), fields);
  await settled(page);
}

// The logits of a run the test asks the worker for itself: `args` merged into the page's own.
function logitsOf(args) {
  return page.evaluate(async (extra) => {
    const run = { ...window.attnscope.app.args(), ...extra };
    const { tensors } = await window.attnscope.call('tensors', { args: run, names: ['logits'] });
    return { data: Array.from(tensors[0].data), shape: tensors[0].shape };
  }, args);
}

function lastRow({ data, shape: [T, V] }) {
  return data.slice((T - 1) * V, T * V);
}

// KL(P ‖ Q) in float64 from two logits rows, by log-softmax: independent of the page's code.
function kl(logitsP, logitsQ) {
  const logSoftmax = (row) => {
    const m = Math.max(...row);
    const z = Math.log(row.reduce((s, v) => s + Math.exp(v - m), 0));
    return row.map((v) => v - m - z);
  };
  const lp = logSoftmax(logitsP);
  const lq = logSoftmax(logitsQ);
  return lp.reduce((s, v, i) => s + Math.exp(v) * (v - lq[i]), 0);
}

// The change table of a prediction diff: id → [p A, p B] as the page shows them.
function shownTable(root) {
  return page.$$eval(`${root} .diff-table tbody tr`, (rows) => rows.map((r) => [Number(r.dataset.id), ...[...r.querySelectorAll('td[data-value]')].map((td) => Number(td.dataset.value))]));
}

function close(actual, expected, tol, what) {
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: shown ${actual}, expected ${expected}`);
}

test('compare: both sentences, their attention maps and difference, predictions checked against the worker', async () => {
  const tokensB = await page.evaluate(() => window.attnscope.call('tokenize', { text: 'The king said to her son: you must be brave.' }));
  const a = await logitsOf({});
  const b = await logitsOf({ ids: tokensB.ids, attention_mask: null });
  assert.equal(a.shape[0], tokensB.ids.length, 'a minimal pair: as many tokens');
  assert.equal(await page.locator('.view-compare .compare-token.changed').count(), 1, 'one token differs, and it is marked');
  assert.equal(await page.locator('.view-compare canvas.heatmap-canvas').count(), 3, 'A, B and B − A');
  const pA = softmax(lastRow(a));
  const pB = softmax(lastRow(b));
  const rows = await shownTable('.view-compare');
  assert.ok(rows.length >= 5);
  for (const [id, shownA, shownB] of rows) {
    close(shownA, pA[id], 2e-5, `p_A of token ${id}`);
    close(shownB, pB[id], 2e-5, `p_B of token ${id}`);
  }
  const topB = pB.indexOf(Math.max(...pB));
  const barsB = await page.$$eval('.view-compare .diff-side:nth-child(2) .bar-row', (items) => items.map((li) => Number(li.dataset.value)));
  close(barsB[0], pB[topB], 2e-5, 'B’s top probability');
  const shownKl = Number(await page.locator('.view-compare .prediction-diff').getAttribute('data-kl'));
  const expected = kl(lastRow(a), lastRow(b));
  assert.ok(expected > 1e-4, 'the word changed the prediction');
  close(shownKl, expected, 1e-4 * Math.max(1, expected), 'KL(A ‖ B)');
  await cleanScreenshot(page, 'interp-compare-en');
});

test('compare: the same sentence twice differs by nothing; a second sentence of another length says so', async () => {
  await open({ compare: 'The king said to his son: you must be brave.' });
  assert.equal(Number(await page.locator('.view-compare .prediction-diff').getAttribute('data-kl')), 0);
  assert.match(await page.locator('.view-compare .compare-sentences').innerText(), /same tokens/);
  await open({ compare: 'The old king said to her son: you must be brave.' });
  assert.equal(await page.locator('.view-compare .compare-diff canvas:visible').count(), 0, 'no cell-by-cell difference');
  assert.match(await page.locator('.view-compare .compare-diff').innerText(), /do not line up/);
  assert.ok(Number(await page.locator('.view-compare .prediction-diff').getAttribute('data-kl')) > 0);
});

test('compare: a link round trip keeps the second sentence, layer and head; Chinese reads as Chinese', async () => {
  await open({ text: '她今天很开心。', compare: '他今天很开心。', layer: '2', head: '5', lang: 'zh' });
  const link = await page.evaluate(() => window.attnscope.link());
  const other = await openPage(browser, link);
  await settled(other);
  const state = await other.evaluate(() => window.attnscope.getState());
  assert.deepEqual([state.view, state.compare, state.layer, state.head, state.lang], ['compare', '他今天很开心。', 2, 5, 'zh']);
  assert.match(await other.locator('.view-compare h3').first().innerText(), /注意力权重/);
  assert.equal(await other.locator('.view-compare .compare-token.changed').innerText(), '他');
  assert.deepEqual(other.consoleErrors, []);
  await other.close();
  await cleanScreenshot(page, 'interp-compare-zh');
});

test('no console errors', () => {
  assert.deepEqual(page.consoleErrors, []);
});

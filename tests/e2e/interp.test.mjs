// The experiments in real Chromium on the built-in model: compare two inputs, knock out heads,
// logit lens, head attribution. Every number checked here is recomputed by the test from the
// worker's own tensors of a run it asks for itself (window.attnscope.call), with its own softmax and
// KL in float64; then the link round trip, both languages and no console errors.
// Screenshots: artifacts/screenshots/interp-*.png.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { assertClose, cleanScreenshot, launch, openPage, readCell, settled, softmax, startServer, until, WASM_VS_PYTORCH } from './helpers.mjs';

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
  // The state as plain fields write it: knocked-out heads as "1.4,2.3".
  await page.waitForFunction(
    (f) => Object.entries(f).every(([k, v]) => {
      const value = window.attnscope.getState()[k];
      return k === 'text' || (k === 'ablate' ? value.map((pair) => pair.join('.')).join(',') : String(value)) === v;
    }),
    fields,
    { timeout: 90_000 },
  );
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
  const tokensB = await page.evaluate(() => window.attnscope.app.tokenize('The king said to her son: you must be brave.')); // as the page tokenizes its input: BOS first
  const a = await logitsOf({});
  const b = await logitsOf({ ids: tokensB.ids, attention_mask: null });
  assert.equal(a.shape[0], tokensB.ids.length, 'a minimal pair: as many tokens');
  assert.equal(await page.locator('.view-compare .compare-token.changed').count(), 1, 'one token differs, and it is marked');
  assert.equal(await page.locator('.view-compare canvas.heatmap-canvas').count(), 3, 'A, B and B − A');
  // Its head picker names the heads as every other per-head view does (measured on sentence A, the page's input).
  await page.waitForFunction(() => [...document.querySelectorAll('.view-compare select[name="head"] option')].some((o) => o.textContent.includes(' · ')));
  // A causal run's future keys are hatched and said, as on every attention map, not a dark weight 0.
  for (const map of await page.locator('.view-compare .heatmap').all()) assert.match(await map.locator('.heatmap-legend').innerText(), /masked: a future token \(weight 0\)/);
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

test('compare: the default second sentence is a one-word swap whose tokens line up, so the difference map is there', async () => {
  const text = 'I love you more than words can say, and I will love you forever.';
  await open({ text });
  await page.evaluate(() => window.attnscope.app.set({ compare: null }));
  await settled(page);
  // love → hate is the first swap, but "hate" is two tokens; love → like lines up.
  assert.equal(await page.locator('.view-compare .compare-input').inputValue(), 'I like you more than words can say, and I will love you forever.');
  assert.equal(await page.locator('.view-compare .compare-token.changed').count(), 1);
  assert.equal(await page.locator('.view-compare .compare-diff canvas:visible').count(), 1, 'B − A is drawn');
  assert.equal(await page.evaluate(() => window.attnscope.getState().compare), null, 'the default stays out of the link');
  await open({ text: 'The king said to his son: you must be brave.', compare: 'The king said to her son: you must be brave.' });
});

test('compare: the same sentence twice differs by nothing; a second sentence of another length says so', async () => {
  await open({ compare: 'The king said to his son: you must be brave.' });
  assert.equal(Number(await page.locator('.view-compare .prediction-diff').getAttribute('data-kl')), 0);
  assert.match(await page.locator('.view-compare .compare-sentences').innerText(), /same tokens/);
  await open({ compare: 'The old king said to her son: you must be brave.' });
  assert.equal(await page.locator('.view-compare .compare-diff canvas:visible').count(), 0, 'no cell-by-cell difference');
  assert.match(await page.locator('.view-compare .compare-diff').innerText(), /do not line up/);
  assert.ok(Number(await page.locator('.view-compare .prediction-diff').getAttribute('data-kl')) > 0);
  await open({ compare: '' });
  assert.match(await page.locator('.view-compare .compare-sentences').innerText(), /second sentence is empty/);
  assert.equal(await page.locator('.view-compare .card:visible').count(), 0, 'no maps or predictions of the sentence before');
});

test('compare: a second sentence longer than a link carries is said while it is typed, as the Text box does', async () => {
  await open({ compare: 'The king said to his son: you must be brave.' });
  const note = page.locator('.view-compare .long-text');
  assert.equal(await note.isVisible(), false);
  await page.locator('.compare-input').fill('ab '.repeat(700));
  assert.equal(await note.innerText(), 'The text is 2,100 characters; a link (and so a reload or a shared copy) keeps only the first 2,000.');
  await page.locator('.compare-input').fill('The king said to his son: you must be brave.');
  assert.equal(await note.isVisible(), false);
  await settled(page);
});

test('compare: a second sentence a link brings during a pause in typing wins over the keystrokes before it', async () => {
  await open({ compare: 'The king said to his son: you must be brave.' });
  await page.locator('.compare-input').fill('Typed just before the link');
  // The link comes within the typing pause (200 ms), before the keystrokes reach the state.
  await open({ compare: 'The queen said to her son: you must be brave.' });
  await page.waitForTimeout(500);
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.getState().compare), 'The queen said to her son: you must be brave.');
  assert.equal(await page.locator('.compare-input').inputValue(), 'The queen said to her son: you must be brave.');
});

test('compare: a second sentence that cannot run is said, and the first sentence’s map stays', async () => {
  await open({ compare: '😀'.repeat(900) }); // 900 characters, more tokens than a run takes
  assert.match(await page.locator('.view-compare .compare-sentences [role="alert"]').innerText(), /^The second sentence cannot run: /);
  assert.match(await page.locator('.view-compare .compare-sentences').innerText(), /^A\s/);
  assert.equal(await page.locator('.view-compare .compare-maps canvas:visible').count(), 1, 'A’s map alone');
  assert.equal(await page.locator('.view-compare .compare-side-b').isVisible(), false);
  assert.equal(await page.locator('.view-compare .compare-diff').isVisible(), false);
  assert.equal(await page.locator('.view-compare .prediction-diff:visible').count(), 0, 'no predictions of the sentence before');
  await open({ compare: 'The king said to his son: you must be brave.' });
  assert.equal(await page.locator('.view-compare .compare-maps canvas:visible').count(), 2);
  assert.equal(await page.locator('.view-compare .compare-diff').isVisible(), true);
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

// A run's tensors asked of the worker by the test: `args` merged into the page's own arguments.
function tensorsOf(args, names) {
  return page.evaluate(
    async ({ extra, list }) => {
      const { tensors } = await window.attnscope.call('tensors', { args: { ...window.attnscope.app.args(), ...extra }, names: list });
      return tensors.map((x) => ({ data: Array.from(x.data), shape: x.shape }));
    },
    { extra: args, list: names },
  );
}

const maxAbs = (a) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
const maxDiff = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

test('knock out: a head clicked off in the head grid reruns the model without it, checked against the test’s own runs', async () => {
  await open({ view: 'grid', text: 'The king said to his son: you must be brave.', lang: 'en', ablate: '' });
  const plain = await logitsOf({});
  await page.click('.view-grid .thumb[data-layer="3"][data-head="2"] .ablate-toggle');
  await page.waitForFunction(() => JSON.stringify(window.attnscope.getState().ablate) === '[[3,2]]');
  await settled(page);
  assert.equal(await page.locator('.view-grid .thumb[data-layer="3"][data-head="2"] .ablate-toggle').getAttribute('aria-pressed'), 'true');
  assert.ok(await page.locator('.view-grid .thumb[data-layer="3"][data-head="2"]').evaluate((n) => n.classList.contains('ablated')));
  assert.match(await page.locator('.ablation-bar').innerText(), /L3 H2/);
  // However far down the grid the click was, the bar (and its before-and-after link) is in sight,
  // under the sticky top bar.
  const [bar, topbar, height, scrolled] = await page.evaluate(() => [document.querySelector('.ablation-bar').getBoundingClientRect().top, document.querySelector('.topbar').getBoundingClientRect().bottom, innerHeight, scrollY]);
  assert.ok(scrolled > 0, 'the click scrolled the page down to the last layer');
  assert.ok(bar >= topbar - 1 && bar < height / 2, `the bar starts at ${bar} px, under the top bar's ${topbar}`);
  assert.match(await page.locator('#status').innerText(), /knocked out: 1/);
  // The page's logits are those of the run the test asks for with ablate, and not the whole model's.
  const shown = await page.evaluate(async () => Array.from(await window.attnscope.tensor('logits')));
  const ablated = await logitsOf({ ablate: [[3, 2]] });
  assert.deepEqual(shown, ablated.data, 'the page shows the ablated run');
  assert.ok(maxDiff(shown, plain.data) > 1e-3, 'knocking the head out changed the logits');
  // Independently of the core's ablation code: the head's context is zero in the ablated run, what
  // comes before it is untouched, and o_proj is linear, so the change two heads of a layer make
  // together is the sum of the changes each makes alone.
  const [context] = await tensorsOf({ ablate: [[3, 2]] }, ['layers.3.attn.context']);
  const [, nH, d] = context.shape;
  const T = context.shape[0];
  for (let i = 0; i < T; i++) assert.equal(maxAbs(context.data.slice((i * nH + 2) * d, (i * nH + 3) * d)), 0, `context of head 2 at position ${i}`);
  const [before2] = await tensorsOf({ ablate: [] }, ['layers.2.out']);
  const [after2] = await tensorsOf({ ablate: [[3, 2]] }, ['layers.2.out']);
  assert.deepEqual(after2.data, before2.data, 'layer 2 is before the knocked-out head');
  const outs = [];
  for (const ablate of [[], [[3, 2]], [[3, 5]], [[3, 2], [3, 5]]]) outs.push((await tensorsOf({ ablate }, ['layers.3.attn.out']))[0].data);
  const [none, a, b, both] = outs;
  const sum = none.map((v, i) => v - a[i] + (v - b[i]));
  const together = none.map((v, i) => v - both[i]);
  assert.ok(maxDiff(sum, together) <= 1e-4 * maxAbs(together), `linear in the heads: ${maxDiff(sum, together)}`);
  assert.ok(maxAbs(together) > 1e-3, 'the two heads did something');
  await cleanScreenshot(page, 'interp-grid-ablated-en');
});

test('knock out: the before / after view shows the two predictions, their change and KL from the two runs', async () => {
  await open({ view: 'ablate' });
  const plain = await logitsOf({ ablate: [] });
  const ablated = await logitsOf({ ablate: [[3, 2]] });
  const [T, V] = plain.shape;
  // Every position's KL, shaded on its token; the lead names the largest, where the view opens.
  const kls = Array.from({ length: T }, (_, i) => kl(plain.data.slice(i * V, (i + 1) * V), ablated.data.slice(i * V, (i + 1) * V)));
  const strip = await page.$$eval('.view-ablate .ablate-kl-token', (buttons) => buttons.map((b) => Number(b.dataset.kl)));
  assert.equal(strip.length, T);
  strip.forEach((x, i) => close(x, kls[i], 1e-4 * Math.max(1, kls[i]), `KL at position ${i}`));
  const most = kls.indexOf(Math.max(...kls));
  assert.match(await page.locator('.view-ablate .ablate-kl-lead').innerText(), new RegExp(`The most at position ${most} \\(counting from 0\\)`));
  // With no position picked, the two predictions are after the last token, the one the output and
  // head attribution read; where the change is largest is one click away.
  assert.equal(await page.locator('.view-ablate .ablate-kl-token[aria-pressed="true"]').getAttribute('data-position'), String(T - 1));
  const row = ({ data }, i) => data.slice(i * V, (i + 1) * V);
  const pLast = [softmax(row(plain, T - 1)), softmax(row(ablated, T - 1))];
  for (const [id, before, after] of await shownTable('.view-ablate')) {
    close(before, pLast[0][id], 2e-5, `p before of ${id} at the last position`);
    close(after, pLast[1][id], 2e-5, `p after of ${id} at the last position`);
  }
  close(Number(await page.locator('.view-ablate .prediction-diff').getAttribute('data-kl')), kls[T - 1], 1e-4 * Math.max(1, kls[T - 1]), 'KL at the last position');
  assert.ok(kls[most] > 0);
  if (most !== T - 1) {
    assert.match(await page.locator('.view-ablate .ablate-most').innerText(), new RegExp(`Show the prediction after token ${most} \\(counting from 0\\) .*, where the change is largest`));
    await page.click('.view-ablate .ablate-most button');
    await settled(page);
    assert.equal(await page.evaluate(() => window.attnscope.getState().query), most);
    assert.equal(await page.locator('.view-ablate .ablate-most').count(), 0, 'shown: no button to it');
    const pBefore = softmax(row(plain, most));
    const pAfter = softmax(row(ablated, most));
    for (const [id, before, after] of await shownTable('.view-ablate')) {
      close(before, pBefore[id], 2e-5, `p before of ${id}`);
      close(after, pAfter[id], 2e-5, `p after of ${id}`);
    }
    close(Number(await page.locator('.view-ablate .prediction-diff').getAttribute('data-kl')), kls[most], 1e-4 * Math.max(1, kls[most]), 'KL(before ‖ after)');
    await page.evaluate(() => window.attnscope.app.set({ query: null }));
    await settled(page);
  }
  // A click on another token shows the change there.
  const elsewhere = most === 1 ? 2 : 1;
  await page.click(`.view-ablate .ablate-kl-token[data-position="${elsewhere}"]`);
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.getState().query), elsewhere);
  close(Number(await page.locator('.view-ablate .prediction-diff').getAttribute('data-kl')), kls[elsewhere], 1e-4 * Math.max(1, kls[elsewhere]), 'the diff follows the clicked position');
  await page.evaluate(() => window.attnscope.app.set({ query: null }));
  await settled(page);
  const changes = await page.$$eval('.view-ablate .ablate-changes tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => Number(td.dataset.value))));
  assert.deepEqual(changes.slice(0, 3).flat(), [0, 0, 0, 0, 0, 0], 'layers 0–2 unchanged');
  assert.equal(changes[3][0], 0, 'layer 3’s attention weights unchanged: the head still looks');
  assert.ok(changes[3][1] > 0, 'layer 3’s output changed');
  // Each head on the board is named by what it does on the input, as in the head grid.
  await page.waitForSelector('.view-ablate .ablate-board-cell .role-badge');
  const board = await page.$$eval('.view-ablate .ablate-board-cell', (cells) => cells.map((c) => c.querySelector('.role-badge')?.className.match(/role-(?!badge)(\w+)/)?.[1] ?? null));
  const roles = await page.evaluate(async () => (await window.attnscope.app.call('headRoles', { args: window.attnscope.app.args() })).flatMap((l) => l.heads.map((h) => h.role)));
  assert.deepEqual(board, roles.map((r) => r ?? null));
  // At 1280 px the eight heads' boxes fit the card: the last column is not cut at its edge.
  await page.setViewportSize({ width: 1280, height: 1000 });
  await until(page, () => {
    const b = document.querySelector('.view-ablate .ablate-board');
    return b.scrollWidth <= b.clientWidth;
  });
  await page.setViewportSize({ width: 1400, height: 1000 });
  // A second head from the board, by its role's words (the head's box is one target, its ⊘ and
  // its role framed together), then "Clear all": the whole model again.
  await page.click('.view-ablate .ablate-board-cell[data-layer="0"][data-head="1"] .role-badge');
  await page.waitForFunction(() => JSON.stringify(window.attnscope.getState().ablate) === '[[0,1],[3,2]]');
  await settled(page);
  assert.equal(await page.locator('.view-ablate .ablate-board .ablate-toggle.on').count(), 2);
  assert.equal(await page.locator('.view-ablate .ablate-board-cell.on').count(), 2, 'the knocked-out heads\' boxes marked');
  // On a phone the board scrolls sideways, its right edge fading where more heads lie beyond.
  await page.setViewportSize({ width: 390, height: 900 });
  await page.waitForFunction(() => document.querySelector('.view-ablate .ablate-board').dataset.fade === 'right');
  await page.setViewportSize({ width: 1400, height: 1000 });
  await settled(page);
  await cleanScreenshot(page, 'interp-ablate-en');
  const link = await page.evaluate(() => window.attnscope.link());
  await page.click('.ablation-bar .ablation-clear');
  await page.waitForFunction(() => window.attnscope.getState().ablate.length === 0);
  await settled(page);
  assert.ok(await page.locator('.ablation-bar').isHidden());
  assert.deepEqual(await page.evaluate(async () => Array.from(await window.attnscope.tensor('logits'))), plain.data, 'cleared: the whole model');
  // The link kept the two heads; it opens with them knocked out, in Chinese too.
  const other = await openPage(browser, `${link}&lang=zh`);
  await settled(other);
  assert.deepEqual(await other.evaluate(() => window.attnscope.getState().ablate), [[0, 1], [3, 2]]);
  assert.match(await other.locator('.ablation-bar').innerText(), /层 0 头 1/);
  await other.setViewportSize({ width: 1400, height: 1000 });
  await cleanScreenshot(other, 'interp-ablate-zh');
  assert.deepEqual(other.consoleErrors, []);
  await other.close();
});

test('knock out: the attention map toggles the head it shows', async () => {
  await open({ view: 'attention', layer: '1', head: '4' });
  await page.click('.view-attention .ablate-toggle');
  await page.waitForFunction(() => JSON.stringify(window.attnscope.getState().ablate) === '[[1,4]]');
  await settled(page);
  assert.equal(await page.locator('.view-attention .ablate-toggle').getAttribute('aria-pressed'), 'true');
  // The map says the head is off (its weights are still computed), framed as off, with the way to its effect.
  const note = page.locator('.view-attention .head-off-note');
  assert.match(await note.innerText(), /This head is knocked out\. It still computes the weights drawn here, but its output is set to zero/);
  assert.equal(await page.locator('.view-attention figure.head-off').count(), 1);
  assert.equal(await note.locator('a').getAttribute('href'), await page.evaluate(() => document.querySelector('#nav a.tab[data-view="ablate"]')?.getAttribute('href') ?? '#view=ablate'));
  // A followed row's list of heads that look elsewhere marks a knocked-out one.
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  const listed = async () => page.locator('.query-row-head').evaluateAll((bs) => bs.map((b) => [Number(b.dataset.layer), Number(b.dataset.head), b.textContent]));
  let heads = [];
  for (let q = T - 1; q > 1 && !heads.length; q--) {
    await page.evaluate((row) => window.attnscope.app.set({ query: row }), q);
    await settled(page);
    heads = await listed();
  }
  assert.ok(heads.length > 0, 'some row has heads that look elsewhere');
  const [l, h] = heads[0];
  await page.evaluate(([ll, hh]) => window.attnscope.app.set({ ablate: [[1, 4], [ll, hh]] }), [l, h]);
  await settled(page);
  for (const [ll, hh, text] of await listed()) assert.equal(/⊘ knocked out$/.test(text), (ll === l && hh === h) || (ll === 1 && hh === 4), text);
  await page.evaluate(() => window.attnscope.app.set({ ablate: [[1, 4]], query: null }));
  await settled(page);
  await page.click('.view-attention .ablate-toggle');
  await page.waitForFunction(() => window.attnscope.getState().ablate.length === 0);
  await settled(page);
  assert.equal(await note.isVisible(), false);
  assert.equal(await page.locator('.view-attention figure.head-off').count(), 0);
});

test('logit lens: every cell is the core’s top token of that layer’s read-out; the last layer is the model’s own logits', async () => {
  await open({ view: 'lens', layer: '1', query: '4' });
  const L = await page.evaluate(() => window.attnscope.app.model.num_hidden_layers);
  const names = Array.from({ length: L }, (_, l) => `layers.${l}.logit_lens`);
  const lens = await tensorsOf({ logitLens: true }, [...names, 'logits']);
  const [T, V] = lens[0].shape;
  assert.ok(maxDiff(lens[L - 1].data, lens[L].data) <= 2e-4 * maxAbs(lens[L].data), 'the last layer’s read-out is the logits');
  const cells = await page.$$eval('.view-lens .lens-cell', (list) => list.map((b) => ({ l: Number(b.dataset.layer), i: Number(b.dataset.position), id: Number(b.dataset.id), p: Number(b.dataset.value) })));
  assert.equal(cells.length, L * T);
  for (const { l, i, id, p } of cells) {
    const probs = softmax(lens[l].data.slice(i * V, (i + 1) * V));
    const best = probs.indexOf(Math.max(...probs));
    assert.equal(id, best, `top token of layer ${l}, position ${i}`);
    close(p, probs[best], 2e-5, `its probability (layer ${l}, position ${i})`);
  }
  // A cell opens its top ten.
  await page.click('.view-lens .lens-cell[data-layer="2"][data-position="6"]');
  await settled(page);
  assert.deepEqual(await page.evaluate(() => [window.attnscope.getState().layer, window.attnscope.getState().query]), [2, 6]);
  const probs = softmax(lens[2].data.slice(6 * V, 7 * V));
  const early = 2 < L - 1 ? '.view-lens .lens-early .bar-row' : '.view-lens .bar-row';
  const bars = await page.$$eval(early, (items) => items.map((li) => Number(li.dataset.value)));
  assert.equal(bars.length, 10);
  close(bars[0], Math.max(...probs), 2e-5, 'the top of the top ten');
  if (2 < L - 1) {
    // Beside it, the model's own answer there: the last layer's top ten.
    const finalBars = await page.$$eval('.view-lens .lens-final .bar-row', (items) => items.map((li) => Number(li.dataset.value)));
    assert.equal(finalBars.length, 10);
    close(finalBars[0], Math.max(...softmax(lens[L - 1].data.slice(6 * V, 7 * V))), 2e-5, 'the top of the answer’s top ten');
    assert.equal(await page.locator('.view-lens .bar-row').count(), 20);
  }
  // Short of the last layer, the cell is said not to be the model's answer, which is named beside it.
  if (2 < L - 1) {
    const last = lens[L - 1].data.slice(6 * V, 7 * V);
    const finalP = softmax(last)[last.indexOf(Math.max(...last))];
    const said = await page.locator('.view-lens .lens-not-final').innerText();
    assert.match(said, new RegExp(`^This is what layer 2 would say, not the model’s answer: after the last layer, ${L - 1}, the model predicts “.+” ${(finalP * 100).toFixed(finalP >= 0.1 ? 1 : 2)}% here`));
  } else assert.equal(await page.locator('.view-lens .lens-not-final').count(), 0, 'the last layer is the answer');
  await cleanScreenshot(page, 'interp-lens-en');
  // One click shows the last layer's cell, the model's answer, at the same position.
  if (2 < L - 1) {
    await page.click('.view-lens .lens-to-final');
    await settled(page);
    assert.deepEqual(await page.evaluate(() => [window.attnscope.getState().layer, window.attnscope.getState().query]), [L - 1, 6]);
    assert.equal(await page.locator('.view-lens .lens-not-final').count(), 0);
    assert.equal(await page.locator('.view-lens .lens-final').count(), 0, 'at the last layer one top ten');
    assert.equal(await page.locator('.view-lens .bar-row').count(), 10);
  }
  // From the lens to which heads push the prediction there: head attribution at the same position.
  await page.click('.view-lens .lens-to-attribution');
  await page.waitForSelector('.view-attribution');
  await settled(page);
  assert.deepEqual(await page.evaluate(() => [window.attnscope.getState().view, window.attnscope.getState().query]), ['attribution', 6]);
});

test('head attribution: the heatmap is the core’s head_logit at the position, for the top-1 token by default', async () => {
  await open({ view: 'attribution', query: '7' });
  const [logits] = await tensorsOf({}, ['logits']);
  const V = logits.shape[1];
  const probs = softmax(logits.data.slice(7 * V, 8 * V));
  const top = probs.indexOf(Math.max(...probs));
  assert.match(await page.locator('.view-attribution h3').innerText(), new RegExp(`id ${top}\\)`));
  const { L, nH } = await page.evaluate(() => ({ L: window.attnscope.app.model.num_hidden_layers, nH: window.attnscope.app.model.num_attention_heads }));
  const names = Array.from({ length: L }, (_, l) => `layers.${l}.attn.head_logit`);
  const found = await tensorsOf({ headLogit: true, targetToken: top }, names);
  const canvas = page.locator('.view-attribution canvas.heatmap-canvas');
  assert.equal(await canvas.getAttribute('data-values'), 'true', 'each head’s push is written in its cell');
  const roles = await page.evaluate(async () => (await window.attnscope.app.call('headRoles', { args: window.attnscope.app.args() })).map((l) => l.heads.map((h) => h.role)));
  for (const [l, h] of [[0, 0], [L - 1, nH - 1], [1, 3]]) {
    const { value, text } = await readCell(page, canvas, l, h);
    close(Number(value), found[l].data[7 * nH + h], 1e-6 * Math.max(1, Math.abs(found[l].data[7 * nH + h])), `head_logit of L${l} H${h}`);
    // The tooltip names what the head does on the input, as the head grid does.
    if (roles[l][h]) assert.match(text, /does here/, `L${l} H${h} (${roles[l][h]}): ${text}`);
  }
  // The strongest head each way, named only on the side it is on: the largest push if positive, the
  // smallest if negative, from the core's head_logit; each with its knock-out toggle.
  const pushes = found.flatMap((t, l) => Array.from({ length: nH }, (_, h) => ({ l, h, v: t.data[7 * nH + h] })));
  // For scale, the target's own logit and what all heads push together, from the core's tensors.
  const scale = await page.locator('.view-attribution .attribution-scale').evaluate((n) => ({ logit: Number(n.dataset.logit), heads: Number(n.dataset.heads), text: n.textContent }));
  assert.equal(Math.fround(scale.logit), logits.data[7 * V + top]);
  close(scale.heads, pushes.reduce((a, b) => a + b.v, 0), 1e-4, 'all heads together');
  assert.match(scale.text, /^For scale: the logit of “.+” here is −?[0-9.]+; all heads together push it [+−]?[0-9.]+, the rest of the residual stream \(the embedding and the FFNs\) [+−]?[0-9.]+\.$/);
  // A push is said not to be what knocking the head out does, before the reader tries it.
  assert.match(await page.locator('.view-attribution .attribution-versus').innerText(), /A push is not what knocking the head out would do\..+later layers .+ make up for the loss/);
  const up = pushes.reduce((a, b) => (b.v > a.v ? b : a));
  const down = pushes.reduce((a, b) => (b.v < a.v ? b : a));
  const named = (side) => page.$eval(`.view-attribution .attribution-${side}`, (n) => ({ text: n.textContent, head: n.querySelector('.attribution-head')?.dataset ?? null }));
  for (const [side, best, on] of [['up', up, up.v > 0], ['down', down, down.v < 0]]) {
    const shown = await named(side);
    if (!on) {
      assert.equal(shown.head, null, `${side}: no head named`);
      assert.match(shown.text, side === 'up' ? /^No head pushes “.+” up directly\.$/ : /^No head pushes it down directly\.$/);
      continue;
    }
    assert.deepEqual([Number(shown.head.layer), Number(shown.head.head)], [best.l, best.h], `${side}: ${shown.text}`);
    assert.ok(shown.text.includes(`L${best.l} H${best.h} (${best.v > 0 ? '+' : ''}${best.v.toFixed(3).replace('-', '−')} on the logit)`), `${side}: ${shown.text} vs ${best.v}`);
  }
  await page.click(`.view-attribution .attribution-up .ablate-toggle[data-layer="${up.l}"][data-head="${up.h}"]`);
  await page.waitForFunction((pair) => JSON.stringify(window.attnscope.getState().ablate) === JSON.stringify([pair]), [up.l, up.h]);
  await settled(page);
  // Knocked out, the head's own output is zero, so its direct push is too.
  const zeroed = await tensorsOf({ headLogit: true, targetToken: top }, [names[up.l]]);
  assert.equal(Math.abs(zeroed[0].data[7 * nH + up.h]), 0);
  const offCell = await readCell(page, canvas, up.l, up.h);
  assert.equal(Math.abs(Number(offCell.value)), 0);
  // Its 0 is not a head that does not touch the target: the cell is striped, the tooltip and legend say why.
  assert.match(offCell.text, /knocked out: this head’s output is zeroed/);
  assert.match(await page.locator('.view-attribution .legend').innerText(), /knocked out \(its push is 0\)/);
  // The colours keep the intact run's scale (its largest push), said under the map.
  const intactMax = Math.max(...pushes.map((p) => Math.abs(p.v)));
  assert.match(await page.locator('.view-attribution .attribution-kept-scale').innerText(), new RegExp(`keep the scale of the run with every head on \\(±${intactMax.toFixed(3)},`));
  // The focus outline sits on the cell (readCell left it there): the canvas pixels inside it hold
  // the stripes' dark grey, which no cell of the diverging scale has near 0.
  const dark = await page.evaluate(() => {
    const box = document.querySelector('.view-attribution .heatmap-focus').getBoundingClientRect();
    const canvas = document.querySelector('.view-attribution canvas.heatmap-canvas');
    const c = canvas.getBoundingClientRect();
    const k = canvas.width / c.width;
    const px = canvas.getContext('2d').getImageData(Math.round((box.left - c.left + 3) * k), Math.round((box.top - c.top + 3) * k), Math.max(1, Math.round((box.width - 6) * k)), Math.max(1, Math.round((box.height - 6) * k))).data;
    let n = 0;
    for (let p = 0; p < px.length; p += 4) if (px[p] < 120 && px[p + 1] < 120 && px[p + 2] < 120) n++;
    return n / (px.length / 4);
  });
  assert.ok(dark > 0.15, `the knocked-out cell is striped: ${(dark * 100).toFixed(0)} % dark pixels`);
  await page.click('.ablation-bar .ablation-clear');
  await page.waitForFunction(() => window.attnscope.getState().ablate.length === 0);
  await settled(page);

  // Another target, through the picker: the link keeps it.
  const second = probs.map((p, id) => [p, id]).sort((a, b) => b[0] - a[0])[1][1];
  await page.selectOption('.view-attribution select[name="target"]', String(second));
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.getState().target), second);
  const link = await page.evaluate(() => window.attnscope.link());
  await cleanScreenshot(page, 'interp-attribution-en');
  const other = await openPage(browser, `${link}&lang=zh`);
  await other.setViewportSize({ width: 1400, height: 1000 });
  await settled(other);
  const state = await other.evaluate(() => window.attnscope.getState());
  assert.deepEqual([state.view, state.target, state.query], ['attribution', second, 7]);
  assert.match(await other.locator('.view-attribution h3').innerText(), new RegExp(`id ${second}`));
  await cleanScreenshot(other, 'interp-attribution-zh');
  await other.evaluate(() => {
    location.hash = 'view=lens';
  });
  await settled(other);
  await cleanScreenshot(other, 'interp-lens-zh');
  // Each column's position stands over its token, so neighbouring headers do not run together, and
  // the table scrolled to the prediction shades the layer names' edge.
  const heads = await other.$$eval('.view-lens thead th.lens-input', (ths) => ths.map((th) => [th.querySelector('.lens-index').getBoundingClientRect().bottom, th.querySelector('.lens-input-token').getBoundingClientRect().top]));
  assert.ok(heads.length > 0 && heads.every(([bottom, top]) => bottom <= top + 0.5), JSON.stringify(heads));
  assert.equal(await other.evaluate(() => document.querySelector('.view-lens .table-scroll').classList.contains('scrolled')), await other.evaluate(() => document.querySelector('.view-lens .table-scroll').scrollLeft > 1));
  // The table opens scrolled to the prediction with no sliver of a column left beside the layer names.
  const sliver = () =>
    other.evaluate(() => {
      const box = document.querySelector('.view-lens .table-scroll');
      const edge = box.querySelector('th[scope="row"]').getBoundingClientRect().right;
      const cut = [...box.querySelectorAll('thead th.lens-input')].map((th) => th.getBoundingClientRect()).some((r) => r.left < edge - 1 && r.right > edge + 1);
      return { scrolled: box.scrollLeft > 0, cut };
    });
  for (const width of [900, 1000, 1100]) {
    await other.setViewportSize({ width, height: 900 });
    await other.evaluate(() => window.attnscope.app.set({ query: 5 }));
    await settled(other);
    await other.evaluate(() => window.attnscope.app.set({ query: window.attnscope.app.state.tokens.ids.length - 1 }));
    await settled(other);
    assert.deepEqual(await sliver(), { scrolled: true, cut: false }, `at ${width} px`);
  }
  // On a phone the table opens scrolled to the prediction, the layer names still in sight, and the
  // chosen cell beside them, not under them.
  await other.setViewportSize({ width: 390, height: 900 });
  await other.evaluate(() => window.attnscope.app.set({ query: window.attnscope.app.state.tokens.ids.length - 1 }));
  await settled(other);
  const seen = await other.evaluate(() => {
    const box = document.querySelector('.view-lens .table-scroll');
    const b = box.getBoundingClientRect();
    const names = [...box.querySelectorAll('th[scope="row"]')].map((th) => th.getBoundingClientRect());
    const cell = box.querySelector('.lens-cell.selected').getBoundingClientRect();
    return { scrolled: box.scrollLeft, inside: names.every((r) => r.left >= b.left - 1 && r.right <= b.right + 1), cell: cell.left >= names[0].right - 1 && cell.right <= b.right + 1 };
  });
  assert.deepEqual(seen, { scrolled: seen.scrolled, inside: true, cell: true });
  assert.ok(seen.scrolled > 0, 'the table is wider than a phone and opens scrolled');
  assert.equal((await sliver()).cut, false, 'no sliver on a phone either');
  await cleanScreenshot(other, 'interp-lens-zh-phone');
  assert.deepEqual(other.consoleErrors, []);
  await other.close();
});

test('knock out: with no head out, the view suggests the head that pushes the top next token up most, and one click knocks it out', async () => {
  await open({ view: 'ablate', ablate: '', query: '3' });
  await page.waitForSelector('.view-ablate .ablate-try-head');
  const best = await page.evaluate(async () => {
    const { app } = window.attnscope;
    const { num_hidden_layers: L, num_attention_heads: nH } = app.model;
    const i = 3; // the position asked for
    const { tensors: [logits] } = await window.attnscope.call('tensors', { args: app.args(), names: ['logits'] });
    const V = logits.shape[1];
    const last = Array.from(logits.data.slice(i * V, (i + 1) * V));
    const top = last.indexOf(Math.max(...last));
    const names = Array.from({ length: L }, (_, l) => `layers.${l}.attn.head_logit`);
    const { tensors } = await window.attnscope.call('tensors', { args: { ...app.args(), headLogit: true, targetToken: top }, names });
    let best = null;
    tensors.forEach((x, l) => x.data.slice(i * nH, (i + 1) * nH).forEach((v, h) => {
      if (v > 0 && (!best || v > best.v)) best = { l, h, v };
    }));
    return best;
  });
  const button = page.locator('.view-ablate .ablate-try-head');
  assert.deepEqual([Number(await button.getAttribute('data-layer')), Number(await button.getAttribute('data-head'))], [best.l, best.h]);
  assert.match(await page.locator('.view-ablate .ablate-try').innerText(), new RegExp(`Try knocking out layer ${best.l}, head ${best.h}: of all the heads, its output pushes`));
  await button.click();
  await page.waitForSelector('.view-ablate .prediction-diff');
  await settled(page);
  assert.deepEqual((await page.evaluate(() => window.attnscope.getState())).ablate, [[best.l, best.h]]);
  assert.equal(await page.locator('.view-ablate .ablate-try').count(), 0, 'the suggestion goes once a head is out');
  // The result is brought into view, its heading focused: the board above grew a bar meanwhile.
  const [top, height] = await page.locator('.view-ablate .ablate-prediction').evaluate((card) => [card.getBoundingClientRect().top, innerHeight]);
  assert.ok(top >= 0 && top < height / 2, `the before / after card is in view (top ${top} of ${height})`);
  const barBottom = await page.locator('.ablation-bar').evaluate((bar) => bar.getBoundingClientRect().bottom);
  assert.ok(top >= barBottom, `not under the knocked-out heads' bar (card ${top}, bar ends ${barBottom})`);
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'The prediction before and after');
  await open({ view: 'ablate', ablate: '' });
});

test('knock out on the WebGPU backend: the run goes to the CPU, whole, and the bar says so', async (t) => {
  const adapter = await page.evaluate(async () => Boolean(await navigator.gpu?.requestAdapter()));
  if (!adapter) return t.skip('this browser has no WebGPU adapter');
  await open({ view: 'ablate', backend: 'gpu', ablate: '1.4', lang: 'en' });
  const run = await page.evaluate(() => window.attnscope.app.run);
  assert.equal(run.backend, 'cpu');
  assert.match(run.cpuFallback, /CPU/);
  assert.match(await page.locator('.ablation-bar .ablation-fallback').innerText(), /went to the CPU/);
  const shown = await page.evaluate(async () => Array.from(await window.attnscope.tensor('logits')));
  assert.deepEqual(shown, (await logitsOf({ backend: 'cpu' })).data, 'the CPU’s ablated run');
  await open({ backend: 'auto', ablate: '' });
});

// --- against PyTorch: the core engineer's reference fixture (tools/reference/make_fixtures.py) ---

const FIXTURE = fileURLToPath(new URL('../fixtures/ablate_lens/', import.meta.url));
// A byte-level tokenizer with the fixture model's 256 ids (the MiniMind-3 bf16 test checkpoint's).
const TOKENIZER = fileURLToPath(new URL('../fixtures/checkpoints/minimind3_bf16/tokenizer.json', import.meta.url));

// The f32 tensors of a safetensors file by name.
function readTrace(path) {
  const bytes = readFileSync(path);
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

function relDiff(ours, reference) {
  assert.equal(ours.length, reference.length);
  return maxDiff(ours, reference) / maxAbs(reference);
}

test('knock out against PyTorch: the reference model loaded in the page, its two heads clicked off in the head grid, gives the fixture’s logits, logit lens and head attribution', async () => {
  const run = JSON.parse(readFileSync(`${FIXTURE}run.json`, 'utf8'));
  const { ids } = JSON.parse(readFileSync(`${FIXTURE}input.json`, 'utf8'));
  const reference = readTrace(`${FIXTURE}trace.safetensors`);
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const own = await context.newPage();
  own.consoleErrors = [];
  own.on('console', (m) => m.type() === 'error' && own.consoleErrors.push(m.text()));
  own.on('pageerror', (e) => own.consoleErrors.push(String(e)));
  await own.goto(`${server.url}#lang=en&view=grid`);
  await settled(own);
  await own.click('.segment[data-source="own"]');
  await own.setInputFiles('#model-files', ['config.json', 'model.safetensors'].map((f) => `${FIXTURE}${f}`).concat(TOKENIZER));
  await own.waitForFunction(() => !window.attnscope.app.loading && window.attnscope.app.model?.vocab_size === 256, null, { timeout: 60_000 });
  await settled(own);
  // The fixture's ids are bytes that make no text, so they go in as the page's run with its own
  // arguments (its knocked-out heads among them) and only the ids replaced.
  const logitsOfFixture = () =>
    own.evaluate(async (list) => {
      const { tensors } = await window.attnscope.call('tensors', { args: { ...window.attnscope.app.args(), ids: list, attention_mask: null }, names: ['logits'] });
      return Array.from(tensors[0].data);
    }, ids);
  const whole = await logitsOfFixture();
  for (const [l, h] of run.ablate) {
    await own.click(`.view-grid .thumb[data-layer="${l}"][data-head="${h}"] .ablate-toggle`);
    await own.waitForFunction((pair) => window.attnscope.getState().ablate.some(([a, b]) => a === pair[0] && b === pair[1]), [l, h]);
    await settled(own);
  }
  assert.deepEqual(await own.evaluate(() => window.attnscope.getState().ablate), run.ablate);
  const logits = await logitsOfFixture();
  assertClose(WASM_VS_PYTORCH, 'ablate_lens: logits', logits, reference.logits);
  assert.ok(relDiff(whole, reference.logits) > 1e-2, 'and the whole model’s do not match them');
  // The logit lens and head attribution views' own requests, as they make them.
  const L = 3;
  const names = Array.from({ length: L }, (_, l) => [`layers.${l}.logit_lens`, `layers.${l}.attn.head_logit`]).flat();
  const found = await own.evaluate(
    async ({ list, target, fixtureIds }) => {
      const { tensors } = await window.attnscope.call('tensors', { args: { ...window.attnscope.app.args(), ids: fixtureIds, attention_mask: null, logitLens: true, headLogit: true, targetToken: target }, names: list });
      return tensors.map((x) => Array.from(x.data));
    },
    { list: names, target: run.target_token, fixtureIds: ids },
  );
  names.forEach((name, k) => assertClose(WASM_VS_PYTORCH, `ablate_lens: ${name}`, found[k], reference[name]));
  assert.deepEqual(own.consoleErrors, []);
  await context.close();
});

test('head attribution on a touch screen: a tap shows a head’s push, a second tap on it opens its attention map', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  const phone = await context.newPage();
  const errors = [];
  phone.on('pageerror', (e) => errors.push(String(e)));
  await phone.goto(`${server.url}#view=attribution&lang=en`);
  await phone.waitForFunction(() => window.attnscope?.app?.phase === 'ready', null, { timeout: 120_000 });
  await settled(phone);
  const canvas = phone.locator('.view-attribution canvas.heatmap-canvas');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const [x, y] = [box.x + box.width * 0.6, box.y + box.height * 0.6];
  await phone.touchscreen.tap(x, y);
  await phone.waitForSelector('.tooltip.visible');
  assert.match(await phone.locator('.tooltip').innerText(), /direct push on the logit/);
  assert.equal(await phone.evaluate(() => window.attnscope.getState().view), 'attribution', 'one tap stays');
  await phone.touchscreen.tap(x, y);
  await phone.waitForFunction(() => window.attnscope.getState().view === 'attention');
  // It opens on the row attribution was reading (the last position), not on the head's habit alone.
  const { query, tokens } = await phone.evaluate(() => window.attnscope.app.state);
  assert.equal(query, tokens.ids.length - 1, 'the attributed position is the query row');
  assert.deepEqual(errors, []);
  await context.close();
});

test('knock out from head attribution: “Before and after” opens at the position attribution was reading, the last', async () => {
  const from = await openPage(browser, `${server.url}#${new URLSearchParams({ lang: 'en', view: 'attribution' })}`);
  await settled(from);
  assert.equal(await from.evaluate(() => window.attnscope.getState().query), null, 'attribution reads the last position by default');
  await from.click('.view-attribution .attribution-up .ablate-toggle');
  await from.waitForFunction(() => window.attnscope.getState().ablate.length === 1);
  await settled(from);
  await from.click('.ablation-bar a');
  await from.waitForFunction(() => window.attnscope.getState().view === 'ablate');
  await settled(from);
  const { query, tokens } = await from.evaluate(() => window.attnscope.app.state);
  assert.equal(query, tokens.ids.length - 1, 'the knock-out view opens where the reader was, not at the largest change');
  assert.deepEqual(from.consoleErrors, []);
  await from.close();
});

test('on a phone, in Chinese: the board’s layer names and the change table’s numbers keep to one line each', async () => {
  const phone = await openPage(browser, `${server.url}#${new URLSearchParams({ lang: 'zh', view: 'ablate', ablate: '1.2,2.5' })}`);
  await phone.setViewportSize({ width: 390, height: 900 });
  await settled(phone);
  // The lines a node's text is laid out on: the distinct tops of its text's boxes (they wrapped to 2–3
  // lines at 390 px).
  const lines = (selector) =>
    phone.$$eval(selector, (nodes) =>
      nodes.map((n) => {
        const range = document.createRange();
        range.selectNodeContents(n);
        return { text: n.textContent, lines: new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size };
      }),
    );
  const labels = await lines('.ablate-board-layer');
  assert.equal(labels.length, 4);
  assert.ok(labels.every((x) => x.lines === 1), JSON.stringify(labels));
  const cells = await lines('.diff-table td.num');
  assert.ok(cells.length >= 8 * 3);
  assert.ok(cells.every((c) => c.lines === 1), JSON.stringify(cells.filter((c) => c.lines !== 1)));
  assert.ok(cells.some((c) => c.text.endsWith('个百分点')));
  await phone.evaluate(() => document.querySelector('.diff-table').scrollIntoView());
  await cleanScreenshot(phone, 'interp-ablate-zh-phone');
  assert.deepEqual(phone.consoleErrors, []);
  await phone.close();
});

test('on a phone, in English: the board keeps every word of its role labels whole and scrolls sideways to its last head', async () => {
  const phone = await openPage(browser, `${server.url}#view=ablate`);
  await phone.setViewportSize({ width: 390, height: 900 });
  await settled(phone);
  const seen = await phone.evaluate(() => {
    const board = document.querySelector('.ablate-board');
    // A word laid out over two lines has client rects at two heights.
    const broken = [];
    for (const badge of board.querySelectorAll('.role-badge')) {
      const text = badge.firstChild?.nodeType === Node.TEXT_NODE ? badge.firstChild : null;
      if (!text) continue;
      for (const m of text.data.matchAll(/[^\s-]+/g)) {
        const range = document.createRange();
        range.setStart(text, m.index);
        range.setEnd(text, m.index + m[0].length);
        if (new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) broken.push(m[0]);
      }
    }
    board.scrollLeft = board.scrollWidth;
    const last = [...board.querySelectorAll('.ablate-board-head')].at(-1).getBoundingClientRect();
    const box = board.getBoundingClientRect();
    return { broken, scrolls: board.scrollWidth > board.clientWidth, lastInside: last.left >= box.left && last.right <= box.right + 1, page: document.documentElement.scrollWidth };
  });
  assert.deepEqual(seen, { broken: [], scrolls: true, lastInside: true, page: 390 });
  assert.deepEqual(phone.consoleErrors, []);
  await phone.close();
});

test('no console errors', () => {
  assert.deepEqual(page.consoleErrors, []);
});

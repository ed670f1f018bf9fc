// Long inputs (1,000+ tokens) on the built-in model: the attention map is read through a window of
// readable rows around the followed query, with the whole map pooled beside it (a click there moves
// the window); its cells are the run's own numbers at their input positions; no two labels overlap;
// a head whose role changes along the text says where, with scores equal to this file's own measure
// of the run's attn.probs over those rows; and at 1,500 tokens every step of the pipeline paints its
// heatmaps (none past the canvas limit, none blank). Screenshots: artifacts/screenshots/long-*.png.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanScreenshot, go, openPage, readCell, serverAndBrowser, settled } from './helpers.mjs';

const env = serverAndBrowser();

// The built-in model on its English samples, repeated until the input has at least `tokens` tokens.
async function longPage(tokens, { width = 1280, deviceScaleFactor = 1 } = {}) {
  const page = await openPage(env.browser, new URL('index.html', env.server.url).href, { deviceScaleFactor });
  await page.setViewportSize({ width, height: 900 });
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000 });
  await settled(page);
  const text = await page.evaluate(async (n) => {
    const samples = await (await fetch('./models/builtin/samples.json')).json();
    const joined = samples.en.map((s) => s.text).join(' ');
    // English runs 2.4–4 characters a token on this tokenizer: 4.2 characters a token is always enough.
    return Array(Math.ceil((4.2 * n) / joined.length)).fill(joined).join(' ');
  }, tokens);
  await page.fill('#text', text);
  await page.waitForFunction((n) => window.attnscope.app.state.tokens.ids.length >= n, tokens, { timeout: 90_000 });
  await settled(page);
  // Cut to about `tokens` (a run records every tensor, whose size grows with the square of the
  // length: the page refuses past 1,545 tokens of the built-in model), then wait for the shorter run.
  for (let cut = text; ; ) {
    const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
    if (T <= tokens + 40) break;
    cut = cut.slice(0, Math.floor((cut.length * (tokens + 20)) / T));
    await page.fill('#text', cut);
    await page.waitForFunction((n) => window.attnscope.app.state.tokens.ids.length < n, T, { timeout: 90_000 });
    await settled(page);
  }
  return page;
}

// The measures of head h over query rows [from, to) of a causal unpadded run, as src/analysis/head_roles.rs
// defines them: rows with two keys before them; mean weight on the key before, on itself, on key 0.
function measure(probs, T, h, from, to) {
  const s = { previous: 0, current: 0, first: 0, rows: 0 };
  for (let i = Math.max(from, 2); i < to; i++) {
    const row = probs.subarray((h * T + i) * T, (h * T + i + 1) * T);
    s.previous += row[i - 1];
    s.current += row[i];
    s.first += row[0];
    s.rows++;
  }
  return { previous: s.previous / s.rows, current: s.current / s.rows, first: s.first / s.rows, rows: s.rows };
}

// One page at 1,000 tokens for the attention map's tests (a run of that length takes a while).
let thousand = null;
const thousandPage = async () => (thousand ??= await longPage(1000));

test('a 1,000-token attention map is a window of readable rows around the followed query, with the whole map beside it', async () => {
  const page = await thousandPage();
  await page.evaluate(() => window.attnscope.app.set({ view: 'attention', layer: 2, head: 1, stage: 'probs', query: 700 }));
  await page.waitForSelector('.view-attention');
  await settled(page);
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  assert.ok(T >= 1000, `${T} tokens`);

  const box = page.locator('.map-window');
  assert.ok(await box.isVisible(), 'the window and its overview are shown');
  const said = await page.locator('.map-window-text').innerText();
  const [, from, to] = said.match(/rows (\d+)–(\d+) of/).map(Number);
  assert.ok(from <= 700 && to >= 700 && to - from + 1 <= 64, `the window ${from}–${to} holds the followed row and few enough rows to read`);
  assert.match(said, new RegExp(`of ${T.toLocaleString('en')} tokens`));

  const main = page.locator('.attention-figure > .heatmap .heatmap-canvas');
  const geometry = await main.evaluate((c) => ({ width: c.getBoundingClientRect().width, overlaps: c.dataset.labelOverlaps, skipped: c.dataset.skippedLabels, guides: c.dataset.guides }));
  assert.ok(geometry.width <= 1280, `the map is ${geometry.width} px wide`);
  assert.equal(geometry.overlaps, '0', 'no two labels overlap');
  assert.equal(geometry.skipped, '0', 'every row and key of the window is labelled');
  assert.match(geometry.guides, /break 1/, 'the pinned first key stands apart');

  // The cell (followed row, its own key) read by keyboard is the run's weight at those input positions.
  // The run's weights at (700, 700) and (700, 0), head 1 (only these cross to the test: the tensor is 8 × T × T).
  const [self, sink] = await page.evaluate(async (n) => {
    const probs = await window.attnscope.tensor('layers.2.attn.probs');
    return [probs[(n + 700) * n + 700], probs[(n + 700) * n]];
  }, T);
  const at = (i, j) => (j === 0 ? sink : self);
  const r = 700 - from;
  const c = 1 + (700 - (to - 46)); // key 0 pinned first, then keys to − 46 … to
  // The keyboard starts on the followed row (its first key): readCell's (0, c) is (row 700, c).
  assert.equal(r, 700 - from);
  const cell = await readCell(page, main, 0, c);
  assert.match(cell.text, /700/, `the tooltip names position 700: ${cell.text}`);
  assert.ok(Math.abs(Number(cell.value) - at(700, 700)) <= 1e-6, `cell ${cell.value} vs probs[700, 700] ${at(700, 700)}`);
  const first = await readCell(page, main, 0, 0);
  assert.ok(Math.abs(Number(first.value) - at(700, 0)) <= 1e-6, `the pinned key is key 0: ${first.value} vs ${at(700, 0)}`);

  // A click on the overview's top-left moves the window to the text's start and follows a row there.
  const overview = page.locator('.map-window-overview .heatmap-canvas');
  const ob = await overview.boundingBox();
  await overview.click({ position: { x: 1, y: 1 } });
  await settled(page);
  const query = await page.evaluate(() => window.attnscope.app.state.query);
  assert.ok(query !== null && query < 10, `the overview's corner follows an early row (${query})`);
  const moved = await page.locator('.map-window-text').innerText();
  assert.match(moved, /rows 0–47 of/, moved);
  assert.ok(ob.width <= 190, `the overview is small (${ob.width} px)`);
  await cleanScreenshot(page, 'long-attention-window');
  assert.deepEqual(page.consoleErrors, []);
});

test('on a long text, a head whose role changes says where, with scores measured on those rows', async () => {
  const page = await thousandPage();
  await page.evaluate(() => window.attnscope.app.set({ view: 'attention', layer: 0, head: 0, stage: 'probs', query: null }));
  await page.waitForSelector('.view-attention');
  await settled(page);
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  const roles = await page.evaluate(async () => {
    const { app } = window.attnscope;
    return app.call('headRoles', { args: app.args() });
  });
  const changing = roles.flatMap(({ layer, heads }) => heads.filter((h) => h.stretches).map((h) => ({ layer, ...h })));
  assert.ok(changing.length > 0, 'some head of the built-in model (trained on 128-token windows) changes along 1,000 tokens');
  const { layer, head, stretches } = changing[0];
  assert.equal(stretches[0].from, 0);
  assert.equal(stretches.at(-1).to, T);
  for (let k = 1; k < stretches.length; k++) {
    assert.equal(stretches[k].from, stretches[k - 1].to, 'the stretches cover the text end to end');
    assert.notEqual(stretches[k].role, stretches[k - 1].role, 'neighbours differ');
  }
  // Head `head`'s rows only cross to the test (the tensor is nH × T × T).
  const probs = Float32Array.from(await page.evaluate(async ([l, h, n]) => Array.from((await window.attnscope.tensor(`layers.${l}.attn.probs`)).subarray(h * n * n, (h + 1) * n * n)), [layer, head, T]));
  for (const s of stretches) {
    const ours = measure(probs, T, 0, s.from, s.to);
    for (const k of ['previous', 'current', 'first']) assert.ok(Math.abs(ours[k] - s.scores[k]) < 1e-4, `L${layer}H${head} ${s.from}–${s.to} ${k}: ${s.scores[k]} vs ${ours[k]}`);
  }

  await page.evaluate(([l, h]) => window.attnscope.app.set({ layer: l, head: h }), [layer, head]);
  await settled(page);
  const line = page.locator('.head-role-stretches');
  assert.ok(await line.isVisible(), 'the attention map says where the role changes');
  const items = await line.locator('.role-stretch').evaluateAll((nodes) => nodes.map((n) => [Number(n.dataset.from), Number(n.dataset.to), n.dataset.role]));
  assert.deepEqual(items, stretches.map((s) => [s.from, s.to - 1, s.role]));
  assert.match(await line.innerText(), /trained on texts of at most 128 tokens/);
  await cleanScreenshot(page, 'long-role-stretches');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
  thousand = null;
});

test('at 1,500 tokens every kind of pipeline step paints its heatmaps: none past the canvas limit, none blank', async () => {
  // At two device pixels per CSS pixel (a retina screen) a 1,500-row map would be past 32,767 px.
  const page = await longPage(1500, { deviceScaleFactor: 2 });
  await go(page, 'stepper');
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  assert.ok(T >= 1500 && T <= 1545, `${T} tokens`);
  const total = Number((await page.locator('.step-kicker').innerText()).match(/\/ (\d+)/)[1]);
  // Every kind of step: the embedding, the first layer's steps (each later layer repeats them at the
  // same sizes), then the final norm, the logits and the prediction.
  const L = await page.evaluate(() => window.attnscope.app.model.num_hidden_layers);
  const perLayer = (total - 4) / L;
  const seen = [];
  const look = async (where) => {
    const canvases = await page.$$eval('.view-stepper canvas.heatmap-canvas', (nodes) =>
      nodes.map((c) => {
        const [y0, h, x0, w] = c.dataset.cells.split(' ').map(Number);
        const ratio = c.width / c.getBoundingClientRect().width || 1;
        // The middle of the cells must hold paint (a canvas past the browser's limits stays blank).
        const alpha = c.getContext('2d').getImageData(Math.floor((x0 + w / 2) * ratio), Math.floor((y0 + h / 2) * ratio), 1, 1).data[3];
        return { w: c.width, h: c.height, alpha, cells: c.dataset.cells };
      }),
    );
    for (const c of canvases) {
      assert.ok(c.w <= 32_767 && c.h <= 32_767 && c.w * c.h <= 16_384 * 16_384, `${where}: a ${c.w} × ${c.h} canvas`);
      assert.ok(c.w > 0 && c.h > 0, `${where}: an empty canvas`);
    }
    seen.push(...canvases);
  };
  for (let i = 0; i < 1 + perLayer; i++) {
    await look(`step ${i + 1}`);
    await page.locator('body').press('ArrowRight');
    await settled(page);
  }
  for (const step of ['final_norm', 'logits', 'prediction']) {
    await page.evaluate((s) => window.attnscope.app.set({ step: s }), step);
    await settled(page);
    await look(step);
  }
  assert.ok(seen.length > perLayer, `${seen.length} heatmaps`);
  assert.match(await page.locator('.step-kicker').innerText(), new RegExp(`${total} / ${total}`), 'the walk ends on the last step');
  const tall = seen.filter((c) => c.h > 4000);
  assert.ok(tall.length > 0, 'some step draws a 1,500-row map');
  assert.ok(seen.some((c) => c.h >= 32_000 || c.w >= 32_000 || c.w * c.h >= 2 ** 27), 'some map would have been past a limit at the screen’s pixel ratio');
  assert.ok(tall.every((c) => c.alpha > 0), 'every tall map is painted');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

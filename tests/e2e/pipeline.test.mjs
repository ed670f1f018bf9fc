// The pipeline walks the whole model and ends on the prediction; the views that show probabilities
// show the model's own softmax (issue 10, points 3 and 7). Checked in real Chromium against numbers
// computed here from the worker's tensors (window.attnscope.tensor): the stepper's walk across layer
// boundaries and its old links, the prediction's top token and probability, Output's absolute bars
// and no stray "false", the KV cache view's probabilities, and the GPU note that keeps the top bar one
// line. Screenshots of each step kind in English and 简体中文: artifacts/screenshots/pipeline-*.png.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { cleanScreenshot, go, launch, openPage, randomModel, readCell, settled, startServer } from './helpers.mjs';

const PER_LAYER = 17; // input_norm … layer out, repeat_kv included (the default random model is GQA: 4 heads, 2 KV)
const GLOBAL_BEFORE = 1; // embed
const GLOBAL_AFTER = 3; // final_norm, logits, prediction

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await launch();
  page = await openPage(browser, `${server.url}${randomModel({ view: 'stepper', step: 'embed' })}`);
  await page.setViewportSize({ width: 1400, height: 1000 });
  await settled(page);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const shot = (name) => cleanScreenshot(page, name);
const kicker = () => page.locator('.step-kicker').innerText();
const activeStep = () => page.locator('.rail-step.active').getAttribute('data-step');
const state = () => page.evaluate(() => window.attnscope.app.state);
const layerCount = () => page.evaluate(() => window.attnscope.app.model.num_hidden_layers);

async function press(key) {
  await page.locator('body').press(key);
  await settled(page);
}

// softmax(logits[i]) over the whole vocabulary, in f64, from the run's own logits tensor.
async function softmaxRow(i) {
  const { row } = await page.evaluate(async (pos) => {
    const logits = await window.attnscope.tensor('logits');
    const T = window.attnscope.app.state.tokens.ids.length;
    const V = logits.length / T;
    return { row: Array.from(logits.slice(pos * V, (pos + 1) * V)) };
  }, i);
  const m = Math.max(...row);
  const e = row.map((x) => Math.exp(x - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

function argmax(xs) {
  return xs.reduce((best, x, i) => (x > xs[best] ? i : best), 0);
}

function close(actual, expected, tol, what) {
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: shown ${actual}, expected ${expected}`);
}

test('the stepper walks every layer, crossing layer boundaries with → and ←, and ends on the prediction', async () => {
  const L = await layerCount();
  const total = GLOBAL_BEFORE + L * PER_LAYER + GLOBAL_AFTER;
  assert.ok(L >= 2, `the default model has ${L} layers`);
  assert.equal(await page.locator('.rail-step').count(), GLOBAL_BEFORE + PER_LAYER + GLOBAL_AFTER, 'the rail lists the per-layer steps once');
  assert.match(await kicker(), new RegExp(`1 / ${total}`));
  for (let i = 1; i < total; i++) {
    await press('ArrowRight');
    const k = await kicker();
    assert.match(k, new RegExp(`\\b${i + 1} / ${total}`), `step ${i + 1}`);
    const { step, layer } = await state();
    if (i >= GLOBAL_BEFORE && i < GLOBAL_BEFORE + L * PER_LAYER) {
      const l = Math.floor((i - GLOBAL_BEFORE) / PER_LAYER);
      assert.equal(layer, l, `step ${i + 1} is in layer ${l}`);
      assert.match(k, new RegExp(`layer ${l} of ${L}`, 'i'));
      assert.match(await page.locator('.rail-section[data-section="attn"]').innerText(), new RegExp(`layer ${l} of ${L}`, 'i'), 'the rail shows the layer');
      // Every tensor the step draws is this layer's (or a global one, RoPE's tables).
      for (const name of await page.locator('.tensor-name').allInnerTexts()) assert.match(name, new RegExp(`^(layers\\.${l}\\.|rope\\.)`));
    }
    if ((i - GLOBAL_BEFORE) % PER_LAYER === 0 && i > GLOBAL_BEFORE && i < GLOBAL_BEFORE + L * PER_LAYER) {
      // One layer's output leads into the next layer's input_norm, and ← goes back across the boundary.
      assert.equal(step, 'input_norm');
      await press('ArrowLeft');
      assert.deepEqual([(await state()).step, (await state()).layer], ['layer_out', layer - 1]);
      await press('ArrowRight');
      assert.deepEqual([(await state()).step, (await state()).layer], ['input_norm', layer]);
    }
  }
  assert.equal(await activeStep(), 'prediction');
  assert.ok(await page.locator('.view-stepper .nav-button').last().isDisabled(), '→ stops at the prediction');
  await press('ArrowLeft');
  assert.equal(await activeStep(), 'logits');
  await press('ArrowLeft');
  await press('ArrowLeft');
  assert.deepEqual([(await state()).step, (await state()).layer], ['layer_out', L - 1], '← from final_norm enters the last layer');
});

test('under a step the arrows again: a long step ends with ← and → that step and bring the toolbar back into view', async () => {
  await page.evaluate(() => { location.hash = 'view=stepper&step=scores&layer=1'; });
  await settled(page);
  const next = page.locator('.view-stepper .step-bottom-nav .step-next');
  await next.scrollIntoViewIfNeeded();
  await next.click();
  await settled(page);
  assert.deepEqual([(await state()).step, (await state()).layer], ['masked_scores', 1]);
  const top = await page.locator('.view-stepper .stepper-bar').evaluate((bar) => bar.getBoundingClientRect().top);
  assert.ok(top >= 0 && top < 200, `the toolbar is back in view (top ${top})`);
  await page.locator('.view-stepper .step-bottom-nav .step-prev').click();
  await settled(page);
  assert.deepEqual([(await state()).step, (await state()).layer], ['scores', 1]);
  // The last step ends with ← only, after where to go next; the first's ← is disabled.
  await page.evaluate(() => { location.hash = 'view=stepper&step=prediction'; });
  await settled(page);
  assert.equal(await page.locator('.view-stepper .step-bottom-nav .step-next').count(), 0);
  await page.evaluate(() => { location.hash = 'view=stepper&step=embed'; });
  await settled(page);
  assert.ok(await page.locator('.view-stepper .step-bottom-nav .step-prev').isDisabled());
  assert.doesNotMatch(await page.locator('.view-stepper .step-card').innerText(), /\bnull\b/);
});

test('the prediction: top-1 token and probability are softmax(logits[pos]), for the last or a picked position', async () => {
  await page.evaluate(() => { location.hash = 'view=stepper&step=prediction'; });
  await page.waitForSelector('.prediction-sentence');
  await settled(page);
  const T = (await state()).tokens.ids.length;
  for (const pos of [T - 1, 1]) {
    if (pos !== T - 1) {
      await page.selectOption('.view-stepper select[name="query"]', String(pos));
      await settled(page);
    }
    const p = await softmaxRow(pos);
    const best = argmax(p);
    const bars = page.locator('.view-stepper .bar-row');
    assert.equal(await bars.count(), 10);
    assert.match(await bars.first().innerText(), new RegExp(`· id ${best}\\b`), `position ${pos}: the top token is id ${best}`);
    close(Number(await bars.first().getAttribute('data-value')), p[best], 1e-6, `position ${pos}: top probability`);
    const shown = Number(await page.locator('.prediction-sentence output').getAttribute('data-value'));
    close(shown, p[best], 1e-6, 'the sentence’s p');
    const sentence = await page.locator('.prediction-sentence').innerText();
    assert.match(sentence, /^After “.+” the model predicts “.+” \(\d+\.\d+%\)\.$/);
    const piece = (await bars.first().locator('.bar-label').innerText()).replace(/ · id \d+$/, '');
    assert.ok(sentence.includes(`predicts “${piece}”`), `the sentence names the top token ${piece}: ${sentence}`);
    const ps = await bars.evaluateAll((rows) => rows.map((r) => Number(r.dataset.value)));
    ps.forEach((q, n) => close(q, [...p].sort((a, b) => b - a)[n], 1e-6, `candidate ${n}`));
  }
  await shot('pipeline-en-prediction');
});

test('old step/layer links open the same step', async () => {
  for (const [step, layer, tensor] of [['probs', 1, 'layers.1.attn.probs'], ['qkv', 0, 'layers.0.attn.q'], ['logits', 1, 'logits']]) {
    await page.evaluate((hash) => { location.hash = hash; }, `view=stepper&step=${step}&layer=${layer}`);
    await page.waitForFunction(([s, l]) => window.attnscope.app.state.step === s && window.attnscope.app.state.layer === l, [step, layer]);
    await settled(page);
    assert.equal(await activeStep(), step);
    assert.equal(await page.locator('.tensor-name').first().innerText(), tensor);
    if (step !== 'logits') assert.match(await kicker(), new RegExp(`layer ${layer} of`, 'i'));
  }
});

test('repeat_kv: query head h reads KV head ⌊h / n_rep⌋ of the cache, cell for cell; an MHA model has no such step', async () => {
  await page.evaluate(() => window.attnscope.setState({ view: 'stepper', step: 'repeat_kv', layer: 1 }));
  await settled(page);
  const { nH, nKV, d } = await page.evaluate(() => ({ nH: window.attnscope.app.model.num_attention_heads, nKV: window.attnscope.app.model.num_key_value_heads, d: window.attnscope.app.model.head_dim }));
  assert.ok(nKV < nH);
  const names = await page.locator('.tensor-name').allInnerTexts();
  assert.deepEqual(names, ['layers.1.attn.k_cache[:, ⌊h / n_rep⌋]', 'layers.1.attn.v_cache[:, ⌊h / n_rep⌋]']);
  // The rail, scrolled to a middle step, fades at an edge only where more steps lie beyond it.
  const rail = page.locator('.rail-wrap');
  if (await rail.evaluate((w) => w.scrollWidth > w.clientWidth)) {
    await page.waitForFunction(() => document.querySelector('.rail-wrap').dataset.fade !== undefined);
    const edges = await rail.evaluate((w) => ({ fade: w.dataset.fade, left: w.scrollLeft > 1, right: w.scrollWidth - w.clientWidth - w.scrollLeft > 1 }));
    assert.equal(edges.fade, edges.left && edges.right ? 'both' : edges.left ? 'left' : 'right', JSON.stringify(edges));
  }
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  assert.match(await page.locator('.tensor-figure .shape').first().innerText(), new RegExp(`^\\[1, ${T}, ${nH}, ${d}\\]$`));
  const cache = await page.evaluate(() => window.attnscope.tensor('layers.1.attn.k_cache').then(Array.from));
  const canvas = page.locator('.tensor-figure canvas').first();
  const nRep = nH / nKV;
  for (const [r, h, c] of [[2, nH - 1, 3], [T - 1, 1, 0], [0, nRep, d - 1]]) {
    const cell = await readCell(page, canvas, r, h * d + c);
    assert.equal(Math.fround(Number(cell.value)), Math.fround(cache[(r * nKV + Math.floor(h / nRep)) * d + c]), `row ${r}, head ${h}, dim ${c}`);
  }
  // Multi-head attention (nKV = nH) has nothing to repeat: the walk has no such step.
  await page.evaluate(() => window.attnscope.setState({ config: { num_key_value_heads: window.attnscope.app.model.num_attention_heads }, step: 'kv_cache' }));
  await settled(page);
  assert.equal(await page.locator('.rail-step[data-step="repeat_kv"]').count(), 0);
  await page.evaluate(() => window.attnscope.setState({ config: { num_key_value_heads: 2 } }));
  await settled(page);
});

test('each step kind, in English and 简体中文', async () => {
  const kinds = [['embed', 0], ['qkv', 1], ['probs', 1], ['layer_out', 0], ['final_norm', 1], ['logits', 1], ['prediction', 1]];
  for (const lang of ['en', 'zh']) {
    for (const [step, layer] of kinds) {
      await page.evaluate((hash) => { location.hash = hash; }, `view=stepper&step=${step}&layer=${layer}&lang=${lang}`);
      await page.waitForFunction(([s, l]) => window.attnscope.app.state.step === s && window.attnscope.app.state.lang === l, [step, lang]);
      await settled(page);
      const text = await page.locator('.view-stepper').innerText();
      if (lang === 'zh') {
        assert.match(text, /[\u4e00-\u9fff]/);
        assert.doesNotMatch(await kicker(), /layer|step/i, 'the kicker is Chinese');
      }
      await shot(`pipeline-${lang}-${step}`);
    }
    if (lang === 'zh') assert.match(await page.locator('.prediction-sentence').innerText(), /^在“.+”之后，模型预测下一个 token 是“.+”（概率 \d+\.\d+%）。$/);
  }
  await page.evaluate(() => { location.hash = 'view=stepper&lang=en'; });
  await page.waitForFunction(() => window.attnscope.app.state.lang === 'en');
  await settled(page);
});

test('Output: no stray "false" at the last position, and bars on an absolute 0–1 scale', async () => {
  await go(page, 'output');
  const T = (await state()).tokens.ids.length;
  await page.selectOption('.view-output select[name="query"]', String(T - 1));
  await settled(page);
  const text = await page.locator('.view-output').innerText();
  assert.doesNotMatch(text, /\bfalse\b|\bnull\b|\bundefined\b/);
  const rows = await page.locator('.view-output .prediction .bar-row').evaluateAll((list) =>
    list.map((r) => ({ p: Number(r.dataset.value), fill: r.querySelector('.bar-fill').getBoundingClientRect().width, track: r.querySelector('.bar-track').getBoundingClientRect().width })),
  );
  assert.equal(rows.length, 10);
  for (const { p, fill, track } of rows) close(fill / track, p, 0.01, `bar of p = ${p}`);
  assert.ok(rows[0].fill < rows[0].track - 1 || rows[0].p > 0.99, 'the top candidate does not fill its bar unless p ≈ 1');
  const p = await softmaxRow(T - 1);
  close(rows[0].p, Math.max(...p), 1e-6, 'Output’s top probability');
  await shot('pipeline-en-output');
});

test('KV cache: the candidates’ probabilities are the softmax over the whole vocabulary', async () => {
  await go(page, 'output');
  const T = (await state()).tokens.ids.length;
  const p = await softmaxRow(T - 1); // the full forward pass's last row: what the prefill predicts
  const order = [...p.keys()].sort((a, b) => p[b] - p[a]);
  await go(page, 'decode');
  const bars = page.locator('.view-decode .bars .bar-row');
  assert.equal(await bars.count(), 10);
  const shown = await bars.evaluateAll((rows) => rows.map((r) => ({ p: Number(r.dataset.value), label: r.querySelector('.bar-label').textContent })));
  shown.forEach((c, n) => {
    assert.match(c.label, new RegExp(`· id ${order[n]}$`), `candidate ${n} is id ${order[n]}`);
    close(c.p, p[order[n]], 1e-5, `candidate ${n}`);
  });
  const sum = shown.reduce((s, c) => s + c.p, 0);
  close(sum, order.slice(0, 10).reduce((s, id) => s + p[id], 0), 1e-5, 'the ten together');
  assert.ok(sum < 0.999, `not rescaled to sum to 1 (they sum to ${sum})`);
  await shot('pipeline-en-decode');
});

test('the GPU check note is short and keeps the top bar one line', async () => {
  await go(page, 'stepper');
  const header = () => page.locator('header.topbar').evaluate((h) => h.getBoundingClientRect().height);
  const before = await header();
  await page.locator('#gpu-check').click();
  await page.waitForFunction(() => ['check', 'fallback'].includes(document.getElementById('gpu-note').dataset.kind), null, { timeout: 120_000 });
  const note = page.locator('#gpu-note');
  const text = await note.innerText();
  assert.doesNotMatch(text, /\( \(|BrowserWebGpu/, `a readable note: ${text}`);
  assert.equal(await header(), before, 'the header keeps its height');
  const box = await note.boundingBox();
  const line = await note.evaluate((n) => parseFloat(getComputedStyle(n).lineHeight) || n.getBoundingClientRect().height);
  assert.ok(box.height <= line + 1, `the note is one line (${box.height}px)`);
  assert.ok((await note.getAttribute('title')).length >= text.length, 'the details are in its tooltip');
  await page.locator('header.topbar').screenshot({ path: 'artifacts/screenshots/pipeline-en-gpu-note.png' });
});

test('outside the layers the rail numbers the layer the arrows lead into, whatever layer another view left', async () => {
  const L = await layerCount();
  const railNum = (id) => page.locator(`.rail-step[data-step="${id}"] .rail-num`).innerText();
  await page.evaluate((layer) => window.attnscope.setState({ view: 'stepper', step: 'embed', layer }), L - 1);
  await settled(page);
  // Embedding leads into layer 0: the rail says step 2 is layer 0's input_norm, and → goes there.
  assert.equal(await railNum('input_norm'), String(GLOBAL_BEFORE + 1));
  assert.equal(await page.locator('.toolbar .picker.inactive').isVisible(), false, 'no layer to pick on a step outside the layers');
  await press('ArrowRight');
  assert.deepEqual([(await state()).step, (await state()).layer], ['input_norm', 0]);
  // The final norm comes after the last layer: ← goes back into it, as the rail numbers it.
  await page.evaluate(() => window.attnscope.setState({ step: 'final_norm', layer: 0 }));
  await settled(page);
  assert.equal(await railNum('input_norm'), String(GLOBAL_BEFORE + (L - 1) * PER_LAYER + 1));
  await press('ArrowLeft');
  assert.equal((await state()).layer, L - 1);
  await page.evaluate(() => window.attnscope.setState({ step: 'embed', layer: 0 }));
  await settled(page);
});

test('→ steps at once after the Pipeline tab is clicked, its focus still on the tab', async () => {
  await page.evaluate(() => window.attnscope.setState({ view: 'overview' }));
  await settled(page);
  await page.locator('nav a.tab[data-view="stepper"]').click();
  await page.waitForSelector('.view-stepper');
  await settled(page);
  const first = (await state()).step;
  await page.keyboard.press('ArrowRight');
  await settled(page);
  assert.notEqual((await state()).step, first, 'the arrow key stepped');
  await page.evaluate(() => window.attnscope.setState({ step: 'embed', layer: 0 }));
  await settled(page);
});

test('at a layer’s last step the loop says where → goes next: the next layer’s first step, not the output', async () => {
  const L = await layerCount();
  assert.ok(L >= 2);
  await page.evaluate(() => window.attnscope.setState({ view: 'stepper', step: 'layer_out', layer: 0 }));
  await settled(page);
  const loop = page.locator('.rail-repeat');
  assert.equal(await loop.innerText(), `↻ next: layer 1, step ${GLOBAL_BEFORE + PER_LAYER + 1} (the same steps in all ${L} layers: ${GLOBAL_BEFORE + 1}–${GLOBAL_BEFORE + L * PER_LAYER})`);
  await press('ArrowRight');
  assert.deepEqual([(await state()).step, (await state()).layer], ['input_norm', 1]);
  // In the last layer the loop only says that the layers repeat: → goes on to the output.
  await page.evaluate((layer) => window.attnscope.setState({ step: 'layer_out', layer }), L - 1);
  await settled(page);
  assert.match(await loop.innerText(), /^↻ the same in all \d+ layers/);
  await page.evaluate(() => window.attnscope.setState({ step: 'embed', layer: 0 }));
  await settled(page);
});

test('with 8 layers the rail keeps one row of 21 steps, and links and arrows reach the last layer', async () => {
  await page.evaluate(() => window.attnscope.setState({ view: 'stepper', config: { num_hidden_layers: 8 }, step: 'probs', layer: 7 }));
  await settled(page);
  assert.equal(await layerCount(), 8);
  const total = GLOBAL_BEFORE + 8 * PER_LAYER + GLOBAL_AFTER;
  assert.equal(await page.locator('.rail-step').count(), GLOBAL_BEFORE + PER_LAYER + GLOBAL_AFTER);
  const rail = await page.locator('.rail').boundingBox();
  const step = await page.locator('.rail-step').first().boundingBox();
  assert.ok(rail.height < 2 * step.height, `the rail is one row (${rail.height}px)`);
  assert.match(await kicker(), new RegExp(`layer 7 of 8 .* ${GLOBAL_BEFORE + 7 * PER_LAYER + 9} / ${total}`, 'i'));
  assert.equal(await page.locator('.tensor-name').first().innerText(), 'layers.7.attn.probs');
  await page.evaluate(() => { location.hash = 'view=stepper&step=input_norm&layer=7'; });
  await page.waitForFunction(() => window.attnscope.app.state.step === 'input_norm');
  await settled(page);
  await press('ArrowLeft');
  assert.deepEqual([(await state()).step, (await state()).layer], ['layer_out', 6]);
  assert.match(await page.locator('.rail-step.active .rail-num').innerText(), new RegExp(`^${GLOBAL_BEFORE + 7 * PER_LAYER}$`));
  await shot('pipeline-en-8-layers');
  await page.evaluate(() => window.attnscope.setState({ config: { num_hidden_layers: 2 }, step: 'embed', layer: 0 }));
  await settled(page);
});

test('the walk ends with where to go next, not a dead end', async () => {
  await page.evaluate(() => window.attnscope.setState({ view: 'stepper', step: 'prediction' }));
  await settled(page);
  assert.equal(await page.locator('#view .nav-button').last().isDisabled(), true, 'the last step');
  assert.deepEqual(await page.locator('.where-next a').evaluateAll((n) => n.map((a) => a.dataset.view)), ['lens', 'attribution', 'decode']);
  await page.locator('.where-next a[data-view="lens"]').click();
  await page.waitForFunction(() => window.attnscope.app.state.view === 'lens');
  await settled(page);
  await page.evaluate(() => window.attnscope.setState({ view: 'stepper', step: 'embed' }));
  await settled(page);
  assert.equal(await page.locator('.where-next').count(), 0, 'only at the end');
});

test('on a phone the prediction step fits the screen', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.evaluate(() => { location.hash = 'view=stepper&step=prediction'; });
  await page.waitForSelector('.prediction-sentence');
  await settled(page);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390 + 1, `no sideways scrolling of the page, scrollWidth ${width}`);
  await shot('pipeline-phone-prediction');
  await page.setViewportSize({ width: 1400, height: 1000 });
});

test('on the built-in model the walk ends on a trained prediction, in English and 简体中文', async (t) => {
  if (!existsSync(new URL('../../www/models/builtin/config.json', import.meta.url))) return t.skip('www/models/builtin is not there yet');
  const own = await openPage(browser, server.url); // a link that names no model opens the built-in one
  await own.setViewportSize({ width: 1400, height: 1000 });
  await own.waitForFunction(() => window.attnscope?.app?.source?.kind === 'builtin', null, { timeout: 60_000 });
  await settled(own);
  for (const lang of ['en', 'zh']) {
    await own.evaluate((l) => window.attnscope.setState({ view: 'stepper', step: 'prediction', lang: l }), lang);
    await settled(own);
    const L = await own.evaluate(() => window.attnscope.app.model.num_hidden_layers);
    assert.match(await own.locator('.step-kicker').innerText(), new RegExp(`${GLOBAL_BEFORE + L * PER_LAYER + GLOBAL_AFTER} / ${GLOBAL_BEFORE + L * PER_LAYER + GLOBAL_AFTER}`));
    const p = await own.evaluate(async () => {
      const logits = await window.attnscope.tensor('logits');
      const T = window.attnscope.app.state.tokens.ids.length;
      const V = logits.length / T;
      const row = Array.from(logits.slice((T - 1) * V));
      const m = Math.max(...row);
      return Math.exp(0) / row.reduce((s, x) => s + Math.exp(x - m), 0);
    });
    close(Number(await own.locator('.prediction-sentence output').getAttribute('data-value')), p, 1e-6, `${lang}: the top probability`);
    await cleanScreenshot(own, `pipeline-${lang}-builtin-prediction`);
    await own.evaluate(() => window.attnscope.setState({ step: 'probs', layer: 3 }));
    await settled(own);
    await cleanScreenshot(own, `pipeline-${lang}-builtin-probs`);
  }
  assert.deepEqual(own.consoleErrors, []);
  await own.close();
});

test('no console errors', () => {
  assert.deepEqual(page.consoleErrors, []);
});

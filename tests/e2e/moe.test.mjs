// MiniMind's mixture of experts in the page, in real Chromium: a random MoE model (use_moe) from a
// link and from the config panel's tick; the FFN view's token → expert routing against the core's
// tensors, each checked here independently (softmax of the router scores, the top k, the weights
// renormalised or not, ffn.out as the weighted sum of ffn.expert_out); the overview's MoE card with
// the trace's shapes; the pipeline's MoE steps; the CPU fallback under WebGPU; a link round trip.
// Screenshots: artifacts/screenshots/moe-*.png, en and zh.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanScreenshot, openPage, readCell, serverAndBrowser, settled, softmax } from './helpers.mjs';
import { DEFAULTS, FORMAT1_DEFAULTS, fragment } from '../../www/state.js';

const env = serverAndBrowser();

const MOE = { use_moe: true, num_experts: 4, num_experts_per_tok: 2 };
const link = (fields = {}) => fragment({ ...DEFAULTS, model: { kind: 'random' }, config: { ...FORMAT1_DEFAULTS.config, ...MOE }, text: FORMAT1_DEFAULTS.text, view: 'ffn', ...fields });

async function open(hash) {
  const page = await openPage(env.browser, `${env.server.url}#${hash}`);
  await settled(page);
  return page;
}

async function tensor(page, name) {
  return page.evaluate(async (n) => Array.from(await window.attnscope.tensor(n)), name);
}

// The routing the page shows (data-value holds the shortest text of each f32): per token row, each expert cell's probability and whether it is
// outlined as chosen, and the picks on the right (expert, exact weight) in order.
function shown(page) {
  return page.$$eval('.moe-routing tbody tr', (rows) =>
    rows.map((row) => ({
      probs: [...row.querySelectorAll('.moe-cell')].map((c) => Math.fround(Number(c.querySelector('output').dataset.value))),
      outlined: [...row.querySelectorAll('.moe-cell')].filter((c) => c.classList.contains('chosen')).map((c) => Number(c.dataset.expert)),
      picks: [...row.querySelectorAll('.moe-pick')].map((p) => [Number(p.dataset.expert), Math.fround(Number(p.querySelector('output').dataset.value))]),
    })),
  );
}

// The routing computed here from the router's scores alone: softmax, the k largest (ties to the lower
// index), their probabilities renormalised when `normed`.
function routing(logits, E, k, normed) {
  const rows = [];
  for (let i = 0; i < logits.length / E; i++) {
    const p = softmax(logits.slice(i * E, (i + 1) * E));
    const top = [...p.keys()].sort((a, b) => p[b] - p[a] || a - b).slice(0, k);
    const sum = top.reduce((s, e) => s + p[e], 0);
    rows.push({ p, top, w: top.map((e) => (normed ? p[e] / (sum + 1e-20) : p[e])) });
  }
  return rows;
}

const close = (a, b, what, tol = 1e-5) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

async function checkRouting(page, layer, { E, k, normed }) {
  const logits = await tensor(page, `layers.${layer}.ffn.router_logits`);
  const probs = await tensor(page, `layers.${layer}.ffn.router_probs`);
  const index = await tensor(page, `layers.${layer}.ffn.expert_index`);
  const weight = await tensor(page, `layers.${layer}.ffn.expert_weight`);
  const expected = routing(logits, E, k, normed);
  const rows = await shown(page);
  assert.equal(rows.length, expected.length, 'a row per token');
  rows.forEach((row, i) => {
    expected[i].p.forEach((p, e) => {
      close(probs[i * E + e], p, `router_probs[${i}, ${e}] against softmax(router_logits)`);
      assert.equal(row.probs[e], probs[i * E + e], `cell [${i}, ${e}] shows the core's probability`);
    });
    assert.deepEqual(index.slice(i * k, (i + 1) * k), expected[i].top, `expert_index row ${i}`);
    assert.deepEqual(row.outlined, [...expected[i].top].sort((a, b) => a - b), `outlined experts of row ${i}`);
    assert.deepEqual(row.picks.map(([e]) => e), expected[i].top, `picks of row ${i}`);
    row.picks.forEach(([, w], s) => {
      assert.equal(w, weight[i * k + s], `weight [${i}, ${s}] on screen`);
      close(w, expected[i].w[s], `expert_weight[${i}, ${s}]`);
    });
  });
  return { index, weight };
}

test('a random MoE model from a link: routing on screen is softmax → top-k → weights, and ffn.out is their sum', async () => {
  const page = await open(await link());
  await page.waitForSelector('.moe-routing');
  const model = await page.evaluate(() => window.attnscope.app.model);
  assert.deepEqual([model.use_moe, model.num_experts, model.num_experts_per_tok, model.norm_topk_prob], [true, 4, 2, true]);
  const { index, weight } = await checkRouting(page, 0, { E: 4, k: 2, normed: true });
  for (let i = 0; i < weight.length / 2; i++) close(weight[2 * i] + weight[2 * i + 1], 1, `row ${i}'s weights sum to 1`);

  // ffn.out = Σ weight · expert_out, recomputed here, and the page's own check agrees.
  const [expertOut, out] = [await tensor(page, 'layers.0.ffn.expert_out'), await tensor(page, 'layers.0.ffn.out')];
  const H = model.hidden_size;
  let worst = 0;
  for (let i = 0; i < out.length / H; i++) {
    for (let j = 0; j < H; j++) worst = Math.max(worst, Math.abs(weight[2 * i] * expertOut[(2 * i) * H + j] + weight[2 * i + 1] * expertOut[(2 * i + 1) * H + j] - out[i * H + j]));
  }
  assert.ok(worst < 1e-5, `ffn.out is the weighted sum: ${worst}`);
  assert.ok(Number(await page.locator('.moe-check output').getAttribute('data-value')) < 1e-5);

  // Tokens per expert: the counts of expert_index.
  const counts = await page.$$eval('.view-ffn .bars .bar-row', (rows) => rows.map((r) => Number(r.dataset.value)));
  assert.deepEqual(counts, [0, 1, 2, 3].map((e) => index.filter((x) => x === e).length));

  // Layer 1 too, and a token picked from the table shows its own numbers.
  await page.evaluate(() => window.attnscope.setState({ layer: 1, query: 2 }));
  await settled(page);
  await checkRouting(page, 1, { E: 4, k: 2, normed: true });
  const probs = await tensor(page, 'layers.1.ffn.router_probs');
  const detail = await page.$$eval('.moe-detail tbody tr', (rows) => rows.map((r) => Math.fround(Number(r.querySelectorAll('output')[1].dataset.value))));
  assert.deepEqual(detail, probs.slice(2 * 4, 3 * 4));
  assert.deepEqual(page.consoleErrors, []);
  await cleanScreenshot(page, 'moe-routing-en');
  await page.close();
});

test('on a phone, in Chinese: the router’s formulas keep their four lines and the token column keeps each token on one line', async () => {
  const page = await openPage(env.browser, `${env.server.url}#${await link({ lang: 'zh', text: '小明把苹果给了小红，她很开心' })}`);
  await page.setViewportSize({ width: 390, height: 900 });
  await settled(page);
  await page.waitForSelector('.moe-routing');
  await settled(page);
  // The lines a node's text is laid out on: the distinct tops of its text's boxes.
  const lines = (selector) =>
    page.$$eval(selector, (nodes) =>
      nodes.map((n) => {
        const range = document.createRange();
        range.selectNodeContents(n);
        return { text: n.textContent, lines: new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size };
      }),
    );
  const [formula] = await lines('.view-ffn .formula-aligned');
  assert.equal(formula.lines, formula.text.split('\n').length, 'one screen line per formula line (they wrapped at 390 px)');
  assert.ok(await page.$eval('.view-ffn .formula-aligned', (n) => n.scrollWidth > n.clientWidth), 'the formulas scroll in their box instead');
  const tokens = await lines('.moe-routing tbody th .link');
  assert.equal(tokens.length, await page.evaluate(() => window.attnscope.app.state.tokens.ids.length));
  assert.ok(tokens.every((x) => x.lines === 1), JSON.stringify(tokens.filter((x) => x.lines !== 1)));
  await cleanScreenshot(page, 'moe-routing-zh-phone');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('top-1 without renormalisation: the weight is the router probability itself', async () => {
  const page = await open(await link({ config: { ...FORMAT1_DEFAULTS.config, use_moe: true, num_experts: 3, num_experts_per_tok: 1, norm_topk_prob: false } }));
  await page.waitForSelector('.moe-routing');
  await checkRouting(page, 0, { E: 3, k: 1, normed: false });
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('the link round trip keeps the MoE model, and the overview draws its router, top-k and experts', async () => {
  const page = await open(await link({ view: 'overview' }));
  await page.waitForSelector('.ov-moe');
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  const shapes = await page.$$eval('.ov-moe .ov-step', (steps) => Object.fromEntries(steps.map((s) => [s.dataset.block, s.querySelector('.shape')?.dataset.shape])));
  const probs = await tensor(page, 'layers.0.ffn.router_probs');
  assert.equal(probs.length, T * 4);
  // As MiniMind prints them, batch first; the trace's own shapes without it.
  assert.deepEqual(shapes, { router: `[1, ${T}, 4]`, router_softmax: `[1, ${T}, 4]`, top_k: `[1, ${T}, 2]`, experts: `[1, ${T}, 2, 64]`, weighted_sum: `[1, ${T}, 64]` });
  assert.equal((await tensor(page, 'layers.0.ffn.expert_out')).length, T * 2 * 64);
  assert.match(await page.locator('.ov-fact[data-fact="experts"] dd').innerText(), /^2 of 4/);
  const hrefs = await page.$$eval('.ov-moe a', (list) => Object.fromEntries(list.map((a) => [a.dataset.block, new URLSearchParams(a.getAttribute('href').slice(1)).get('step') ?? new URLSearchParams(a.getAttribute('href').slice(1)).get('view')])));
  assert.deepEqual(hrefs, { ffn: 'ffn', router: 'ffn_router', router_softmax: 'ffn_router', top_k: 'ffn_experts', experts: 'ffn_experts', weighted_sum: 'ffn_moe_out' });
  await cleanScreenshot(page, 'moe-overview-en');

  const again = await open(new URL(await page.evaluate(() => window.attnscope.link())).hash.slice(1));
  assert.deepEqual(await again.evaluate(() => window.attnscope.getState().config), { ...FORMAT1_DEFAULTS.config, ...MOE });
  assert.deepEqual(await tensor(again, 'layers.0.ffn.router_probs'), probs, 'the same routing after the round trip');
  await again.evaluate(() => window.attnscope.setState({ lang: 'zh' }));
  await settled(again);
  await cleanScreenshot(again, 'moe-overview-zh');
  await again.evaluate(() => window.attnscope.setState({ view: 'ffn' }));
  await again.waitForSelector('.moe-routing');
  await settled(again);
  assert.match(await again.locator('.view-ffn .explain').first().innerText(), /混合专家/);
  await cleanScreenshot(again, 'moe-routing-zh');
  assert.deepEqual([...page.consoleErrors, ...again.consoleErrors], []);
  await page.close();
  await again.close();
});

test('ticking use_moe in the config panel turns the dense FFN view into the routing, and back', async () => {
  const page = await open(await link({ config: FORMAT1_DEFAULTS.config }));
  await page.waitForSelector('.neuron-table');
  await page.locator('#cfg-use_moe').check();
  await page.waitForSelector('.moe-routing');
  await settled(page);
  const model = await page.evaluate(() => window.attnscope.app.model);
  assert.deepEqual([model.num_experts, model.num_experts_per_tok], [4, 1], 'MiniMind’s defaults');
  await checkRouting(page, 0, { E: 4, k: 1, normed: true });
  await page.locator('#cfg-num_experts_per_tok').fill('5');
  await page.locator('#cfg-num_experts_per_tok').dispatchEvent('change');
  await page.waitForSelector('#cfg-num_experts_per_tok-error:not([hidden])');
  assert.match(await page.locator('#cfg-num_experts_per_tok-error').innerText(), /num_experts_per_tok must be between 1 and num_experts \(4\), not 5\./);
  await page.locator('#cfg-use_moe').uncheck();
  await page.waitForSelector('.neuron-table');
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.app.model.use_moe), false);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('a trained model offers no MoE switch (it would swap the model for random weights): the panel says where MoE is', async () => {
  const page = await open(await link({ model: { kind: 'builtin' }, config: FORMAT1_DEFAULTS.config }));
  await settled(page);
  assert.equal(await page.locator('#cfg-use_moe').isVisible(), false);
  assert.match(await page.locator('.config-moe-elsewhere').innerText(), /This model’s FFN is dense\. To see MiniMind’s mixture of experts \(use_moe\), choose Random/);
  await page.locator('.model-sources button', { hasText: 'Random' }).click();
  await settled(page);
  assert.equal(await page.locator('#cfg-use_moe').isVisible(), true);
  assert.equal(await page.locator('.config-moe-elsewhere').isVisible(), false);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('the pipeline of a MoE model walks the router, the chosen experts and their weighted sum', async () => {
  const page = await open(await link({ view: 'stepper', step: 'ffn_router', layer: 1 }));
  await page.waitForSelector('.view-stepper .step-card h2');
  const rail = await page.$$eval('.rail-step', (list) => list.map((b) => b.dataset.step));
  assert.deepEqual(rail.slice(rail.indexOf('post_norm'), rail.indexOf('layer_out') + 1), ['post_norm', 'ffn_router', 'ffn_experts', 'ffn_moe_out', 'layer_out']);
  const drawn = { ffn_router: ['router_logits', 'router_probs'], ffn_experts: ['expert_index', 'expert_weight', 'expert_out'], ffn_moe_out: ['out'] };
  for (const [step, names] of Object.entries(drawn)) {
    await page.evaluate((s) => window.attnscope.setState({ step: s }), step);
    await settled(page);
    const card = await page.locator('.step-card').innerText();
    for (const n of names) assert.ok(card.includes(`layers.1.ffn.${n}`), `${step} draws layers.1.ffn.${n}`);
    assert.ok(!card.includes('so this step is skipped'), `${step}: nothing missing`);
    if (step === 'ffn_experts') {
      // expert_out [T, k, H]: the k chosen experts side by side, named as choices, not heads.
      const canvas = page.locator('[data-tensor="layers.1.ffn.expert_out"] canvas').first();
      const { value, text } = await readCell(page, canvas, 2, 64 + 5);
      assert.equal(Math.fround(Number(value)), (await tensor(page, 'layers.1.ffn.expert_out'))[(2 * 2 + 1) * 64 + 5]);
      assert.match(text, /choice\s*1/);
      await cleanScreenshot(page, 'moe-pipeline-en');
    }
  }
  await page.keyboard.press('ArrowRight');
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.getState().step), 'layer_out');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('with WebGPU chosen, a MoE model runs on the CPU and the page says why', async () => {
  const page = await open(await link());
  await page.waitForSelector('.moe-routing');
  const before = await tensor(page, 'layers.0.ffn.router_probs');
  await page.selectOption('#backend', 'gpu');
  await page.waitForFunction(() => document.getElementById('gpu-note').dataset.kind === 'fallback', null, { timeout: 120_000 });
  await settled(page);
  assert.match(await page.locator('#status').innerText(), /^CPU · /);
  assert.match(await page.locator('#gpu-note').innerText(), /mixture of experts \(use_moe\), which the WebGPU path does not run yet; it runs on the CPU/);
  assert.deepEqual(await tensor(page, 'layers.0.ffn.router_probs'), before, 'the same routing, from the CPU');
  assert.ok(await page.locator('.moe-routing').count(), 'the routing still draws');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

// The overview (views/overview.js), the grouped tabs and the loading label, in real Chromium. The
// diagram must show the loaded model's own sizes (the built-in model's config.json, read here from
// disk; random models of other sizes, their FFN size by MiniMind's rule computed here), the shapes
// of the core's own trace, and as its prediction the top-1 of softmax(logits[last]) computed here
// from attnscope.tensor('logits'). Every block opens its view; while the built-in model downloads
// (throttled), the model panel names it with its bytes, the diagram draws from its config, and
// tokenizer.json is requested once. The default page loads without layout shift and its first screen
// holds the path from the tokens to the prediction (1366 × 768 and a 390 × 844 phone); the text the
// overview continues is the core's greedy generation, each token one click from its attention.
// Screenshots: artifacts/screenshots/overview-*.png, both models, en and zh, light and dark, desktop
// and phone.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { cleanScreenshot, go, launch, openPage, settled, startServer } from './helpers.mjs';
import { DEFAULTS, fragment } from '../../www/state.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BUILTIN = join(ROOT, 'www', 'models', 'builtin');
const MINIMIND3 = { hidden_size: 768, num_hidden_layers: 8, num_attention_heads: 8, num_key_value_heads: 4 };

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

// A page in its own context (no service worker: every request is the page's own, and throttling holds).
async function freshPage(hash = '', { viewport = { width: 1400, height: 1000 } } = {}) {
  const context = await browser.newContext({ viewport, serviceWorkers: 'block' });
  const page = await openPage(context, `${server.url}${hash}`);
  await settled(page);
  return page;
}

const builtinLink = async (fields = {}) => `#${await fragment({ ...DEFAULTS, model: { kind: 'builtin' }, view: 'overview', ...fields })}`;

function facts(page) {
  return page.$$eval('.ov-fact', (list) => Object.fromEntries(list.map((f) => [f.dataset.fact, Number(f.querySelector('dd').textContent)])));
}

function setState(page, partial) {
  return page.evaluate((p) => window.attnscope.setState(p), partial);
}

// MiniMind's rule for the FFN size when config.json gives none: ceil(hidden · π / 64) · 64.
const ffnSize = (hidden) => Math.ceil((hidden * Math.PI) / 64) * 64;

test('the diagram shows the built-in model’s own sizes, its trace’s shapes and the top-1 of softmax(logits[last])', async (t) => {
  if (!existsSync(join(BUILTIN, 'config.json'))) return t.skip('www/models/builtin is not there yet');
  const config = JSON.parse(readFileSync(join(BUILTIN, 'config.json'), 'utf8'));
  const page = await freshPage(await builtinLink());
  await page.waitForSelector('.view-overview .ov-top');
  assert.deepEqual(await facts(page), {
    layers: config.num_hidden_layers,
    heads: config.num_attention_heads,
    kvHeads: config.num_key_value_heads,
    headDim: config.head_dim,
    hidden: config.hidden_size,
    ffn: config.intermediate_size,
    vocab: config.vocab_size,
  });
  assert.deepEqual([config.num_hidden_layers, config.num_attention_heads, config.num_key_value_heads], [4, 8, 4]);
  // Its heads × head_dim is not its hidden size, as the tutorials' 8 × 96 = 768 is: said, with the projections.
  const qw = config.num_attention_heads * config.head_dim;
  assert.notEqual(qw, config.hidden_size);
  assert.match(await page.locator('.ov-heads-width').innerText(), new RegExp(`Here ${config.num_attention_heads} heads × head_dim ${config.head_dim} = ${qw}, which is not the hidden size ${config.hidden_size} .*q_proj maps each token’s ${config.hidden_size} numbers to ${qw}, and o_proj maps the heads’ ${qw} numbers back to ${config.hidden_size}\\.`));
  assert.equal(await page.locator('.ov-layer-button').count(), 4, 'one button per layer');
  assert.equal(await page.locator('.ov-times').innerText(), '(one of 4: layers 0 to 3)', 'one of n layers, not a multiplication "Layer 2 × 4"');
  assert.equal(await page.locator('[data-block="qk_norm"]').count(), 1, 'the built-in model has Q/K norm');
  assert.match(await page.locator('.ov-attn .ov-card-head').innerText(), /8 query heads share 4 KV heads, 2 to each \(GQA\); head_dim 32/);

  // Every shape the trace gives for these tensors is on an arrow or a step, as MiniMind prints it.
  const shown = new Set(await page.$$eval('.view-overview .shape', (list) => list.map((s) => s.dataset.shape)));
  const entries = await page.evaluate(() => Object.fromEntries(window.attnscope.app.run.entries.map((e) => [e.name, Array.from(e.shape)])));
  for (const name of ['embed', 'layers.0.attn.q', 'layers.0.attn.k', 'layers.0.attn.probs', 'layers.0.attn.context', 'layers.0.attn.out', 'layers.0.ffn.act', 'logits']) {
    const label = `[1, ${entries[name].join(', ')}]`;
    assert.ok(shown.has(label), `${name} ${label} is shown (shown: ${[...shown].join(' ')})`);
  }
  const T = entries.embed[0];
  assert.ok(shown.has(`[1, ${T}]`), 'the token ids');
  // Every token, unless eliding would hide 8 or more: then the first and last 8 (overview.js).
  assert.equal(await page.locator('.ov-token').count(), T >= 24 ? 16 : T);

  // The prediction: softmax over the last row of the logits, computed here in f64.
  const { logits, V, pieces } = await page.evaluate(async () => ({
    logits: Array.from(await window.attnscope.tensor('logits')),
    V: window.attnscope.app.model.vocab_size,
    pieces: window.attnscope.app.state.tokens.pieces,
  }));
  const row = logits.slice((T - 1) * V, T * V);
  const max = Math.max(...row);
  const z = row.reduce((sum, v) => sum + Math.exp(v - max), 0);
  const best = row.indexOf(max);
  const top = page.locator('.ov-top');
  assert.equal(Number(await top.getAttribute('data-id')), best, 'the top-1 token');
  const p = Number(await top.getAttribute('data-p'));
  assert.ok(Math.abs(p - 1 / z) < 1e-5, `its probability: shown ${p}, softmax ${1 / z}`);
  assert.equal(await page.locator('.ov-top-p').innerText(), `${(100 / z).toFixed(1 / z >= 0.1 ? 1 : 2)}%`);
  assert.ok((await page.locator('.ov-predict .ov-sub').innerText()).includes(`“${pieces[T - 1].replace(/^[ Ġ]/, '␣')}”`), 'after the last token');
  // A space or a line break among the candidates shown is named there, not left for the reader to guess.
  const candidates = await page.evaluate(async ({ T, V }) => {
    const logits = await window.attnscope.tensor('logits');
    return (await window.attnscope.call('top', { logits: logits.slice((T - 1) * V, T * V), k: 3 })).map((c) => c.piece);
  }, { T, V });
  const whitespace = candidates.some((piece) => /^\s+$/.test(piece.replace(/^Ġ/, ' ')));
  assert.equal(await page.locator('.ov-after [data-note="whitespace"]').count(), whitespace ? 1 : 0, `candidates ${JSON.stringify(candidates)}`);
  if (whitespace) assert.match(await page.locator('.ov-after [data-note="whitespace"]').innerText(), /a line break|a space/);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('the prediction goes on: after a finished sentence, unfinished ones to try; its top token added to the text; sampling one click away', async () => {
  const page = await freshPage('#view=overview&lang=en');
  // The sample sentence is finished: its top guess is a line break, and the page says why and offers more.
  assert.match(await page.locator('.ov-finished').innerText(), /expects the sentence to end here/);
  // The sentences to try read as a list in a sentence, each in quotes: try “A…” or “B…”.
  assert.match(await page.locator('.ov-finished').innerText(), /; try “[^”]+…” or “[^”]+…”\.$/);
  // Each opening quote on the line of its words, at any width.
  for (const quoted of await page.locator('.ov-try-quoted').all()) {
    const [open, word] = await quoted.evaluate((q) => {
      const range = document.createRange();
      range.setStart(q.firstChild, 0);
      range.setEnd(q.firstChild, 1);
      return [range.getBoundingClientRect().top, q.querySelector('.ov-try').getBoundingClientRect().top];
    });
    assert.ok(Math.abs(open - word) < 12, `“ beside its words: ${open} vs ${word}`);
  }
  assert.equal(await page.locator('#ov-append').count(), 0, 'a line break is no word to add');
  await page.locator('.ov-finished .ov-try', { hasText: 'To be or not to' }).click();
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.app.state.text), 'To be or not to');
  assert.equal(await page.locator('.ov-finished').count(), 0);
  // Its top token, written into the text: the page runs one token more and predicts after it.
  const { best, T } = await page.evaluate(() => ({ best: Number(document.querySelector('.ov-top').dataset.id), T: window.attnscope.app.state.tokens.ids.length }));
  const piece = await page.evaluate((id) => window.attnscope.call('decode', { ids: [id] }), best);
  assert.match(await page.locator('#ov-append').innerText(), new RegExp(`^Add “${piece.replace(' ', '␣')}” and predict again$`));
  await page.locator('#ov-append').click();
  await settled(page);
  const after = await page.evaluate(() => ({ text: window.attnscope.app.state.text, ids: window.attnscope.app.state.tokens.ids }));
  assert.equal(after.text, `To be or not to${piece}`);
  assert.equal(after.ids.length, T + 1);
  assert.equal(after.ids[T], best, 'the token predicted is the one now run');

  // Continue the text, greedy (the Output view's temperature 0): 10 tokens, written as text, are the
  // core's own greedy generation from the same ids (its generateStart/Step, as the KV cache view runs it).
  await page.evaluate(() => window.attnscope.app.set({ temperature: 0 }));
  await settled(page);
  assert.match(await page.locator('.ov-write-mode').innerText(), /^Greedy/);
  const written = () => page.waitForFunction(() => ['done', 'ended', 'stopped', 'error'].includes(document.querySelector('.ov-write-status')?.dataset.state));
  await page.locator('.ov-write-n[data-n="10"]').click();
  await written();
  const greedy = await page.evaluate(async (n) => {
    const prompt = window.attnscope.app.state.tokens.ids;
    await window.attnscope.call('decodeStart', { ids: prompt, sampling: { temperature: 0 } });
    const ids = [];
    for (let i = 0; i < n; i++) {
      const step = await window.attnscope.call('decodeStep', { request: {}, names: [] });
      if (step.piece === '<|im_end|>') break;
      ids.push(step.token);
    }
    return { prompt, ids, text: (await window.attnscope.call('decode', { ids })).replace(/\uFFFD+$/, '') };
  }, 10);
  assert.equal(greedy.ids.length, 10, 'the built-in model goes on for 10 tokens here');
  assert.equal(await page.locator('.ov-write-status').getAttribute('data-state'), 'done', await page.locator('.ov-write-status').innerText());
  assert.deepEqual((await page.locator('.ov-written').getAttribute('data-ids')).split(' ').map(Number), greedy.ids);
  assert.equal(await page.locator('.ov-gen').count(), 10);
  const text = await page.evaluate(() => window.attnscope.app.state.text);
  const shown = await page.locator('.ov-written').evaluate((p) => ({ prompt: p.querySelector('.ov-written-prompt').textContent, tokens: [...p.querySelectorAll('.ov-gen')].map((b) => [b.dataset.text, b.textContent]) }));
  assert.equal(shown.prompt + shown.tokens.map(([part]) => part).join(''), `${text}${greedy.text}`, 'the reader’s text, then the model’s');
  for (const [part, drawn] of shown.tokens) assert.equal(drawn, part.replace(/\n/g, '↵'), 'each token as text, a line break as ↵');
  // Stop ends the writing at the step under way: asked at once, no token is written.
  await page.evaluate(() => {
    document.querySelector('.ov-write-n[data-n="30"]').click();
    document.querySelector('.ov-write-stop').click();
  });
  await written();
  assert.equal(await page.locator('.ov-write-status').getAttribute('data-state'), 'stopped');
  assert.equal(await page.locator('.ov-write-status').innerText(), 'Stopped after 0 of 30 tokens. Click a token to open the attention map following it.');
  // A written token opens the attention map on the text written so far, following that token.
  await page.locator('.ov-write-n[data-n="10"]').click();
  await written();
  await page.locator('.ov-gen[data-index="2"]').click();
  await page.waitForSelector('.view-attention');
  await settled(page);
  const opened = await page.evaluate(() => ({ text: window.attnscope.app.state.text, query: window.attnscope.getState().query, ids: window.attnscope.app.state.tokens.ids }));
  assert.equal(opened.text, `${text}${greedy.text}`);
  assert.deepEqual(opened.ids.slice(0, greedy.prompt.length + 3), [...greedy.prompt, ...greedy.ids.slice(0, 3)]);
  assert.equal(opened.query, greedy.prompt.length + 2, 'the third token written is the query followed');
  assert.equal(await page.locator('.view-attention .followed-lead').count(), 1);
  await go(page, 'overview');
  await page.locator('.ov-next [data-route="sampling"]').click();
  await page.waitForSelector('.view-output .sampling');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a trained model’s few huge activations do not wash out the pipeline’s heatmaps: the scale ends at the 99th percentile and says so', async () => {
  const page = await freshPage('#view=stepper&step=attn_residual&layer=2&lang=en');
  const { limit, maxAbs, beyond } = await page.evaluate(async () => {
    const data = Array.from(await window.attnscope.tensor('layers.2.attn.residual'));
    const abs = data.map(Math.abs).sort((a, b) => a - b);
    const limit = abs[Math.floor(0.99 * abs.length)];
    return { limit, maxAbs: abs[abs.length - 1], beyond: abs.filter((v) => v > limit).length };
  });
  assert.ok(maxAbs > 3 * limit, `the built-in model has outliers here: ${maxAbs} against ${limit}`);
  const short = (v) => String(+v.toPrecision(3));
  const legend = page.locator('.view-stepper .legend');
  assert.deepEqual(await legend.locator('.legend-ticks span').allInnerTexts(), [`≤ −${short(limit)}`, '0', `≥ ${short(limit)}`]);
  assert.equal(await legend.locator('.legend-clipped').innerText(), `The colours span 99 % of the cells; the ${beyond} most extreme (beyond ±${short(limit)}, up to ±${short(maxAbs)}) take the end colours, so the rest stay readable. Hover or tap a cell for its value.`);
  // A tensor without such outliers keeps its full range.
  await page.evaluate(() => window.attnscope.app.navigate({ step: 'probs' }));
  await page.waitForSelector('.view-stepper figure[data-tensor="layers.2.attn.probs"]');
  await settled(page);
  assert.equal(await page.locator('.view-stepper .legend-clipped').count(), 0);
  await page.context().close();
});

test('a view opened from the overview starts at its top, not at the overview’s scroll', async () => {
  const page = await freshPage('#view=overview&lang=en');
  await page.evaluate(() => scrollTo(0, document.documentElement.scrollHeight));
  assert.ok((await page.evaluate(() => scrollY)) > 300, 'the prediction is far down the page');
  await page.locator('.ov-predict').click();
  await page.waitForSelector('.view-output');
  await settled(page);
  const { viewTop, bar } = await page.evaluate(() => ({ viewTop: document.querySelector('#view').getBoundingClientRect().top, bar: document.querySelector('.topbar').offsetHeight }));
  assert.ok(viewTop >= bar - 1 && viewTop < bar + 200, `the output view's top is in sight below the top bar: ${viewTop} (bar ${bar})`);
  await page.context().close();
});

test('with no head in its link, the page opens the built-in model on the clearest head the route names, not layer 0, head 0', async () => {
  // The core's roles of the opening sentence: the clearest head (previous, current, fixed token,
  // strongest first), as parts/head_roles.js ranks them.
  const clearest = (page) =>
    page.evaluate(async () => {
      const layers = await window.attnscope.call('headRoles', { args: window.attnscope.app.args() });
      const clear = new Set(['previous', 'current', 'fixed', 'induction', 'duplicate']);
      const all = layers.flatMap(({ layer, heads }) => heads.filter((h) => clear.has(h.role)).map((h) => ({ layer, head: h.head, score: h.score })));
      return all.sort((a, b) => b.score - a.score)[0];
    });
  for (const hash of ['', '#view=attention&lang=en']) {
    const page = await freshPage(hash);
    const best = await clearest(page);
    const state = await page.evaluate(() => window.attnscope.getState());
    assert.deepEqual([state.layer, state.head], [best.layer, best.head], `${hash || 'no link'}: the clearest head`);
    assert.notDeepEqual([state.layer, state.head], [0, 0], 'the trained model’s layer 0, head 0 rests on the first token');
    if (hash === '') assert.match(await page.locator('.ov-route-head').innerText(), new RegExp(`layer ${best.layer}, head ${best.head}`));
    // The tutorials' example is offered in one small line under the map, not as a banner over it.
    if (hash !== '') {
      const [offer, map] = await Promise.all(['.view-attention .qk-tutorial-pair', '.view-attention .heatmap'].map((sel) => page.locator(sel).boundingBox()));
      assert.ok(offer.y >= map.y + map.height, `the offer (${offer.y}) is under the map (${map.y + map.height})`);
      assert.ok(offer.height < 40 && offer.height * offer.width < (map.height * map.width) / 10, `a small line: ${offer.width} × ${offer.height}`);
    }
    await page.context().close();
  }
  // A link that names a layer or a head opens it as written, and so does a choice made on the page.
  const page = await freshPage('#view=attention&layer=0&lang=en');
  assert.deepEqual(await page.evaluate(() => [window.attnscope.getState().layer, window.attnscope.getState().head]), [0, 0]);
  await page.context().close();
});

test('every block opens the step or view that explains it, in the layer drawn', async () => {
  const page = await freshPage('#view=overview');
  await page.locator('.ov-layer-button[data-layer="1"]').click();
  await page.waitForSelector('.ov-layer[data-layer="1"]');
  await settled(page);
  assert.equal(await page.locator('.ov-layer-button[data-layer="1"]').getAttribute('aria-pressed'), 'true');
  const opens = {
    embed: { view: 'stepper', step: 'embed' },
    input_norm: { view: 'stepper', step: 'input_norm', layer: 1 },
    attention: { view: 'attention', layer: 1 },
    qkv: { view: 'stepper', step: 'qkv', layer: 1 },
    qk_norm: { view: 'stepper', step: 'qk_norm', layer: 1 },
    rope: { view: 'rope', layer: 1 },
    kv_cache: { view: 'decode' },
    scores: { view: 'qk', layer: 1 },
    scale: { view: 'scale' },
    masks: { view: 'masks', layer: 1 },
    softmax: { view: 'attention', stage: 'probs', layer: 1 },
    context: { view: 'stepper', step: 'context', layer: 1 },
    o_proj: { view: 'stepper', step: 'attn_out', layer: 1 },
    grid: { view: 'grid' },
    gqa: { view: 'gqa' },
    lines: { view: 'lines' },
    flash: { view: 'flash' },
    attn_residual: { view: 'stepper', step: 'attn_residual', layer: 1 },
    post_norm: { view: 'stepper', step: 'post_norm', layer: 1 },
    ffn: { view: 'ffn', layer: 1 },
    gate_up: { view: 'stepper', step: 'ffn_gate_up', layer: 1 },
    act: { view: 'stepper', step: 'ffn_act', layer: 1 },
    down: { view: 'stepper', step: 'ffn_out', layer: 1 },
    layer_out: { view: 'stepper', step: 'layer_out', layer: 1 },
    final_norm: { view: 'stepper', step: 'final_norm' },
    logits: { view: 'stepper', step: 'logits' },
    prediction: { view: 'output' },
  };
  for (const [block, expected] of Object.entries(opens)) {
    await page.locator(`.view-overview [data-block="${block}"]`).click();
    await page.waitForSelector(`.view-${expected.view}`);
    await settled(page);
    const state = await page.evaluate(() => window.attnscope.getState());
    for (const [key, value] of Object.entries(expected)) assert.equal(state[key], value, `${block} → ${key}`);
    await go(page, 'overview');
  }
  // The route under the diagram, and the tokens box, which hands the reader the sentence to edit.
  for (const view of ['lessons', 'stepper', 'attention', 'grid']) {
    // The attention map opens on the clearest head of this run (the core's roles), as the route says.
    const best = view === 'attention' ? await page.evaluate(async () => {
      const roles = await window.attnscope.call('headRoles', { args: window.attnscope.app.args() });
      const clear = new Set(['previous', 'current', 'fixed', 'induction', 'duplicate']);
      return roles.flatMap(({ layer, heads }) => heads.filter((h) => clear.has(h.role)).map((h) => ({ layer, head: h.head, score: h.score }))).sort((a, b) => b.score - a.score)[0];
    }) : null;
    if (view === 'attention') assert.ok(best, 'the built-in model has a clear head on its sample sentence');
    if (best) assert.match(await page.locator('.ov-route a[data-route="attention"]').innerText(), new RegExp(`It opens on layer ${best.layer}, head ${best.head} \\(counting from 0\\), the head whose pattern is clearest on this sentence: [a-z-]+\\. On average each token puts ${Math.round(100 * best.score)}% of its attention (on the token just before it|on itself|on the same one token|where this pattern says)\\.`));
    await page.locator(`.ov-route a[data-route="${view}"]`).click();
    await page.waitForSelector(`.view-${view}`);
    await settled(page);
    if (best) {
      const state = await page.evaluate(() => window.attnscope.getState());
      assert.deepEqual([state.layer, state.head], [best.layer, best.head]);
    }
    await go(page, 'overview');
  }
  await page.locator('[data-block="tokens"]').focus();
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'text');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a random model draws its own sizes: MiniMind-3’s (768, 8 layers, 8 heads, 4 KV) and a small MQA one without Q/K norm', async () => {
  const page = await freshPage('#view=overview');
  await setState(page, { model: { kind: 'random' }, config: MINIMIND3 });
  assert.deepEqual(await facts(page), { layers: 8, heads: 8, kvHeads: 4, headDim: 96, hidden: 768, ffn: ffnSize(768), vocab: 6400 });
  assert.equal(await page.locator('.ov-layer-button').count(), 8);
  assert.equal(await page.locator('.ov-heads-width').count(), 0, '8 × 96 = 768: nothing to say');
  assert.equal(await page.locator('.ov-layer').getAttribute('data-stack'), '3', 'three cards drawn behind, however many layers');
  assert.equal(await page.locator('.ov-top').count(), 1, 'a prediction');
  // Random weights learned nothing: the route's head-grid card does not promise learned patterns.
  assert.match(await page.locator('a[data-route="grid"] .ov-route-text').innerText(), /These weights are random, so there are no learned patterns to find/);

  await setState(page, { config: { hidden_size: 48, num_hidden_layers: 3, num_attention_heads: 6, num_key_value_heads: 1, qk_norm: false } });
  assert.deepEqual(await facts(page), { layers: 3, heads: 6, kvHeads: 1, headDim: 8, hidden: 48, ffn: ffnSize(48), vocab: 6400 });
  assert.equal(await page.locator('[data-block="qk_norm"]').count(), 0, 'no Q/K norm box for a model without it');
  assert.match(await page.locator('.ov-attn .ov-card-head').innerText(), /6 query heads share one KV head \(MQA\)/);
  assert.equal(await page.locator('.ov-layer').getAttribute('data-stack'), '2');
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  assert.ok(await page.locator(`.shape[data-shape="[1, 6, ${T}, ${T}]"]`).count() > 0, 'the scores’ shape follows the heads and the tokens');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('switching to Chinese on the way to the overview draws the new sentence’s prediction, not an error about the old one', async () => {
  // The language switch swaps the sample sentence while the overview's prediction is on its way:
  // it read the old sentence's last token from the new, shorter one (“Cannot read properties of undefined”).
  const page = await freshPage('#view=attribution&lang=en');
  await page.evaluate(() => window.attnscope.app.navigate({ view: 'overview', lang: 'zh' }));
  await settled(page);
  assert.equal(await page.locator('.view-error').count(), 0, await page.locator('main').innerText());
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.pieces.length);
  const last = await page.evaluate(() => window.attnscope.app.state.tokens.pieces.at(-1));
  assert.match(await page.locator('.ov-predict .ov-sub').innerText(), new RegExp(last.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  assert.ok(T > 0);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('the tabs come in groups: basics, lessons, then deep dives and experiments behind folds that open on their views', async () => {
  const page = await freshPage('#view=overview');
  const groups = await page.$$eval('#nav .tab-group', (list) => list.map((g) => [g.dataset.group, [...g.querySelectorAll('a.tab')].map((a) => a.dataset.view)]));
  assert.deepEqual(groups, [
    ['basics', ['overview', 'stepper', 'attention', 'grid', 'masks', 'output']],
    ['lessons', ['lessons']],
    ['deep', ['lines', 'qk', 'rope', 'scale', 'gqa', 'decode', 'flash', 'ffn']],
    ['interp', ['compare', 'ablate', 'lens', 'attribution', 'circuit', 'patch']],
  ]);
  const visible = () => page.$$eval('#nav a.tab', (list) => list.filter((a) => a.checkVisibility()).map((a) => a.dataset.view));
  assert.deepEqual(await visible(), ['overview', 'stepper', 'attention', 'grid', 'masks', 'output', 'lessons'], 'a handful of doors');
  assert.equal(await page.locator('.tab.active').getAttribute('data-view'), 'overview');
  for (const a of await page.$$('#nav a.tab')) assert.match(await a.getAttribute('href'), new RegExp(`^#view=${await a.getAttribute('data-view')}$`));

  // The fold opens by keyboard; a deep dive is then one more key away.
  const fold = page.locator('[data-group="deep"] .tab-fold');
  assert.equal(await fold.getAttribute('aria-expanded'), 'false');
  await fold.focus();
  await page.keyboard.press('Enter');
  assert.equal(await fold.getAttribute('aria-expanded'), 'true');
  assert.equal((await visible()).length, 15);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.view-lines');
  await settled(page);

  // On a wide page the group is a menu over the page: it folds once a tab is picked, its button
  // naming the view shown, and the top bar keeps its height whether a menu is open or not.
  assert.equal(await fold.getAttribute('aria-expanded'), 'false');
  assert.match(await fold.innerText(), /Deep dives: Token lines/);
  assert.equal(await fold.evaluate((b) => b.classList.contains('holds-active')), true);
  const bar = () => page.locator('.topbar').evaluate((b) => b.offsetHeight);
  const closed = await bar();
  await fold.click();
  assert.equal(await fold.getAttribute('aria-expanded'), 'true');
  assert.equal(await bar(), closed, 'an open menu adds no row to the top bar');
  const view = await page.locator('#view').boundingBox();
  const button = await fold.boundingBox();
  assert.ok((await page.locator('#tabs-deep').boundingBox()).y >= button.y + button.height, 'the menu hangs under its button');
  assert.deepEqual(await page.locator('#view').boundingBox(), view, 'the page under the menu does not move');
  // A click elsewhere folds it.
  await page.mouse.click(view.x + view.width / 2, view.y + 300);
  assert.equal(await fold.getAttribute('aria-expanded'), 'false');
  await go(page, 'overview');
  await go(page, 'rope');
  assert.equal(await fold.getAttribute('aria-expanded'), 'false');
  assert.match(await fold.innerText(), /Deep dives: RoPE/);
  assert.equal(await bar(), closed);
  // One group open at a time: opening Experiments folds Deep dives.
  const experimentsFold = page.locator('[data-group="interp"] .tab-fold');
  await fold.click();
  await experimentsFold.click();
  assert.equal(await experimentsFold.getAttribute('aria-expanded'), 'true');
  assert.equal(await fold.getAttribute('aria-expanded'), 'false');
  assert.match(await fold.innerText(), /Deep dives: RoPE/);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();

  // On a phone the strip scrolls sideways, in the desktop's order: the Experiments button opens its
  // group with its first tabs in sight, and the strip stays where the reader put it.
  const phone = await freshPage('#view=overview', { viewport: { width: 390, height: 800 } });
  // The sentence is said at the top (the input panel comes after the view), with a button to the box.
  const sentence = phone.locator('#phone-sentence');
  assert.ok(await sentence.isVisible());
  assert.equal(await sentence.locator('.phone-sentence-text').innerText(), `Sentence: “${await phone.evaluate(() => window.attnscope.app.state.text)}”`);
  await sentence.locator('button').click();
  assert.equal(await phone.evaluate(() => document.activeElement?.id), 'text');
  assert.ok(await phone.evaluate(() => { const r = document.getElementById('text').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }), 'the box in sight');
  await phone.evaluate(() => window.scrollTo(0, 0));
  const order = await phone.$$eval('#nav .tab-group', (list) => list.map((g) => [g.dataset.group, Math.round(g.getBoundingClientRect().left)]));
  assert.deepEqual(order.map(([g]) => g), ['basics', 'lessons', 'deep', 'interp']);
  assert.ok(order.every(([, x], i) => i === 0 || x > order[i - 1][1]), `groups left to right: ${JSON.stringify(order)}`);
  const experiments = phone.locator('[data-group="interp"] .tab-fold');
  await experiments.scrollIntoViewIfNeeded();
  await experiments.click();
  await settled(phone);
  assert.equal(await experiments.getAttribute('aria-expanded'), 'true');
  const inSight = await phone.evaluate(() => {
    const nav = document.querySelector('#nav').getBoundingClientRect();
    const first = document.querySelector('[data-group="interp"] a.tab').getBoundingClientRect();
    return first.left >= nav.left - 1 && first.right <= nav.right + 1;
  });
  assert.ok(inSight, 'the first Experiments tab is in sight after the button opens the group');
  // A tap on the attention map's row follows it; what is said of that row comes under the map, which
  // stays under the finger.
  await go(phone, 'attention');
  const map = phone.locator('.view-attention .heatmap canvas').first();
  await map.scrollIntoViewIfNeeded();
  const before = await map.boundingBox();
  await map.click({ position: { x: before.width * 0.3, y: before.height * 0.6 } });
  await settled(phone);
  assert.notEqual(await phone.evaluate(() => window.attnscope.getState().query), null);
  const after = await map.boundingBox();
  assert.ok(Math.abs(after.y - before.y) < 1, `the map stays where it was tapped: ${before.y} → ${after.y}`);
  const lead = await phone.locator('.view-attention .followed-lead').boundingBox();
  assert.ok(lead.y >= after.y + after.height, 'the followed row’s sentence is under the map');
  assert.deepEqual(phone.consoleErrors, []);
  await phone.context().close();
});

test('while the built-in model downloads: the panel says “Built-in · x / total”, the overview draws from its config, tokenizer.json comes once', async (t) => {
  if (!existsSync(join(BUILTIN, 'config.json'))) return t.skip('www/models/builtin is not there yet');
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, serviceWorkers: 'block' });
  const page = await context.newPage();
  page.consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && page.consoleErrors.push(m.text()));
  page.on('pageerror', (e) => page.consoleErrors.push(String(e)));
  const tokenizers = [];
  page.on('request', (r) => new URL(r.url()).pathname.endsWith('tokenizer.json') && tokenizers.push(new URL(r.url()).pathname));
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: 1.5e6, uploadThroughput: 1e6 });
  // Another sentence than the opening one: the opening one's numbers are drawn ahead (ahead.test.mjs).
  await page.goto(`${server.url}${await builtinLink({ text: 'The cat sat on the mat because it was tired.' })}`);

  await page.waitForFunction(() => document.querySelector('.model-progress-bar')?.value > 0.2 * document.querySelector('.model-progress-bar').max, null, { timeout: 30_000 });
  const total = `${+(readFileSync(join(BUILTIN, 'model.safetensors')).length / 1024 / 1024).toPrecision(4)} MiB`;
  const label = new RegExp(`^Built-in · [0-9.]+ (KiB|MiB) / ${total.replace('.', '\\.')}$`);
  assert.match(await page.locator('.model-info .model-name').innerText(), label);
  assert.match(await page.locator('.model-info').innerText(), /^Loading:/);
  assert.equal(await page.locator('.segment[data-source="builtin"]').getAttribute('aria-pressed'), 'true');
  assert.match(await page.locator('#status').innerText(), label);
  assert.equal(await page.evaluate(() => window.attnscope.app.model), null, 'the weights are not in yet');
  await page.waitForSelector('.view-overview .ov-fact');
  assert.deepEqual((await facts(page)).layers, 4, 'the diagram draws from config.json meanwhile');
  assert.ok(await page.locator('.shape[data-shape="[1, T, 192]"]').count() > 0, 'with T for the tokens still to come');
  assert.equal(await page.locator('.ov-waiting').count(), 1);
  // Continuing the text waits for the weights, and says so.
  assert.equal(await page.locator('.ov-write-n:not([disabled])').count(), 0);
  assert.equal(await page.locator('.ov-write-status').innerText(), 'The model is still loading: the text can be continued once its weights are in.');
  await cleanScreenshot(page, 'overview-loading');

  await page.waitForSelector('.view-overview .ov-top', { timeout: 60_000 });
  await settled(page);
  assert.match(await page.locator('.model-info').innerText(), /^Loaded:/);
  assert.deepEqual(tokenizers, ['/models/builtin/tokenizer.json'], 'one tokenizer.json, the checkpoint’s own');
  assert.deepEqual(page.consoleErrors, []);
  await context.close();
});

// The layout shifts the page recorded while it loaded, by the browser's own measure (not after input).
const loadShifts = (page) =>
  page.evaluate(() => {
    const observer = new PerformanceObserver(() => {});
    observer.observe({ type: 'layout-shift', buffered: true });
    const shifts = observer.takeRecords().filter((e) => !e.hadRecentInput);
    observer.disconnect();
    return shifts.map((e) => ({ value: e.value, sources: e.sources.map((x) => x.node?.className ?? x.node?.nodeName ?? '?') }));
  });

test('the page loads without moving, its first screen the path from the tokens to the prediction; screenshots of both models, en and zh, light and dark, desktop and phone', async (t) => {
  if (!existsSync(join(BUILTIN, 'config.json'))) return t.skip('www/models/builtin is not there yet');
  for (const [size, viewport] of [['desktop', { width: 1366, height: 768 }], ['phone', { width: 390, height: 844 }]]) {
    const page = await freshPage(await builtinLink(), { viewport });
    // Nothing that arrives late pushes what is drawn (tools/bench/cls.mjs prints each shift): the
    // sum of every shift bounds the cumulative layout shift (CLS) the browser reports.
    const shifts = await loadShifts(page);
    const sum = shifts.reduce((a, x) => a + x.value, 0);
    assert.ok(sum < 0.05, `${size}: layout shift ${sum.toFixed(4)} while loading: ${JSON.stringify(shifts)}`);
    // The first screen is the picture: the tokens and the prediction in sight without scrolling.
    const sight = await page.evaluate(() => ['tokens', 'prediction'].map((b) => {
      const r = document.querySelector(`.ov-path [data-block="${b}"]`).getBoundingClientRect();
      return { b, top: r.top, bottom: r.bottom, height: innerHeight, scrolled: scrollY };
    }));
    for (const box of sight) assert.ok(box.scrolled === 0 && box.top >= 0 && box.bottom <= box.height, `${size}: the ${box.b} box in the first screen: ${JSON.stringify(box)}`);
    for (const model of ['builtin', 'minimind3']) {
      if (model === 'minimind3') await setState(page, { model: { kind: 'random' }, config: MINIMIND3 });
      for (const lang of ['en', 'zh']) {
        await setState(page, { lang });
        for (const theme of ['light', 'dark']) {
          // The toggle flips between light and dark (picking the system's own scheme follows the system).
          const shown = () => page.evaluate(() => document.documentElement.dataset.theme ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
          for (let i = 0; i < 2 && (await shown()) !== theme; i++) await page.locator('#theme-toggle').click();
          await settled(page);
          assert.equal(await shown(), theme);
          const width = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(width <= viewport.width + 1, `${model} ${lang} ${theme} ${size}: no sideways scrolling (${width})`);
          if (lang === 'zh') assert.doesNotMatch(await page.locator('.ov-head, .ov-route, .ov-about').allInnerTexts().then((x) => x.join(' ')), /\b(layers|heads|Start here|Prediction)\b/);
          // One of n layers, not a multiplication "层 3 × 4".
          assert.match(await page.locator('.ov-times').innerText(), lang === 'zh' ? /^（共 \d+ 层：层 0 到层 \d+）$/ : /^\(one of \d+: layers 0 to \d+\)$/);
          await cleanScreenshot(page, `overview-${model}-${lang}-${theme}-${size}`);
        }
      }
    }
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  }
});

// What a plain visit paints before any module has run (first.js, index.html's early overview text),
// with app.js and boot.js held back, and where the drawn overview puts the same text.
async function earlyText(hash, { viewport = { width: 1366, height: 768 }, locale = 'en-US', hold = true } = {}) {
  const context = await browser.newContext({ viewport, locale, serviceWorkers: 'block' });
  const page = await context.newPage();
  if (hold) await page.route(/\/(app|boot)\.js$/, (route) => route.abort());
  await page.goto(`${server.url}${hash}`);
  await page.waitForLoadState('load');
  const seen = await page.$$eval('.ov-head h2, .ov-lead', (nodes) => nodes.filter((n) => n.getClientRects().length).map((n) => ({ text: n.textContent, top: Math.round(n.getBoundingClientRect().top), left: Math.round(n.getBoundingClientRect().left) })));
  return { page, context, seen };
}

test('a plain English visit paints the overview’s title and lead before any script module runs, where the overview then draws them; nothing early elsewhere', async () => {
  for (const [size, viewport, parts] of [['desktop', { width: 1366, height: 768 }, 2], ['phone', { width: 390, height: 844 }, 1]]) {
    const early = await earlyText('', { viewport });
    await early.context.close();
    assert.equal(early.seen.length, parts, `${size}: ${JSON.stringify(early.seen)}`);
    assert.match(early.seen[0].text, /^Tiny MiniMind: your sentence through the whole model$/);
    const drawn = await earlyText('', { viewport, hold: false });
    await drawn.page.waitForFunction(() => window.attnscope?.app.phase === 'ready', null, { timeout: 120_000 });
    await settled(drawn.page);
    const now = await drawn.page.$$eval('.ov-head h2, .ov-lead', (nodes) => nodes.map((n) => ({ text: n.textContent, top: Math.round(n.getBoundingClientRect().top), left: Math.round(n.getBoundingClientRect().left) })));
    assert.equal(await drawn.page.locator('[data-first-look]').count(), 0, `${size}: the view replaced the early text`);
    await drawn.context.close();
    assert.deepEqual(now.slice(0, parts), early.seen, `${size}: the early text stands where the overview draws it`);
  }
  // Chinese readers, another view, an embed, a lesson and a whole-state link get nothing early.
  for (const [hash, locale] of [['', 'zh-CN'], ['#lang=zh', 'en-US'], ['#view=attention', 'en-US'], ['#embed=1', 'en-US'], [await builtinLink(), 'en-US']]) {
    const { context, seen } = await earlyText(hash, { locale });
    await context.close();
    assert.deepEqual(seen, [], `${hash || 'no link'} in ${locale}`);
  }
});

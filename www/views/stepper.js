// The pipeline stepper: MiniMind's main line, one step at a time, through the whole model
// (shared/seeds/002: "the main line"): the embedding, every layer's sixteen steps from input_norm to
// the layer's output, then final_norm, the logits and the prediction, the top next tokens after a
// position the reader picks (parts/prediction.js). Each tensor step shows its trace tensor(s) as
// heatmaps with the shape MiniMind prints, the formula and two sentences of explanation (strings.js,
// step.*).
// The walk is (step, layer) pairs, and a link names both (`step=probs&layer=1`): ← / → cross layer
// boundaries, one layer's output leading into the next layer's input_norm. The rail lists the
// per-layer steps once, under the layer being walked, so it stays short for any number of layers.
// A mixture-of-experts model walks its router, its experts and their weighted sum instead of the dense
// FFN's three steps (page/model_life.js mounts the view again when the model changes between the two kinds).

import { el } from '../parts/dom.js';
import { scrollFade } from '../parts/scroll_fade.js';
import { tensorFigure } from '../parts/tensor_figure.js';
import { paintAll } from '../parts/heatmap.js';
import { layerSelect, tokenSelect, tokenAt } from '../parts/controls.js';
import { predict, predictionList } from '../parts/prediction.js';
import { fixed, gap, tokenText, percent } from '../parts/format.js';
import { rms } from '../parts/entropy.js';
import { value } from '../parts/value.js';
import { t } from '../strings.js';
import { pageLink } from '../link.js';
import { latest } from '../page/latest.js';

// Tensor names without a layer prefix; every other name is under layers.{l}.
const GLOBAL = new Set(['embed', 'rope.cos', 'rope.sin', 'final_norm', 'logits']);

const ALL_STEPS = [
  { id: 'embed', label: 'embed', section: 'embed', tensors: ['embed'] },
  { id: 'input_norm', label: 'input_norm', section: 'attn', tensors: ['input_norm'] },
  { id: 'qkv', label: 'q / k / v', section: 'attn', tensors: ['attn.q', 'attn.k', 'attn.v'] },
  { id: 'qk_norm', label: 'q_norm / k_norm', section: 'attn', tensors: ['attn.q_norm', 'attn.k_norm'] },
  { id: 'rope', label: 'q_rope / k_rope', section: 'attn', tensors: ['attn.q_rope', 'attn.k_rope', 'rope.cos', 'rope.sin'] },
  { id: 'kv_cache', label: 'k_cache / v_cache', section: 'attn', tensors: ['attn.k_cache', 'attn.v_cache'] },
  // GQA only (nKV < nH): the cached K and V handed to the query heads, each KV head to n_rep of them.
  { id: 'repeat_kv', label: 'repeat_kv', section: 'attn', tensors: ['attn.k_cache', 'attn.v_cache'], gqa: true },
  { id: 'scores', label: 'scores', section: 'attn', tensors: ['attn.scores'] },
  { id: 'masked_scores', label: 'masked_scores', section: 'attn', tensors: ['attn.masked_scores'] },
  { id: 'probs', label: 'probs', section: 'attn', tensors: ['attn.probs'] },
  { id: 'context', label: 'context', section: 'attn', tensors: ['attn.context'] },
  { id: 'attn_out', label: 'attn.out', section: 'attn', tensors: ['attn.out'] },
  { id: 'attn_residual', label: 'attn.residual', section: 'attn', tensors: ['attn.residual'] },
  { id: 'post_norm', label: 'post_norm', section: 'ffn', tensors: ['post_norm'] },
  { id: 'ffn_gate_up', label: 'ffn.gate / up', section: 'ffn', tensors: ['ffn.gate', 'ffn.up'], ffn: 'dense' },
  { id: 'ffn_act', label: 'ffn.act', section: 'ffn', tensors: ['ffn.act'], ffn: 'dense' },
  { id: 'ffn_out', label: 'ffn.out', section: 'ffn', tensors: ['ffn.out'], ffn: 'dense' },
  { id: 'ffn_router', label: 'ffn.router_probs', section: 'ffn', tensors: ['ffn.router_logits', 'ffn.router_probs'], ffn: 'moe' },
  { id: 'ffn_experts', label: 'ffn.expert_index / weight', section: 'ffn', tensors: ['ffn.expert_index', 'ffn.expert_weight', 'ffn.expert_out'], ffn: 'moe' },
  { id: 'ffn_moe_out', label: 'ffn.out', section: 'ffn', tensors: ['ffn.out'], ffn: 'moe' },
  { id: 'layer_out', label: 'out', section: 'ffn', tensors: ['out'] },
  { id: 'final_norm', label: 'final_norm', section: 'output', tensors: ['final_norm'] },
  { id: 'logits', label: 'logits', section: 'output', tensors: ['logits'] },
  // The last step draws no trace tensor of its own: the core's softmax of one logits row.
  { id: 'prediction', label: null, section: 'output', tensors: [] },
];

/** Every step's id, the ones a link's `step` may name (the walk of a dense or a MoE model). */
export const STEP_IDS = ALL_STEPS.map((s) => s.id);

function fullName(name, layer) {
  return GLOBAL.has(name) ? name : `layers.${layer}.${name}`;
}

function perLayer(step) {
  return step.tensors.some((n) => !GLOBAL.has(n));
}

// The walk of a model: its steps, the global ones before the layers (the embedding), each layer's, and
// the global ones after them.
function walk(model) {
  const kind = model.use_moe ? 'moe' : 'dense';
  const gqa = model.num_key_value_heads < model.num_attention_heads;
  const steps = ALL_STEPS.filter((s) => (!s.ffn || s.ffn === kind) && (!s.gqa || gqa));
  const before = steps.findIndex(perLayer);
  return { STEPS: steps, BEFORE: before, LAYER_STEPS: steps.filter(perLayer), AFTER: steps.filter((s, i) => i > before && !perLayer(s)) };
}

// The text the prediction follows, cut to its end when long.
const BEFORE_CHARS = 40;

// The end of a long text, cut at a space where one is near the cut, so no word is shown in part.
function lastChars(text) {
  if (text.length <= BEFORE_CHARS) return text;
  const end = text.slice(-BEFORE_CHARS);
  if (/\s/.test(text[text.length - BEFORE_CHARS - 1])) return `…${end}`;
  const space = end.search(/\s/);
  return `…${space >= 0 && space < BEFORE_CHARS / 2 ? end.slice(space + 1) : end}`;
}
const SLOT = '\u0000';

export function mount(root, app) {
  const { state } = app;
  const { STEPS, BEFORE, LAYER_STEPS, AFTER } = walk(app.model);
  const layers = () => app.model.num_hidden_layers;
  const total = () => BEFORE + layers() * LAYER_STEPS.length + AFTER.length;
  const layerNow = () => Math.max(0, Math.min(layers() - 1, state.layer));
  const stepNow = () => STEPS.find((s) => s.id === state.step) ?? STEPS[0];
  // The walk's position of (step, layer): global steps before, each layer's block, global steps after.
  function position(step, layer) {
    if (perLayer(step)) return BEFORE + layer * LAYER_STEPS.length + LAYER_STEPS.indexOf(step);
    const before = STEPS.indexOf(step);
    return before < BEFORE ? before : BEFORE + layers() * LAYER_STEPS.length + AFTER.indexOf(step);
  }
  const index = () => position(stepNow(), layerNow());
  // The layer the rail numbers: a layer's step's own; before the layers, layer 0 (where → goes
  // next); after them, the last. A step outside the layers has no layer of its own to pick.
  function railLayer() {
    const step = stepNow();
    if (perLayer(step)) return layerNow();
    return STEPS.indexOf(step) < BEFORE ? 0 : layers() - 1;
  }
  // A global step keeps the state's layer (it has none of its own); a per-layer step sets it.
  function go(n) {
    const i = Math.min(total() - 1, Math.max(0, n));
    if (i < BEFORE) return app.set({ step: STEPS[i].id });
    const k = i - BEFORE - layers() * LAYER_STEPS.length;
    if (k >= 0) return app.set({ step: AFTER[k].id });
    const j = i - BEFORE;
    app.set({ step: LAYER_STEPS[j % LAYER_STEPS.length].id, layer: Math.floor(j / LAYER_STEPS.length) });
  }

  const prev = el('button', { type: 'button', className: 'nav-button', title: t('stepper.prev'), attrs: { 'aria-label': t('stepper.prev') }, on: { click: () => go(index() - 1) } }, '←');
  const next = el('button', { type: 'button', className: 'nav-button', title: t('stepper.next'), attrs: { 'aria-label': t('stepper.next') }, on: { click: () => go(index() + 1) } }, '→');
  const layer = layerSelect(app);
  const query = tokenSelect(app, 'query', 'control.position');
  // The rail is built once; a step or layer change moves the active mark and renumbers the layer's steps.
  const railNums = STEPS.map(() => el('span', { className: 'rail-num' }));
  const railSteps = STEPS.map((step, i) =>
    el(
      'button',
      { type: 'button', className: 'rail-step', dataset: { step: step.id }, on: { click: () => go(position(step, railLayer())) } },
      railNums[i],
      step.label ?? t(`step.${step.id}.rail`),
      // The code name stays (it is the tensor's name in MiniMind); in Chinese a word says what it is.
      step.label && t(`step.${step.id}.gloss`) && el('span', { className: 'rail-gloss' }, t(`step.${step.id}.gloss`)),
    ),
  );
  const sectionLabels = new Map();
  // After the layer's block: that the same steps repeat in every layer, and where in the walk.
  const repeat = el('li', { className: 'rail-section rail-repeat' });
  const lastLayerStep = STEPS.indexOf(LAYER_STEPS[LAYER_STEPS.length - 1]);
  let section = null;
  const rail = el(
    'ol',
    { className: 'rail' },
    STEPS.flatMap((step, i) => {
      const items = [];
      if (step.section !== section) {
        section = step.section;
        const label = el('li', { className: 'rail-section', dataset: { section } });
        sectionLabels.set(section, label);
        items.push(label);
      }
      items.push(el('li', {}, railSteps[i]));
      if (i === lastLayerStep) items.push(repeat);
      return items;
    }),
  );
  const card = el('section', { className: 'step-card' });
  // What a screen reader hears on a step change: where it is and the step's title, not the whole card.
  const said = el('p', { className: 'sr-only', attrs: { 'aria-live': 'polite' } });
  const railWrap = el('div', { className: 'rail-wrap' }, rail);
  const fade = scrollFade(railWrap);
  const bar = el('div', { className: 'toolbar stepper-bar' }, prev, railWrap, next, layer.node);
  root.append(bar, said, card);

  const onKey = (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    if (e.target.closest('input, textarea, select, canvas, [contenteditable]')) return;
    // Not from a widget with arrow keys of its own: those keep them. In the top bar, only from the
    // Pipeline tab itself (a reader who just clicked it steps with → at once), not from another tab.
    if (e.target.closest('[role="tablist"], [role="radiogroup"], [role="slider"], [role="listbox"]')) return;
    if (e.target.closest('nav') && !e.target.closest('a.tab[aria-current="page"]')) return;
    if (e.key === 'ArrowRight') go(index() + 1);
    else if (e.key === 'ArrowLeft') go(index() - 1);
    else return;
    e.preventDefault();
  };
  document.addEventListener('keydown', onKey);

  let figures = [];
  const updates = latest();

  // "layer 2 of 4 (0–3)": layers are counted from 0, as the tensor names count them.
  const layerOf = (l) => t('stepper.layerOf', { l, n: layers(), last: layers() - 1 });
  // In the rail the layer heads its block of steps: the attention section, its first.
  function sectionText(name, l) {
    const text = t(`stepper.section.${name}`);
    return name === LAYER_STEPS[0].section ? `${layerOf(l)} · ${text}` : text;
  }

  let shown = '';
  function markRail(active, l) {
    STEPS.forEach((step, i) => {
      railNums[i].textContent = position(step, l) + 1;
    });
    for (const [name, label] of sectionLabels) label.textContent = sectionText(name, l);
    repeat.hidden = layers() < 2;
    // Before the last layer the loop says where → goes next (layer l + 1's first step), not only
    // that the layers repeat: "out" followed by OUTPUT read as if the output came next.
    const numbers = { n: layers(), from: BEFORE + 1, to: BEFORE + layers() * LAYER_STEPS.length, next: l + 1, at: BEFORE + (l + 1) * LAYER_STEPS.length + 1 };
    repeat.textContent = t(l < layers() - 1 ? 'stepper.repeatNext' : 'stepper.repeat', numbers);
    const key = `${active}|${l}|${layers()}`;
    if (key === shown) return;
    shown = key;
    // One Tab stop for the whole rail (the step shown); the arrow keys move along it, and the
    // focus follows the step when it was in the rail.
    const focused = rail.contains(document.activeElement);
    railSteps.forEach((button, i) => {
      button.classList.toggle('active', i === active);
      button.tabIndex = i === active ? 0 : -1;
      if (i === active) button.setAttribute('aria-current', 'step');
      else button.removeAttribute('aria-current');
    });
    if (focused) railSteps[active].focus({ preventScroll: true });
    // In the next frame, when the page is laid out anyway, rather than forcing a layout now.
    requestAnimationFrame(() => railSteps[active].scrollIntoView({ block: 'nearest', inline: 'center' }));
  }

  // The prediction step: after which text the model predicts what, then the top tokens as bars.
  async function prediction(signal) {
    query.update();
    const logits = (await app.tensors(['logits'])).get('logits');
    if (signal.aborted) return null;
    const i = tokenAt(app, 'query');
    // The text up to the position as the reader wrote it: special tokens (the BOS the page puts
    // first) are not part of it, unless they are all there is.
    const { ids, special, pieces } = state.tokens;
    const written = ids.slice(0, i + 1).filter((_, k) => !special[k]);
    const [top, text] = await Promise.all([predict(app, logits, i), written.length ? app.call('decode', { ids: written }) : pieces.slice(0, i + 1).join('')]);
    if (signal.aborted) return null;
    const before = lastChars(text);
    const best = top[0];
    // The sentence is translated whole; its probability is a number element in the {p} slot.
    const [head, tail] = t('stepper.predicts', { before, token: tokenText(best.piece), p: SLOT }).split(SLOT);
    return [
      el('div', { className: 'toolbar' }, query.node),
      el('p', { className: 'prediction-sentence' }, head, value(best.p, percent), tail),
      predictionList(app, top, i, logits.shape[1], { titled: false }),
    ];
  }

  // What Q/K RMSNorm did to the size of q and k in this layer: the RMS of all their numbers before
  // and after, from this run (the learned weights decide it: in a trained model it may grow).
  async function normSizes(l, found) {
    const before = ['attn.q', 'attn.k'].map((n) => fullName(n, l));
    const after = ['attn.q_norm', 'attn.k_norm'].map((n) => fullName(n, l));
    if (![...before, ...after].every((n) => app.run.entries.some((e) => e.name === n))) return [];
    const raw = await app.tensors(before);
    const [q0, k0] = before.map((n) => rms(raw.get(n).data));
    const [q1, k1] = after.map((n) => rms(found.get(n).data));
    if (![q0, k0, q1, k1].every((x) => Number.isFinite(x) && x > 0)) return [];
    const f = (x) => fixed(x, 2);
    return [el('p', { className: 'hint norm-sizes' }, t('stepper.normSizes', { q0: f(q0), q1: f(q1), qr: f(q1 / q0), k0: f(k0), k1: f(k1), kr: f(k1 / k0) }))];
  }

  // The last step's onward links: the prediction layer by layer, head by head, and continued.
  function whereNext() {
    const link = (view) => pageLink(app.navigate, { view }, t(`stepper.next.${view}`), { dataset: { view } });
    return el('p', { className: 'where-next' }, el('strong', {}, t('stepper.whereNext')), gap(t('stepper.whereNext')), ...['lens', 'attribution', 'decode'].flatMap((view, k) => [k ? t('stepper.nextSep') : '', link(view)]));
  }

  // The arrows again under the step, where a long step (a phone's stacked heads) ends far below the
  // toolbar's: a press steps and brings the toolbar and the new step's top into view.
  function bottomNav(i) {
    const step = (by, label, className) =>
      el('button', { type: 'button', className, disabled: i + by < 0 || i + by >= total(), on: { click: () => {
        go(index() + by);
        bar.scrollIntoView({ block: 'start' });
      } } }, label);
    return el(
      'div',
      { className: 'step-bottom-nav' },
      step(-1, `← ${t('stepper.prev')}`, 'action secondary step-prev'),
      i < total() - 1 ? step(1, `${t('stepper.next')} →`, 'action step-next') : null,
      el('span', { className: 'hint keys' }, t('stepper.keys')),
    );
  }

  async function update() {
    const signal = updates.start();
    const l = layerNow();
    const step = stepNow();
    const i = index();
    // An arrow button that reaches the end is disabled under the focus: the focus moves to the step
    // shown in the rail, not to the page's top.
    const stranded = [prev, next].find((b) => b === document.activeElement);
    prev.disabled = i === 0;
    next.disabled = i === total() - 1;
    layer.update();
    layer.node.classList.toggle('inactive', !perLayer(step));
    markRail(STEPS.indexOf(step), railLayer());
    if (stranded?.disabled) railSteps[STEPS.indexOf(step)].focus({ preventScroll: true });

    const names = step.tensors.map((n) => fullName(n, l));
    const present = names.filter((n) => app.run.entries.some((e) => e.name === n));
    const found = present.length ? await app.tensors(present) : new Map();
    if (signal.aborted) return;
    const extra = step.id === 'prediction' ? await prediction(signal) : step.id === 'qk_norm' ? await normSizes(l, found) : [];
    if (signal.aborted || extra === null) return;

    figures.forEach((f) => f.destroy());
    const ctx = { pieces: state.tokens.pieces, mask: state.mask, nRep: app.model.num_attention_heads / app.model.num_key_value_heads, causal: state.causal };
    figures = present.map((n) => (step.id === 'repeat_kv' ? tensorFigure(...repeatKv(n, found.get(n), ctx.nRep), { ...ctx, repeat: ctx.nRep }) : tensorFigure(n, found.get(n), ctx)));
    const missing = names.filter((n) => !present.includes(n));
    const where = t('stepper.stepOf', { i: i + 1, n: total() });
    said.textContent = `${where.charAt(0).toUpperCase()}${where.slice(1)}${t('heatmap.nameEnd')}${t(`step.${step.id}.title`)}`;
    card.replaceChildren(
      el('div', { className: 'step-kicker' }, perLayer(step) ? `${layerOf(l)} · ` : '', `${t(`stepper.section.${step.section}`)} · `, t('stepper.stepOf', { i: i + 1, n: total() })),
      el('h2', {}, t(`step.${step.id}.title`)),
      el('pre', { className: 'formula' }, t(`step.${step.id}.formula`, { vocab: app.model.vocab_size })),
      ...symbolsOf(t(`step.${step.id}.formula`), app.model, state.tokens.ids.length),
      el('p', { className: 'explain' }, t(`step.${step.id}.explain`)),
      ...missing.map((n) => el('p', { className: 'hint' }, t('stepper.missing', { name: n }))),
      ...extra,
      el('div', { className: 'figures' }, figures.map((f) => f.node)),
      // The walk's end is not a dead end: where the prediction can be taken apart next.
      ...(i === total() - 1 ? [whereNext()] : []),
      bottomNav(i),
    );
    paintAll(figures.flatMap((f) => f.maps));
  }

  return {
    update,
    destroy() {
      updates.abort();
      fade.destroy();
      document.removeEventListener('keydown', onKey);
      figures.forEach((f) => f.destroy());
    },
  };
}

// MiniMind's repeat_kv on a cached [S, nKV, d] tensor: [S, nH, d], query head h reading KV head
// ⌊h / n_rep⌋. The trace keeps the cache once; this view lays out what the scores read.
function repeatKv(name, { data, shape }, nRep) {
  const [S, nKV, d] = shape.slice(-3);
  const out = new Float32Array(S * nKV * nRep * d);
  for (let j = 0; j < S; j++) {
    for (let h = 0; h < nKV * nRep; h++) out.set(data.subarray((j * nKV + Math.floor(h / nRep)) * d, (j * nKV + Math.floor(h / nRep) + 1) * d), (j * nKV * nRep + h) * d);
  }
  return [`${name}[:, ⌊h / n_rep⌋]`, { data: out, shape: [...shape.slice(0, -3), S, nKV * nRep, d] }];
}

// The letters a step's formula uses, with this run's numbers: T = 15 tokens, nH = 8 query heads, ...
// (a newcomer meets [T, nH, d] in the formula before anywhere else). Only the ones the formula has.
const SYMBOLS = [
  ['T', /\[T\b|\bT\]/, (m, T) => T],
  ['S', /\[S\b/, (m, T) => T],
  ['nH', /\bnH\b/, (m) => m.num_attention_heads],
  ['nKV', /\bnKV\b/, (m) => m.num_key_value_heads],
  ['d', /\bd\]|√d|\/d\)|_d\b/, (m) => m.head_dim],
  ['n_rep', /n_rep/, (m) => m.num_attention_heads / m.num_key_value_heads],
  ['H', /\bH\]/, (m) => m.hidden_size],
  ['I', /\bI\]/, (m) => m.intermediate_size],
];

function symbolsOf(formula, model, T) {
  const found = SYMBOLS.filter(([, pattern]) => pattern.test(formula)).map(([name, , value]) => t(`stepper.symbol.${name}`, { n: value(model, T) }));
  return found.length ? [el('p', { className: 'hint step-symbols' }, t('stepper.symbols', { list: found.join(t('stepper.symbolSep')) }))] : [];
}

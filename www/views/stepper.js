// The pipeline stepper: MiniMind's main line, one step at a time, from the embedding to the logits
// (shared/seeds/002: "the main line"). Each step shows its trace tensor(s) as heatmaps with the
// shape MiniMind prints, the formula and two sentences of explanation (strings.js, step.*).
// ← / → step through; the layer selector picks which block the per-layer steps show.

import { el } from '../parts/dom.js';
import { tensorFigure } from '../parts/tensor_figure.js';
import { paintAll } from '../parts/heatmap.js';
import { layerSelect } from '../parts/controls.js';
import { t } from '../strings.js';

// Tensor names without a layer prefix; every other name is under layers.{l}.
const GLOBAL = new Set(['embed', 'rope.cos', 'rope.sin', 'final_norm', 'logits']);

const STEPS = [
  { id: 'embed', label: 'embed', section: 'embed', tensors: ['embed'] },
  { id: 'input_norm', label: 'input_norm', section: 'attn', tensors: ['input_norm'] },
  { id: 'qkv', label: 'q / k / v', section: 'attn', tensors: ['attn.q', 'attn.k', 'attn.v'] },
  { id: 'qk_norm', label: 'q_norm / k_norm', section: 'attn', tensors: ['attn.q_norm', 'attn.k_norm'] },
  { id: 'rope', label: 'q_rope / k_rope', section: 'attn', tensors: ['attn.q_rope', 'attn.k_rope', 'rope.cos', 'rope.sin'] },
  { id: 'kv_cache', label: 'k_cache / v_cache', section: 'attn', tensors: ['attn.k_cache', 'attn.v_cache'] },
  { id: 'scores', label: 'scores', section: 'attn', tensors: ['attn.scores'] },
  { id: 'masked_scores', label: 'masked_scores', section: 'attn', tensors: ['attn.masked_scores'] },
  { id: 'probs', label: 'probs', section: 'attn', tensors: ['attn.probs'] },
  { id: 'context', label: 'context', section: 'attn', tensors: ['attn.context'] },
  { id: 'attn_out', label: 'attn.out', section: 'attn', tensors: ['attn.out'] },
  { id: 'attn_residual', label: 'attn.residual', section: 'attn', tensors: ['attn.residual'] },
  { id: 'post_norm', label: 'post_norm', section: 'ffn', tensors: ['post_norm'] },
  { id: 'ffn_gate_up', label: 'ffn.gate / up', section: 'ffn', tensors: ['ffn.gate', 'ffn.up'] },
  { id: 'ffn_act', label: 'ffn.act', section: 'ffn', tensors: ['ffn.act'] },
  { id: 'ffn_out', label: 'ffn.out', section: 'ffn', tensors: ['ffn.out'] },
  { id: 'layer_out', label: 'out', section: 'ffn', tensors: ['out'] },
  { id: 'final_norm', label: 'final_norm', section: 'output', tensors: ['final_norm'] },
  { id: 'logits', label: 'logits', section: 'output', tensors: ['logits'] },
];

function fullName(name, layer) {
  return GLOBAL.has(name) ? name : `layers.${layer}.${name}`;
}

function perLayer(step) {
  return step.tensors.some((n) => !GLOBAL.has(n));
}

export function mount(root, app) {
  const { state } = app;
  const index = () => Math.max(0, STEPS.findIndex((s) => s.id === state.step));
  const go = (i) => app.set({ step: STEPS[Math.min(STEPS.length - 1, Math.max(0, i))].id });

  const prev = el('button', { type: 'button', className: 'nav-button', title: t('stepper.prev'), attrs: { 'aria-label': t('stepper.prev') }, on: { click: () => go(index() - 1) } }, '←');
  const next = el('button', { type: 'button', className: 'nav-button', title: t('stepper.next'), attrs: { 'aria-label': t('stepper.next') }, on: { click: () => go(index() + 1) } }, '→');
  const layer = layerSelect(app);
  // The rail is built once; a step change moves the active mark.
  let section = null;
  const railSteps = STEPS.map((step, i) => el('button', { type: 'button', className: 'rail-step', dataset: { step: step.id }, on: { click: () => go(i) } }, el('span', { className: 'rail-num' }, i + 1), step.label));
  const rail = el(
    'ol',
    { className: 'rail' },
    STEPS.flatMap((step, i) => {
      const items = [];
      if (step.section !== section) {
        section = step.section;
        items.push(el('li', { className: 'rail-section', attrs: { 'aria-hidden': 'true' } }, t(`stepper.section.${section}`)));
      }
      items.push(el('li', {}, railSteps[i]));
      return items;
    }),
  );
  const card = el('section', { className: 'step-card', attrs: { 'aria-live': 'polite' } });
  root.append(el('div', { className: 'toolbar' }, prev, el('div', { className: 'rail-wrap' }, rail), next, layer.node), card);

  const onKey = (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    if (e.target.closest('input, textarea, select, canvas, [contenteditable]')) return;
    if (e.key === 'ArrowRight') go(index() + 1);
    else if (e.key === 'ArrowLeft') go(index() - 1);
    else return;
    e.preventDefault();
  };
  document.addEventListener('keydown', onKey);

  let figures = [];
  let seq = 0;

  let shown = -1;
  function markRail(active) {
    if (active === shown) return;
    shown = active;
    railSteps.forEach((button, i) => {
      button.classList.toggle('active', i === active);
      if (i === active) button.setAttribute('aria-current', 'step');
      else button.removeAttribute('aria-current');
    });
    // In the next frame, when the page is laid out anyway, rather than forcing a layout now.
    requestAnimationFrame(() => railSteps[active].scrollIntoView({ block: 'nearest', inline: 'center' }));
  }

  async function update() {
    const my = ++seq;
    const i = index();
    const step = STEPS[i];
    prev.disabled = i === 0;
    next.disabled = i === STEPS.length - 1;
    layer.update();
    layer.node.classList.toggle('inactive', !perLayer(step));
    markRail(i);

    const names = step.tensors.map((n) => fullName(n, state.layer));
    const present = names.filter((n) => app.run.entries.some((e) => e.name === n));
    const found = present.length ? await app.tensors(present) : new Map();
    if (my !== seq) return;

    figures.forEach((f) => f.destroy());
    const ctx = { pieces: state.tokens.pieces, mask: state.mask, nRep: app.model.num_attention_heads / app.model.num_key_value_heads };
    figures = present.map((n) => tensorFigure(n, found.get(n), ctx));
    const missing = names.filter((n) => !present.includes(n));
    card.replaceChildren(
      el('div', { className: 'step-kicker' }, `${t(`stepper.section.${step.section}`)} · ${i + 1} / ${STEPS.length}`, perLayer(step) ? ` · ${t('control.layer')} ${state.layer}` : ''),
      el('h2', {}, t(`step.${step.id}.title`)),
      el('pre', { className: 'formula' }, t(`step.${step.id}.formula`)),
      el('p', { className: 'explain' }, t(`step.${step.id}.explain`)),
      ...missing.map((n) => el('p', { className: 'hint' }, t('stepper.missing', { name: n }))),
      el('div', { className: 'figures' }, figures.map((f) => f.node)),
      el('p', { className: 'hint keys' }, t('stepper.keys')),
    );
    paintAll(figures.flatMap((f) => f.maps));
  }

  return {
    update,
    destroy() {
      seq++;
      document.removeEventListener('keydown', onKey);
      figures.forEach((f) => f.destroy());
    },
  };
}

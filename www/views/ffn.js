// The FFN (SwiGLU, shared/seeds/000 section 1: "each token on its own, deep processing"):
// gate = g·W_gateᵀ, up = g·W_upᵀ, silu(gate) (the core's silu), act = silu(gate) ⊙ up, and
// down = act·W_downᵀ, as heatmaps a row per token; then, for each token, the neurons with the
// largest |act|, the ones that token switches on, with the three numbers that make each. The
// tutorial's w1 / w3 / w2 are named beside MiniMind's gate_proj / up_proj / down_proj, with its formula.
// A mixture-of-experts model's FFN is its routing (moe.js); page/model_life.js mounts the view again when the
// model changes between the two kinds.

import { el } from '../parts/dom.js';
import { tensorFigure } from '../parts/tensor_figure.js';
import { value } from '../parts/value.js';
import { layerSelect, tokenSelect, tokenAt } from '../parts/controls.js';
import { tokenText } from '../parts/format.js';
import { t } from '../strings.js';
import * as moe from './moe.js';
import { latest } from '../page/latest.js';

const TOP_NEURONS = 5;

// Indices of the n largest |values| of one row, largest first.
function strongest(row, n) {
  return Array.from(row.keys())
    .sort((a, b) => Math.abs(row[b]) - Math.abs(row[a]))
    .slice(0, n);
}

export function mount(root, app) {
  if (app.model.use_moe) return moe.mount(root, app);
  const { state } = app;
  const controls = [layerSelect(app), tokenSelect(app, 'query', 'control.token')];
  const figures = el('div', { className: 'figures' });
  const neurons = el('div', { className: 'table-scroll' });
  const detail = el('div', {});
  const scalesNote = el('p', { className: 'hint' });
  root.append(
    el('div', { className: 'toolbar' }, controls.map((c) => c.node)),
    // The FFN in four short steps, each with its tutorial name and its size, then the residual
    // stream in a note: one long paragraph nested brackets in brackets.
    el('p', { className: 'explain' }, t('ffn.explain')),
    el('ol', { className: 'explain ffn-steps' }, ['g', 'gateUp', 'act', 'down'].map((k) => el('li', {}, t(`ffn.step.${k}`, { h: app.model.hidden_size, i: app.model.intermediate_size })))),
    el('p', { className: 'hint' }, t('ffn.residual')),
    el('pre', { className: 'formula' }, t('ffn.formula')),
    el('p', { className: 'explain', dataset: { part: 'tutorial-names' } }, t('ffn.tutorial')),
    el('pre', { className: 'formula' }, 'output = self.w2(F.silu(self.w1(x)) * self.w3(x))'),
    el('section', { className: 'card' }, el('h3', {}, t('ffn.neuronsHeading')), el('p', { className: 'hint' }, t('ffn.neuronsNote', { n: TOP_NEURONS })), neurons, detail),
    el('section', { className: 'card' }, el('h3', {}, t('ffn.mapsHeading')), scalesNote, figures),
  );
  let shown = [];
  const updates = latest();

  async function update() {
    const signal = updates.start();
    controls.forEach((c) => c.update());
    const l = state.layer;
    const names = ['ffn.gate', 'ffn.up', 'ffn.act', 'ffn.out'].map((n) => `layers.${l}.${n}`);
    const found = await app.tensors(names);
    if (signal.aborted) return;
    const [gate, up, act, out] = names.map((n) => found.get(n));
    const { values: silu } = await app.call('silu', { z: gate.data.slice() });
    if (signal.aborted) return;
    const [T, I] = act.shape;
    scalesNote.textContent = t('ffn.scalesNote', { n: I });
    const pieces = state.tokens.pieces;
    const sel = tokenAt(app, 'query');

    shown.forEach((f) => f.destroy());
    const ctx = { pieces, mask: state.mask, nRep: 1, maxCell: 8 };
    shown = [
      tensorFigure(names[0], gate, ctx),
      tensorFigure(`silu(${names[0]})`, { data: silu, shape: gate.shape }, ctx),
      tensorFigure(names[1], up, ctx),
      tensorFigure(names[2], act, ctx),
      tensorFigure(names[3], out, ctx),
    ];
    // Each map says in words what it holds, under its tensor's name.
    ['gate', 'silu', 'up', 'act', 'out'].forEach((part, k) => shown[k].node.querySelector('figcaption').after(el('p', { className: 'hint figure-note' }, t(`ffn.map.${part}`))));
    figures.replaceChildren(...shown.map((f) => f.node));

    const top = Array.from({ length: T }, (_, i) => strongest(act.data.subarray(i * I, (i + 1) * I), TOP_NEURONS));
    neurons.replaceChildren(
      el(
        'table',
        { className: 'data-table neuron-table' },
        el('thead', {}, el('tr', {}, el('th', { attrs: { scope: 'col' } }, t('tip.token')), el('th', { attrs: { scope: 'col' } }, t('ffn.topNeurons')))),
        el(
          'tbody',
          {},
          top.map((idx, i) =>
            el(
              'tr',
              { className: i === sel ? 'current' : '', dataset: { token: i } },
              el('th', { attrs: { scope: 'row' } }, el('button', { type: 'button', className: 'link', on: { click: () => app.set({ query: i }) } }, `${i} ${tokenText(pieces[i])}`)),
              el('td', {}, el('span', { className: 'neuron-list' }, idx.map((n) => el('span', { className: act.data[i * I + n] < 0 ? 'neuron neg' : 'neuron pos' }, `#${n} `, value(act.data[i * I + n], 3))))),
            ),
          ),
        ),
      ),
    );
    const at = (n) => sel * I + n;
    detail.replaceChildren(
      el('h4', {}, t('ffn.detailHeading', { i: sel, token: tokenText(pieces[sel]) })),
      // Wider than a phone: the table scrolls in its own box, not the page.
      el(
        'div',
        { className: 'table-scroll' },
        el(
        'table',
        { className: 'data-table' },
        el('thead', {}, el('tr', {}, [t('ffn.neuron'), 'gate', 'silu(gate)', 'up', 'act = silu(gate) × up'].map((c) => el('th', { attrs: { scope: 'col' } }, c)))),
        el(
          'tbody',
          {},
          top[sel].map((n) => el('tr', { dataset: { neuron: n } }, el('th', { attrs: { scope: 'row' } }, `#${n}`), el('td', {}, value(gate.data[at(n)], 4)), el('td', {}, value(silu[at(n)], 4)), el('td', {}, value(up.data[at(n)], 4)), el('td', {}, value(act.data[at(n)], 4)))),
        ),
        ),
      ),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
      shown.forEach((f) => f.destroy());
    },
  };
}

// Lesson: multi-head attention (the end of shared/seeds/000: one set of W_Q, W_K, W_V learns one kind
// of relation; several sets look at "她很开心" from several sides at once). The first lesson's Q and K
// (小红 / 很 / 她, 4 dims) are cut into two heads of 2 dims each, as MiniMind cuts 768 into 8 heads of
// 96; the seed's input x serves as V. The core runs both heads with the model's 1/√d and gives each
// its own pattern; the heads' outputs side by side are the [3, 2 × 2] context o_proj then mixes.

import { el } from '../parts/dom.js';
import { matrixTable } from '../parts/matrix_table.js';
import { value } from '../parts/value.js';
import { sequential, diverging } from '../parts/color_scale.js';
import { TOKENS, Q, K } from './qk_match.js';
import { t } from '../strings.js';

// The seed's x: "她" [1.0, 0.1, 0.9, 0.0] was made to look like "小红" [1.0, 0.0, 1.0, 0.0].
const X = [
  [1.0, 0.0, 1.0, 0.0],
  [0.0, 1.0, 0.0, 1.0],
  [1.0, 0.1, 0.9, 0.0],
];
const HEADS = 2;
const D = 2;
const COLS = ['h0 d0', 'h0 d1', 'h1 d0', 'h1 d1'];

export function mount(root, app) {
  const fresh = () => ({ q: Float32Array.from(Q.flat()), k: Float32Array.from(K.flat()), v: Float32Array.from(X.flat()) });
  let m = fresh();
  const inputs = el('div', { className: 'multiples tables' });
  const heads = el('div', { className: 'multiples tables' });
  const context = el('div', {});
  const reset = el('button', { type: 'button', className: 'action secondary', on: { click: () => { m = fresh(); app.redraw(); } } }, t('lesson.reset'));
  root.append(
    el('section', { className: 'card' }, el('h3', {}, t('lesson.multihead.inputs')), el('p', { className: 'hint' }, t('lesson.multihead.inputsNote')), inputs, reset),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.multihead.headsHeading')), heads),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.multihead.contextHeading')), context),
  );
  let seq = 0;

  async function update() {
    const my = ++seq;
    const out = await app.call('attend', { q: m.q, k: m.k, v: m.v, spec: { t: 3, s: 3, heads: HEADS, kv_heads: HEADS, d: D, causal: false } });
    if (my !== seq) return;
    const edit = (name) => (r, c, x) => {
      m[name][r * HEADS * D + c] = x;
      app.redraw();
    };
    inputs.replaceChildren(
      ...['q', 'k', 'v'].map((name) => matrixTable({ data: m[name], rows: 3, cols: HEADS * D, rowLabels: TOKENS, colLabels: COLS, editable: true, onEdit: edit(name), caption: name.toUpperCase(), corner: name.toUpperCase() })),
    );
    heads.replaceChildren(
      ...Array.from({ length: HEADS }, (_, h) => {
        const probs = out.probs.subarray(h * 9, (h + 1) * 9);
        return el(
          'figure',
          { className: 'panel-cell', dataset: { head: h } },
          el('figcaption', { className: 'panel-title' }, t('lesson.multihead.head', { h })),
          matrixTable({ data: out.scores.subarray(h * 9, (h + 1) * 9), rows: 3, cols: 3, rowLabels: TOKENS, colLabels: TOKENS, scale: diverging(1), digits: 3, corner: 'scores' }),
          matrixTable({ data: probs, rows: 3, cols: 3, rowLabels: TOKENS, colLabels: TOKENS, scale: sequential(0, 1), digits: 3, mark: { r: 2 }, corner: 'probs' }),
          el('p', { className: 'answer' }, TOKENS.map((name, c) => el('span', { className: 'pair', dataset: { key: name } }, ` 她→${name}: `, value(probs[6 + c], 3)))),
        );
      }),
    );
    context.replaceChildren(
      el('p', { className: 'hint' }, t('lesson.multihead.contextNote')),
      matrixTable({ data: out.context, rows: 3, cols: HEADS * D, rowLabels: TOKENS, colLabels: COLS, scale: diverging(1), digits: 3, corner: 'context' }),
    );
  }

  return {
    update,
    destroy() {
      seq++;
    },
  };
}

// Lesson: multi-head attention (the end of shared/seeds/000: one set of W_Q, W_K, W_V learns one kind
// of relation; several sets look at "她很开心" from several sides at once). Three tokens 小红 / 很 / 她
// and two heads of 2 dims each, as MiniMind cuts 768 into 8 heads of 96. The heads are set to look
// at different things, as the tutorial's list does: head 0 matches content (the first lesson's
// dims d0 and d2, where 她 was made to resemble 小红), head 1 matches position (each key carries its
// place, each query the place before its own), so it follows the previous token. The seed's input x
// serves as V. The core runs both heads with the model's 1/√d; the heads' outputs side by side are
// the [3, 2 × 2] context o_proj then mixes. Beside them, the first lesson's one head (all 4 dims,
// no ÷ √d) computed again, so the reader sees why 她→小红 is smaller in head 0. An English reader
// reads the first lesson's Mary / very / she (words.js).

import { el } from '../parts/dom.js';
import { matrixTable } from '../parts/matrix_table.js';
import { value } from '../parts/value.js';
import { fixed } from '../parts/format.js';
import { sequential, diverging } from '../parts/color_scale.js';
import { TOKENS, PAIRS, Q, K, SENTENCE, SENTENCE_WORDS, SMOLLM2_DOOR } from './qk_match.js';
import { lessonWords } from './words.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

export const WORDS = lessonWords(PAIRS);
// In English, SmolLM2's grid (qk_match.js says why): its named heads are the real model's.
export const DOOR = { view: 'grid', text: SENTENCE, focus: '她', words: SENTENCE_WORDS, note: 'lesson.multihead.door', en: SMOLLM2_DOOR };

// The seed's x: "她" [1.0, 0.1, 0.9, 0.0] was made to look like "小红" [1.0, 0.0, 1.0, 0.0].
const X = [
  [1.0, 0.0, 1.0, 0.0],
  [0.0, 1.0, 0.0, 1.0],
  [1.0, 0.1, 0.9, 0.0],
];
const HEADS = 2;
const D = 2;
const COLS = ['h0 d0', 'h0 d1', 'h1 d0', 'h1 d1'];
// Head 1's position code: place p is the direction p · 90° at length 2, so a query that carries the
// place before its own meets that key head-on (score 4) and the others at right angles or opposite.
const PLACE = [
  [2, 0],
  [0, 2],
  [-2, 0],
];
const previous = (i) => PLACE[Math.max(0, i - 1)]; // 小红 has nothing before it: it looks at itself
// Head 0: the first lesson's d0 and d2; head 1: the position code.
const HEAD_Q = TOKENS.map((_, i) => [Q[i][0], Q[i][2], ...previous(i)]);
const HEAD_K = TOKENS.map((_, i) => [K[i][0], K[i][2], ...PLACE[i]]);

export function mount(root, app) {
  const fresh = () => ({ q: Float32Array.from(HEAD_Q.flat()), k: Float32Array.from(HEAD_K.flat()), v: Float32Array.from(X.flat()) });
  let m = fresh();
  const inputs = el('div', { className: 'multiples tables' });
  const heads = el('div', { className: 'multiples tables' });
  const context = el('div', {});
  const compare = el('div', { className: 'answer', dataset: { note: 'compare' } });
  const reset = el('button', { type: 'button', className: 'action secondary', on: { click: () => { m = fresh(); app.redraw(); } } }, t('lesson.reset'));
  root.append(
    ...[WORDS.bar(app)].filter(Boolean),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.multihead.inputs')), el('p', { className: 'hint' }, t('lesson.multihead.inputsNote')), inputs, reset),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.multihead.headsHeading')), el('p', { className: 'hint' }, t('lesson.multihead.noMask')), heads, compare),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.multihead.contextHeading')), context),
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    const [out, one] = await Promise.all([
      app.call('attend', { q: m.q, k: m.k, v: m.v, spec: { t: 3, s: 3, heads: HEADS, kv_heads: HEADS, d: D, causal: false } }),
      app.call('attend', { q: Float32Array.from(Q.flat()), k: Float32Array.from(K.flat()), spec: { t: 3, s: 3, d: 4, scale: 1, causal: false } }),
    ]);
    if (signal.aborted) return;
    const tokens = WORDS.list(TOKENS);
    const edit = (name) => (r, c, x) => {
      m[name][r * HEADS * D + c] = x;
      app.redraw();
    };
    inputs.replaceChildren(
      ...['q', 'k', 'v'].map((name) => matrixTable({ data: m[name], rows: 3, cols: HEADS * D, rowLabels: tokens, colLabels: COLS, editable: true, onEdit: edit(name), caption: name.toUpperCase(), corner: name.toUpperCase(), id: name })),
    );
    heads.replaceChildren(
      ...Array.from({ length: HEADS }, (_, h) => {
        const probs = out.probs.subarray(h * 9, (h + 1) * 9);
        return el(
          'figure',
          { className: 'panel-cell', dataset: { head: h } },
          el('figcaption', { className: 'panel-title' }, t('lesson.multihead.head', { h }), ' · ', t(`lesson.multihead.role${h}`)),
          matrixTable({ data: out.scores.subarray(h * 9, (h + 1) * 9), rows: 3, cols: 3, rowLabels: tokens, colLabels: tokens, scale: diverging(1), digits: 3, corner: t('stage.scores') }),
          matrixTable({ data: probs, rows: 3, cols: 3, rowLabels: tokens, colLabels: tokens, scale: sequential(0, 1), digits: 3, mark: { r: 2 }, corner: t('stage.probs') }),
          el('p', { className: 'answer' }, tokens.map((name, c) => el('span', { className: 'pair', dataset: { key: name } }, ` ${tokens[2]}→${name}: `, value(probs[6 + c], 3)))),
        );
      }),
    );
    const head0 = out.scores[6] * Math.SQRT2; // 她·小红 in head 0 before ÷ √2
    compare.replaceChildren(
      el('p', {}, t('lesson.multihead.compare', { pair: `${tokens[2]}→${tokens[0]}`, query: tokens[2], key: tokens[0], previous: tokens[1], one: fixed(one.probs[6], 3), head0: fixed(out.probs[6], 3), head1: fixed(out.probs[9 + 7], 3), score1: fixed(one.scores[6], 2), score0: fixed(head0, 2), scaled: fixed(out.scores[6], 2) })),
    );
    context.replaceChildren(
      el('p', { className: 'hint' }, t('lesson.multihead.contextNote')),
      matrixTable({ data: out.context, rows: 3, cols: HEADS * D, rowLabels: tokens, colLabels: COLS, scale: diverging(1), digits: 3, corner: t('lesson.multihead.context') }),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
    },
  };
}

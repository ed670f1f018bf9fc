// Lesson: Q·K matching (shared/seeds/000, "用代码感受 Q、K 匹配的过程"). Three tokens 小红 / 很 / 她,
// the seed's own 4-dim Q and K, scores = Q·Kᵀ with no 1/√d (the seed leaves it out here), softmax by
// row. The seed's answer: row 她 = [0.4925, 0.1277, 0.3798], so 她 → 小红 = 0.493. Clicking a score
// walks its dot product as the seed does for scores[2][0] = 0.9×0.8 + 0.1×0.2 + 0.8×0.9 + 0.0×0.1.

import { el } from '../parts/dom.js';
import { matrixTable } from '../parts/matrix_table.js';
import { value } from '../parts/value.js';
import { sequential, diverging } from '../parts/color_scale.js';
import { factor, fixed, short } from '../parts/format.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

export const TOKENS = ['小红', '很', '她'];
export const Q = [
  [0.1, 0.2, 0.3, 0.1],
  [0.0, 0.1, 0.0, 0.2],
  [0.9, 0.1, 0.8, 0.0],
];
export const K = [
  [0.8, 0.2, 0.9, 0.1],
  [0.0, 0.3, 0.1, 0.5],
  [0.7, 0.1, 0.7, 0.0],
];
const D = 4;
// The tutorial's sentence about 她 and 小红, and its words as the tutorial spaces them.
export const SENTENCE = '小明把苹果给了小红，她很开心';
export const WORDS = ['小明', '把', '苹果', '给了', '小红', '，', '她', '很', '开心'];
// The door opens the Q·K view on the pair the lesson computed by hand: Q = 她, K = 红 (of 小红), in
// the head where 她 looks at 红 the most; there the same sum runs over the model's own 32 dimensions.
export const DOOR = {
  view: 'qk',
  text: { en: SENTENCE, zh: SENTENCE },
  focus: '她',
  target: '红',
  key: true,
  words: WORDS,
  note: {
    en: 'The Q·K view opens with 她 as the query and 红 (of 小红) as the key, in the head of the built-in model where 她 looks at 红 the most. It does this lesson’s sum on the model’s own vectors: each dimension’s product, their sum, then ÷ √d, the mask and softmax, which this lesson left out.',
    zh: '“Q·K”页面打开时，Q 是“她”，K 是“红”（小红的“红”），头是内置模型里“她”最关注“红”的那个。它在模型自己的向量上做这一课的计算：逐维相乘、求和，再做这一课省掉的 ÷ √d、掩码和 softmax。',
  },
};
const DIMS = ['d0', 'd1', 'd2', 'd3'];

export function mount(root, app) {
  let q = Float32Array.from(Q.flat());
  let k = Float32Array.from(K.flat());
  let pick = { i: 2, j: 0 };
  const inputs = el('div', { className: 'multiples tables' });
  const results = el('div', { className: 'multiples tables' });
  const walk = el('div', { className: 'walk', attrs: { 'aria-live': 'polite' } });
  const answer = el('p', { className: 'answer' });
  const reset = el('button', { type: 'button', className: 'action secondary', on: { click: () => { q = Float32Array.from(Q.flat()); k = Float32Array.from(K.flat()); pick = { i: 2, j: 0 }; app.redraw(); } } }, t('lesson.reset'));
  root.append(
    el('section', { className: 'card' }, el('h3', {}, t('lesson.qk.inputs')), el('p', { className: 'hint' }, t('lesson.editHint')), inputs, reset),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.qk.results')), el('pre', { className: 'formula code' }, 'scores = Q @ Kᵀ\nattention_weights = softmax(scores, dim=-1)'), results, answer),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.qk.walkHeading')), walk),
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    const { i, j } = pick;
    const [out, dot] = await Promise.all([
      app.call('attend', { q, k, spec: { t: 3, s: 3, d: D, scale: 1, causal: false } }),
      app.call('dot', { a: q.slice(i * D, (i + 1) * D), b: k.slice(j * D, (j + 1) * D) }),
    ]);
    if (signal.aborted) return;
    const edit = (target) => (r, c, v) => {
      target[r * D + c] = v;
      app.redraw();
    };
    inputs.replaceChildren(
      matrixTable({ data: q, rows: 3, cols: D, rowLabels: TOKENS, colLabels: DIMS, editable: true, onEdit: edit(q), caption: 'Q', corner: 'Q', id: 'q' }),
      matrixTable({ data: k, rows: 3, cols: D, rowLabels: TOKENS, colLabels: DIMS, editable: true, onEdit: edit(k), caption: 'K', corner: 'K', id: 'k' }),
    );
    results.replaceChildren(
      el(
        'figure',
        { className: 'panel-cell', dataset: { matrix: 'scores' } },
        el('figcaption', { className: 'panel-title' }, t('lesson.qk.scores')),
        matrixTable({ data: out.scores, rows: 3, cols: 3, rowLabels: TOKENS, colLabels: TOKENS, scale: diverging(2), digits: 2, mark: { r: i, c: j }, onCellClick: (r, c) => { pick = { i: r, j: c }; app.redraw(); }, corner: 'Q \\ K' }),
        el('p', { className: 'hint how-to' }, t('lesson.qk.clickHint')),
      ),
      el(
        'figure',
        { className: 'panel-cell', dataset: { matrix: 'probs' } },
        el('figcaption', { className: 'panel-title' }, t('lesson.qk.probs')),
        matrixTable({ data: out.probs, rows: 3, cols: 3, rowLabels: TOKENS, colLabels: TOKENS, scale: sequential(0, 1), digits: 4, mark: { r: i }, corner: 'Q \\ K' }),
      ),
    );
    const row = out.probs.subarray(i * 3, i * 3 + 3);
    answer.replaceChildren(
      t('lesson.qk.answer', { token: TOKENS[i] }),
      ...TOKENS.flatMap((name, c) => [el('span', { className: 'pair', dataset: { key: name } }, ` ${TOKENS[i]}→${name}: `, value(row[c], 3))]),
    );
    const qi = q.subarray(i * D, (i + 1) * D);
    const kj = k.subarray(j * D, (j + 1) * D);
    walk.replaceChildren(
      el('p', {}, t('lesson.qk.walk', { i, j, qi: TOKENS[i], kj: TOKENS[j] })),
      el(
        'pre',
        { className: 'formula walk-formula' },
        `scores[${i}][${j}] = ${Array.from(qi, (v, n) => `${factor(short(v), v)}×${factor(short(kj[n]), kj[n])}`).join(' + ')}\n`,
        `${' '.repeat(`scores[${i}][${j}] `.length)}= ${Array.from(dot.terms, (v) => factor(short(v), v)).join(' + ')}\n`,
        `${' '.repeat(`scores[${i}][${j}] `.length)}= `,
        value(dot.sum, 2),
      ),
      el('p', { className: 'hint' }, t('lesson.qk.walkNote', { score: fixed(out.scores[i * 3 + j], 2) })),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
    },
  };
}

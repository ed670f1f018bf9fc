// Lesson: Q·K matching (shared/seeds/000, "用代码感受 Q、K 匹配的过程"). Three tokens 小红 / 很 / 她,
// the seed's own 4-dim Q and K, scores = Q·Kᵀ with no 1/√d (the seed leaves it out here), softmax by
// row. The seed's answer: row 她 = [0.4925, 0.1277, 0.3798], so 她 → 小红 = 0.493. Clicking a score
// walks its dot product as the seed does for scores[2][0] = 0.9×0.8 + 0.1×0.2 + 0.8×0.9 + 0.0×0.1.
// An English reader reads the same numbers as Mary / very / she (words.js).

import { el } from '../parts/dom.js';
import { matrixTable } from '../parts/matrix_table.js';
import { value } from '../parts/value.js';
import { sequential, diverging } from '../parts/color_scale.js';
import { factor, fixed, short } from '../parts/format.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';
import { lessonWords } from './words.js';

export const TOKENS = ['小红', '很', '她'];
// 小红 is a girl's name, 她 "she": Mary and she keep the lesson's point (she attends to Mary most).
export const PAIRS = [
  ['小红', 'Mary'],
  ['很', 'very'],
  ['她', 'she'],
];
export const WORDS = lessonWords(PAIRS);
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
export const SENTENCE_WORDS = ['小明', '把', '苹果', '给了', '小红', '，', '她', '很', '开心'];
// The same sentence in English for an English reader's door, on SmolLM2 (a model trained on English;
// the built-in model learned mostly Chinese): its tokens as SmolLM2's tokenizer cuts them (no BOS),
// and the head where " she" puts the most weight on " Mary" in it, as measured on SmolLM2
// (tests/e2e/lessons.test.mjs measures both again). That head tells the pronouns apart: with " he" in
// place of " she" its weight moves from " Mary" to "John".
export const SENTENCE_EN = 'John gave Mary the apple, and she was very happy.';
export const SMOLLM2_DOOR = {
  model: 'smollm2',
  text: SENTENCE_EN,
  pieces: ['John', ' gave', ' Mary', ' the', ' apple', ',', ' and', ' she', ' was', ' very', ' happy', '.'],
  words: ['John', 'gave', 'Mary', 'the', 'apple', ',', 'and', 'she', 'was', 'very', 'happy', '.'],
  focus: ' she',
  target: ' Mary',
  layer: 15,
  head: 7,
};
// The door opens the Q·K view on the pair the lesson computed by hand: Q = 她, K = 红 (of 小红), in
// the head where 她 looks at 红 the most; there the same sum runs over the model's own 32 dimensions.
export const DOOR = {
  view: 'qk',
  text: SENTENCE,
  focus: '她',
  target: '红',
  key: true,
  words: SENTENCE_WORDS,
  note: {
    en: 'The Q·K view opens with 她 as the query and 红 (of 小红) as the key, in the head of the built-in model where 她 looks at 红 the most. It does this lesson’s sum on the model’s own vectors: each dimension’s product, their sum, then ÷ √d, the mask and softmax, which this lesson left out.',
    zh: '“Q·K”页面打开时，Q 是“她”，K 是“红”（小红的“红”），头是内置模型里“她”最关注“红”的那个。它在模型自己的向量上做这一课的计算：逐维相乘、求和，再做这一课省掉的 ÷ √d、掩码和 softmax。',
  },
  en: { ...SMOLLM2_DOOR, note: 'lesson.qk.doorSmollm2' },
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
  const bar = WORDS.bar(app);
  const reset = el('button', { type: 'button', className: 'action secondary', on: { click: () => { q = Float32Array.from(Q.flat()); k = Float32Array.from(K.flat()); pick = { i: 2, j: 0 }; app.redraw(); } } }, t('lesson.reset'));
  root.append(
    ...[bar].filter(Boolean),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.qk.inputs')), el('p', { className: 'hint' }, t('lesson.editHint')), inputs, reset),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.qk.results')), el('pre', { className: 'formula code' }, 'scores = Q @ Kᵀ\nattention_weights = softmax(scores, dim=-1)'), results, answer),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.qk.walkHeading')), walk),
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    const { i, j } = pick;
    const tokens = WORDS.list(TOKENS);
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
      matrixTable({ data: q, rows: 3, cols: D, rowLabels: tokens, colLabels: DIMS, editable: true, onEdit: edit(q), caption: 'Q', corner: 'Q', id: 'q' }),
      matrixTable({ data: k, rows: 3, cols: D, rowLabels: tokens, colLabels: DIMS, editable: true, onEdit: edit(k), caption: 'K', corner: 'K', id: 'k' }),
    );
    results.replaceChildren(
      el(
        'figure',
        { className: 'panel-cell', dataset: { matrix: 'scores' } },
        el('figcaption', { className: 'panel-title' }, t('lesson.qk.scores')),
        matrixTable({ data: out.scores, rows: 3, cols: 3, rowLabels: tokens, colLabels: tokens, scale: diverging(2), digits: 2, mark: { r: i, c: j }, onCellClick: (r, c) => { pick = { i: r, j: c }; app.redraw(); }, corner: 'Q \\ K' }),
        el('p', { className: 'hint how-to' }, t('lesson.qk.clickHint')),
      ),
      el(
        'figure',
        { className: 'panel-cell', dataset: { matrix: 'probs' } },
        el('figcaption', { className: 'panel-title' }, t('lesson.qk.probs')),
        matrixTable({ data: out.probs, rows: 3, cols: 3, rowLabels: tokens, colLabels: tokens, scale: sequential(0, 1), digits: 4, mark: { r: i }, corner: 'Q \\ K' }),
      ),
    );
    const row = out.probs.subarray(i * 3, i * 3 + 3);
    answer.replaceChildren(
      t('lesson.qk.answer', { token: tokens[i] }),
      ...tokens.flatMap((name, c) => [el('span', { className: 'pair', dataset: { key: name } }, ` ${tokens[i]}→${name}: `, value(row[c], 3))]),
    );
    const qi = q.subarray(i * D, (i + 1) * D);
    const kj = k.subarray(j * D, (j + 1) * D);
    walk.replaceChildren(
      el('p', {}, t('lesson.qk.walk', { i, j, qi: tokens[i], kj: tokens[j] })),
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

// Lesson: whom does 她 mean? (shared/seeds/000, "Q、K、V 是什么": "小明 把 苹果 给了 小红 ， 她 很
// 开心"). The tutorial gives 她's match with each key as 0.05 / 0.01 / 0.80 / 0.14 and 她's result as
// 0.05×V(小明) + 0.01×V(苹果) + 0.80×V(小红) + 0.14×V(开心), with no Q or K behind them: illustrative.
// Here K reads the tutorial's descriptions as four features (人名 / 女性 / 水果 / 情绪), 她's Q looks
// for a female name, and the core computes softmax(q·Kᵀ / √4) and the weighted sum of V. Our Q is set
// so that the computed weights round to the printed ones; editing any cell recomputes, and the
// comparison says whose numbers they are. An English reader reads them as John / apple / Mary /
// happy and she (words.js): Mary is the female name, as 小红 is.

import { el } from '../parts/dom.js';
import { matrixTable } from '../parts/matrix_table.js';
import { value } from '../parts/value.js';
import { sequential, diverging } from '../parts/color_scale.js';
import { factor, fixed, short } from '../parts/format.js';
import { agrees, compareTable } from '../parts/hand_set.js';
import { t } from '../strings.js';
import { SENTENCE, SENTENCE_WORDS, SMOLLM2_DOOR } from './qk_match.js';
import { lessonWords } from './words.js';
import { latest } from '../page/latest.js';

export const KEYS = ['小明', '苹果', '小红', '开心'];
export const QUERY = '她';
export const WORDS = lessonWords([
  ['小明', 'John'],
  ['苹果', 'apple'],
  ['小红', 'Mary'],
  ['开心', 'happy'],
  ['她', 'she'],
]);
const D = 4;
const FEATURES = ['name', 'female', 'fruit', 'emotion'];
export const Q = [3.2, 5.6, 0, 5.3];
// 小明: a male name; 苹果: a fruit; 小红: a female name; 开心: an emotion word.
export const K = [
  [1, 0, 0, 0],
  [0, 0, 1, 0],
  [1, 1, 0, 0],
  [0, 0, 0, 1],
];
// V carries the same four features, so 她's result can be read off: mostly "a female name".
export const V = K;
export const PRINTED = [0.05, 0.01, 0.8, 0.14];

export const DOOR = {
  view: 'attention',
  text: SENTENCE,
  focus: '她',
  target: '红', // the door opens on the head where 她 looks at 红 (of 小红) the most
  words: SENTENCE_WORDS,
  note: {
    en: 'The attention map opens on the head of the built-in model where 她 looks at 红 (of 小红) the most, with the row of 她 outlined as the query. Under the map are the five words 她 weighs most, each beside the head that makes 她 look at it most. A small trained model has no head that does only this; the tutorial’s 0.80 is a picture of the idea.',
    zh: '注意力图打开的是内置模型里“她”最关注“红”（小红的“红”）的那个头，“她”这一行已作为 Q（查询）框出。图下方列出“她”最看重的 5 个词，每个词旁边是让“她”最关注它的那个头。小模型没有专门只做这件事的头；教程里的 0.80 是示意。',
  },
  en: { ...SMOLLM2_DOOR, note: 'lesson.who.doorSmollm2' },
};

export function mount(root, app) {
  let q = Float32Array.from(Q);
  let k = Float32Array.from(K.flat());
  let v = Float32Array.from(V.flat());
  const features = FEATURES.map((f) => t(`lesson.who.feature.${f}`));
  const inputs = el('div', { className: 'multiples tables' });
  const results = el('div', { className: 'multiples tables' });
  const comparison = el('div', {});
  const sum = el('div', { className: 'walk', attrs: { 'aria-live': 'polite' } });
  const reset = el('button', { type: 'button', className: 'action secondary', on: { click: () => { q = Float32Array.from(Q); k = Float32Array.from(K.flat()); v = Float32Array.from(V.flat()); app.redraw(); } } }, t('lesson.reset'));
  root.append(
    ...[WORDS.bar(app)].filter(Boolean),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.who.inputs')), el('p', { className: 'hint' }, t('lesson.who.inputsNote')), inputs, reset),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.who.results')), el('pre', { className: 'formula' }, 'Attention(Q, K, V) = softmax(Q × Kᵀ / √d) × V'), results),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.who.compareHeading')), comparison),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.who.sumHeading')), sum),
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    const out = await app.call('attend', { q, k, v, spec: { t: 1, s: KEYS.length, d: D, causal: false } });
    if (signal.aborted) return;
    const keys = WORDS.list(KEYS);
    const query = WORDS.of(QUERY);
    const edit = (target) => (r, c, x) => {
      target[r * D + c] = x;
      app.redraw();
    };
    inputs.replaceChildren(
      matrixTable({ data: q, rows: 1, cols: D, rowLabels: [query], colLabels: features, editable: true, onEdit: edit(q), caption: t('lesson.who.q'), corner: 'Q', id: 'q' }),
      matrixTable({ data: k, rows: KEYS.length, cols: D, rowLabels: keys, colLabels: features, editable: true, onEdit: edit(k), caption: t('lesson.who.k'), corner: 'K', id: 'k' }),
      matrixTable({ data: v, rows: KEYS.length, cols: D, rowLabels: keys, colLabels: features, editable: true, onEdit: edit(v), caption: t('lesson.who.v'), corner: 'V', id: 'v' }),
    );
    results.replaceChildren(
      el('figure', { className: 'panel-cell', dataset: { matrix: 'scaled' } }, el('figcaption', { className: 'panel-title' }, t('lesson.who.scaled')), matrixTable({ data: out.scores, rows: 1, cols: KEYS.length, rowLabels: [query], colLabels: keys, scale: diverging(5), digits: 2, corner: 'Q \\ K' })),
      el('figure', { className: 'panel-cell', dataset: { matrix: 'probs' } }, el('figcaption', { className: 'panel-title' }, t('lesson.who.probs')), matrixTable({ data: out.probs, rows: 1, cols: KEYS.length, rowLabels: [query], colLabels: keys, scale: sequential(0, 1), digits: 3, corner: 'Q \\ K' })),
      el('figure', { className: 'panel-cell', dataset: { matrix: 'context' } }, el('figcaption', { className: 'panel-title' }, t('lesson.who.context')), matrixTable({ data: out.context, rows: 1, cols: D, rowLabels: [query], colLabels: features, scale: sequential(0, 1), digits: 3, corner: '' })),
    );
    const edited = [[q, Q], [k, K.flat()], [v, V.flat()]].some(([now, set]) => now.some((x, n) => x !== Math.fround(set[n])));
    const match = agrees(PRINTED, out.probs, 2);
    const verdict = edited ? 'yours' : match ? 'agrees' : 'illustrative';
    comparison.replaceChildren(
      el('p', { className: 'hint' }, t('lesson.who.compareNote')),
      compareTable({
        rows: [{ label: query, printed: PRINTED, computed: out.probs, verdict, agrees: match }],
        digits: 2,
        text: { row: t('lesson.causal.row'), printed: t('lesson.causal.printed'), computed: t('lesson.who.computed'), verdict: (x) => t(x === 'agrees' ? 'lesson.who.agrees' : `lesson.causal.${x}`) },
      }),
    );
    const top = out.probs.indexOf(Math.max(...out.probs));
    sum.replaceChildren(
      el(
        'pre',
        // On a phone the sum wraps between its terms (style.css .walk-terms), never inside one: its
        // last term, 0.802×V[小红], is the lesson's answer and must not be cut at the edge.
        { className: 'formula walk-formula walk-terms' },
        `output[${query}] = `,
        ...keys.flatMap((name, j) => [j ? ' + ' : '', el('span', { className: 'walk-term' }, `${factor(fixed(out.probs[j], 3), out.probs[j])}×V[${name}]`)]),
        '\n',
        `${' '.repeat(`output[${query}] `.length)}= `,
        '[',
        ...Array.from(out.context, (x, n) => [n ? ', ' : '', value(x, 3)]).flat(),
        ']',
      ),
      el('p', { className: 'answer', dataset: { top: keys[top] } }, t('lesson.who.answer', { query, token: keys[top], w: short(out.probs[top]), name: WORDS.of('小红') })),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
    },
  };
}

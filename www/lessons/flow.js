// Lesson: the Self-Attention 流程 (shared/seeds/000, section 3), step by step as the tutorial walks it:
// Q·Kᵀ → ÷ √d → softmax → weights × V for 小红 / 很 / 她 with d = 4. The tutorial prints its step-2
// scores and step-4 weights without any Q or K (0.65 / 0.10 / 0.25 for 她): both illustrative. Our
// hand-set Q and K give exactly its printed scores, so the computed softmax can stand beside its
// printed weights. Then "为什么输入相近的向量不一定最关注": the tutorial's own x, where 她 is
// close to 小红, goes through hand-set W_Q and W_K first; the matching happens between q and k, not
// between the inputs. Every product is the core's (attend; x @ W through parts/hand_set.js).
// An English reader reads them as Mary / very / she (words.js).

import { el } from '../parts/dom.js';
import { matrixTable } from '../parts/matrix_table.js';
import { value } from '../parts/value.js';
import { sequential, diverging } from '../parts/color_scale.js';
import { factor, fixed } from '../parts/format.js';
import { agrees, compareTable, matmul } from '../parts/hand_set.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';
import { lessonWords } from './words.js';
import { PAIRS } from './qk_match.js';

export const TOKENS = ['小红', '很', '她'];
export const WORDS = lessonWords(PAIRS);
const N = TOKENS.length;
const D = 4;
const DIMS = ['d0', 'd1', 'd2', 'd3'];
// Set so that Q·Kᵀ is the tutorial's step-2 matrix exactly.
export const Q = [
  [1, 0, 0, 0],
  [0, 0.5, 0, 0],
  [1, 0, 0, 1],
];
export const K = [
  [0.8, 0.4, 0.3, 0.1],
  [0.1, 1, 0.9, 0],
  [0.3, 0.2, 0.4, 0.4],
];
export const V = [
  [1, 0, 1, 0],
  [0, 1, 0, 1],
  [1, 0.1, 0.9, 0],
];
// The tutorial's printed step 2 (scores) and step 4 (attention weights).
export const PRINTED_SCORES = [
  [0.8, 0.1, 0.3],
  [0.2, 0.5, 0.1],
  [0.9, 0.1, 0.7],
];
export const PRINTED_WEIGHTS = [
  [0.5, 0.2, 0.3],
  [0.25, 0.5, 0.25],
  [0.65, 0.1, 0.25],
];
// The tutorial's x ("她" made close to "小红"); W_Q keeps each dimension, W_K swaps d0↔d1 and d2↔d3.
export const X = V;
export const W_Q = [
  [1, 0, 0, 0],
  [0, 1, 0, 0],
  [0, 0, 1, 0],
  [0, 0, 0, 1],
];
export const W_K = [
  [0, 1, 0, 0],
  [1, 0, 0, 0],
  [0, 0, 0, 1],
  [0, 0, 1, 0],
];
const SHE = 2;

// 小红 after 今天: the head where 她 looks at 红 most keeps to 红 wherever it stands, and 红 at
// position 2 (right after <|im_start|> and 小) would leave the reader unsure whether it only rests there.
const DOOR_SENTENCE = '今天小红很开心，她很好';
// In English, on SmolLM2 (qk_match.js says why): Mary after two words, for the same reason, and the
// head where " she" looks at " Mary" the most in it, as measured (tests/e2e/lessons.test.mjs again).
const SENTENCE_EN = 'This morning Mary was very happy, and she was well.';
export const DOOR = {
  view: 'attention',
  text: DOOR_SENTENCE,
  focus: '她',
  target: '红', // the door opens on the head where 她 looks at 红 (of 小红) the most
  words: ['今天', '小红', '很', '开心', '，', '她', '很', '好'],
  note: {
    en: 'The attention map opens on the row of 她: the built-in model runs the same five steps in every head, with learned W_Q, W_K and W_V, d = its head_dim, and a causal mask.',
    zh: '注意力图会选中“她”这一行：内置 MiniMind 的每个注意力头都走同样的五步，只是 W_Q、W_K、W_V 是训练出来的，d 是它的 head_dim，并且加了因果掩码。',
  },
  en: {
    model: 'smollm2',
    text: SENTENCE_EN,
    pieces: ['This', ' morning', ' Mary', ' was', ' very', ' happy', ',', ' and', ' she', ' was', ' well', '.'],
    words: ['This', 'morning', 'Mary', 'was', 'very', 'happy', ',', 'and', 'she', 'was', 'well', '.'],
    focus: ' she',
    target: ' Mary',
    layer: 13,
    head: 8,
    note: 'lesson.flow.doorSmollm2',
  },
};

const fresh = () => ({ q: Q, k: K, v: V, x: X, wq: W_Q, wk: W_K });

export function mount(root, app) {
  let m = Object.fromEntries(Object.entries(fresh()).map(([name, rows]) => [name, Float32Array.from(rows.flat())]));
  const step1 = el('div', { className: 'multiples tables' });
  const step2 = el('div', {});
  const step3 = el('div', {});
  const step4 = el('div', {});
  const step5 = el('div', {});
  const projInputs = el('div', { className: 'multiples tables' });
  const projOut = el('div', { className: 'multiples tables' });
  const closeness = el('div', {});
  const resetAll = () => {
    m = Object.fromEntries(Object.entries(fresh()).map(([name, rows]) => [name, Float32Array.from(rows.flat())]));
    app.redraw();
  };
  const reset = () => el('button', { type: 'button', className: 'action secondary', on: { click: resetAll } }, t('lesson.reset'));
  const step = (n, body, formula) => el('section', { className: 'card', dataset: { step: n } }, el('h3', {}, t(`lesson.flow.step${n}`)), formula && el('pre', { className: 'formula' }, formula), body);
  root.append(
    ...[WORDS.bar(app)].filter(Boolean),
    el('section', { className: 'card', dataset: { step: 1 } }, el('h3', {}, t('lesson.flow.step1')), el('p', { className: 'hint' }, t('lesson.flow.step1Note')), step1, reset()),
    step(2, step2, 'scores = Q @ K^T        # [3, 4] × [4, 3] = [3, 3]'),
    step(3, step3, 'scores = scores / √4 = scores / 2'),
    step(4, step4, 'attention_weights = softmax(scores)'),
    step(5, step5, 'output = attention_weights @ V        # [3, 3] × [3, 4] = [3, 4]'),
    el(
      'section',
      { className: 'card', dataset: { part: 'close-inputs' } },
      el('h3', {}, t('lesson.flow.closeHeading')),
      el('p', { className: 'hint' }, t('lesson.flow.closeNote')),
      projInputs,
      el('pre', { className: 'formula' }, 'Q = x @ W_Q        K = x @ W_K'),
      projOut,
      closeness,
      reset(),
    ),
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    const spec = { t: N, s: N, d: D, causal: false };
    const [raw, out, pq, pk, gram] = await Promise.all([
      app.call('attend', { q: m.q, k: m.k, spec: { ...spec, scale: 1 } }),
      app.call('attend', { q: m.q, k: m.k, v: m.v, spec }),
      matmul(app, m.x, N, D, m.wq, D),
      matmul(app, m.x, N, D, m.wk, D),
      app.call('attend', { q: m.x, k: m.x, spec: { ...spec, scale: 1 } }),
    ]);
    const [projRaw, proj] = await Promise.all([app.call('attend', { q: pq, k: pk, spec: { ...spec, scale: 1 } }), app.call('attend', { q: pq, k: pk, spec })]);
    if (signal.aborted) return;
    const tokens = WORDS.list(TOKENS);
    const edit = (name, cols) => (r, c, x) => {
      m[name][r * cols + c] = x;
      app.redraw();
    };
    const input = (name, rows, rowLabels, caption) => matrixTable({ data: m[name], rows, cols: D, rowLabels, colLabels: DIMS, editable: true, onEdit: edit(name, D), caption, corner: caption, id: name });
    const shown = (data, key, opts) => el('figure', { className: 'panel-cell', dataset: { matrix: key } }, matrixTable({ data, rows: N, cols: N, rowLabels: tokens, colLabels: tokens, corner: 'Q \\ K', ...opts }));
    const rowsOf = (data) => Array.from({ length: N }, (_, r) => data.subarray(r * N, r * N + N));
    const edited = (names) => names.some((name) => m[name].some((x, n) => x !== Math.fround(fresh()[name].flat()[n])));
    const verdictText = (x) => t(`lesson.causal.${x}`);
    const compare = (printed, computed, digits, scoresEdited) =>
      compareTable({
        rows: printed.map((row, r) => {
          const match = agrees(row, computed[r], digits);
          return { label: tokens[r], printed: row, computed: computed[r], verdict: scoresEdited ? 'yours' : match ? 'agrees' : 'illustrative', agrees: match };
        }),
        digits,
        text: { row: t('lesson.causal.row'), printed: t('lesson.causal.printed'), computed: t('lesson.flow.computed'), verdict: verdictText },
      });
    const qkEdited = edited(['q', 'k']);

    step1.replaceChildren(input('q', N, tokens, 'Q'), input('k', N, tokens, 'K'), input('v', N, tokens, 'V'));
    step2.replaceChildren(
      el('div', { className: 'multiples tables' }, shown(raw.scores, 'scores', { scale: diverging(1), digits: 2 })),
      el('p', { className: 'hint' }, t('lesson.flow.step2Note')),
      el('div', { dataset: { compare: 'scores' } }, compare(PRINTED_SCORES, rowsOf(raw.scores), 1, qkEdited)),
    );
    step3.replaceChildren(el('div', { className: 'multiples tables' }, shown(out.scores, 'scaled', { scale: diverging(1), digits: 3 })));
    step4.replaceChildren(
      el('div', { className: 'multiples tables' }, shown(out.probs, 'probs', { scale: sequential(0, 1), digits: 3, mark: { r: SHE } })),
      el('p', { className: 'hint' }, t('lesson.flow.step4Note')),
      el('div', { dataset: { compare: 'weights' } }, compare(PRINTED_WEIGHTS, rowsOf(out.probs), 2, qkEdited)),
    );
    const w = out.probs.subarray(SHE * N, SHE * N + N);
    step5.replaceChildren(
      el('div', { className: 'multiples tables' }, el('figure', { className: 'panel-cell', dataset: { matrix: 'context' } }, matrixTable({ data: out.context, rows: N, cols: D, rowLabels: tokens, colLabels: DIMS, scale: sequential(0, 1), digits: 3, mark: { r: SHE } }))),
      el(
        'pre',
        // On a phone the sum wraps between its terms (style.css .walk-terms), as lesson 2's does:
        // its last term must not be cut at the edge.
        { className: 'formula walk-formula walk-terms' },
        `output[${tokens[SHE]}] = `,
        ...tokens.flatMap((name, j) => [j ? ' + ' : '', el('span', { className: 'walk-term' }, `${factor(fixed(w[j], 3), w[j])} × V[${name}]`)]),
        '\n',
        `${' '.repeat(`output[${tokens[SHE]}] `.length)}= [`,
        ...Array.from(out.context.subarray(SHE * D, SHE * D + D), (x, n) => [n ? ', ' : '', value(x, 3)]).flat(),
        ']',
      ),
      el('p', { className: 'hint' }, t('lesson.flow.step5Note', { printed: PRINTED_WEIGHTS[SHE].map((p) => p.toFixed(2)).join(' / '), computed: Array.from(w, (p) => fixed(p, 3)).join(' / ') })),
    );

    projInputs.replaceChildren(input('x', N, tokens, 'x'), matrixTable({ data: m.wq, rows: D, cols: D, rowLabels: DIMS, colLabels: DIMS, editable: true, onEdit: edit('wq', D), caption: 'W_Q', corner: 'W_Q', id: 'wq' }), matrixTable({ data: m.wk, rows: D, cols: D, rowLabels: DIMS, colLabels: DIMS, editable: true, onEdit: edit('wk', D), caption: 'W_K', corner: 'W_K', id: 'wk' }));
    projOut.replaceChildren(
      el('figure', { className: 'panel-cell', dataset: { matrix: 'xq' } }, matrixTable({ data: pq, rows: N, cols: D, rowLabels: tokens, colLabels: DIMS, scale: diverging(1), digits: 2, caption: 'Q', corner: 'Q' })),
      el('figure', { className: 'panel-cell', dataset: { matrix: 'xk' } }, matrixTable({ data: pk, rows: N, cols: D, rowLabels: tokens, colLabels: DIMS, scale: diverging(1), digits: 2, caption: 'K', corner: 'K' })),
    );
    // cos(x_i, x_j) from the core's Gram matrix x·xᵀ: G_ij / √(G_ii · G_jj).
    const G = gram.scores;
    const cos = (i, j) => G[i * N + j] / Math.sqrt(G[i * N + i] * G[j * N + j]);
    const others = tokens.map((_, j) => j).filter((j) => j !== SHE);
    const closest = others.reduce((a, b) => (cos(SHE, b) > cos(SHE, a) ? b : a));
    const wp = proj.probs.subarray(SHE * N, SHE * N + N);
    const most = wp.indexOf(Math.max(...wp));
    closeness.replaceChildren(
      el(
        'table',
        { className: 'data-table close-table' },
        el('thead', {}, el('tr', {}, [t('lesson.flow.key'), t('lesson.flow.cos'), t('lesson.flow.qk'), t('lesson.flow.weight')].map((c) => el('th', { attrs: { scope: 'col' } }, c)))),
        el(
          'tbody',
          {},
          tokens.map((name, j) =>
            el(
              'tr',
              { dataset: { key: name } },
              el('th', { attrs: { scope: 'row' } }, `${tokens[SHE]} → ${name}`),
              el('td', { dataset: { col: 'cos' } }, Number.isFinite(cos(SHE, j)) ? value(cos(SHE, j), 3) : t('lesson.flow.zeroVector')),
              el('td', { dataset: { col: 'qk' } }, value(projRaw.scores[SHE * N + j], 2)),
              el('td', { dataset: { col: 'weight' } }, value(wp[j], 3)),
            ),
          ),
        ),
      ),
      el('p', { className: 'answer', dataset: { closest: tokens[closest], most: tokens[most] } }, t(closest === most ? 'lesson.flow.closeSame' : 'lesson.flow.closeDiffer', { query: tokens[SHE], close: tokens[closest], most: tokens[most] })),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
    },
  };
}

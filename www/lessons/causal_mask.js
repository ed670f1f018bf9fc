// Lesson: the causal mask (shared/seeds/000, section 4: "今天 天气 很 好"). The seed's masked scores
// are the lower triangle here; the cells above the diagonal are not printed in the seed (they are
// masked anyway) and are filled with numbers of the same size, so that turning the mask off shows the
// leak. The core adds −∞ above the diagonal and takes the softmax by row. The seed prints
// illustrative weights for two rows (很: [0.24, 0.47, 0.29] where the real softmax of [0.3, 0.7, 0.4]
// is [0.278, 0.415, 0.307]); the table sets each printed row beside the computed one and says which.
// A row is compared with the tutorial only while it is the tutorial's: the mask on and the scores it
// uses (those up to the diagonal) as printed; a row the reader edited says "your numbers".
// The lesson's mask switch is its own and is the only one shown in the lesson: the model panel's
// causal switch is for the sentence's run (style.css hides it on Lessons).
// The tutorial's boolean mask (True = cannot see) is read off the core's masked scores, and its
// 信息泄露 is the same scores' softmax without the mask, whatever the switch says. An English reader
// reads the sentence as "The weather is good" (words.js): four words, each seeing only those before it.

import { el } from '../parts/dom.js';
import { matrixTable } from '../parts/matrix_table.js';
import { bars } from '../parts/bars.js';
import { sequential, diverging } from '../parts/color_scale.js';
import { fixed } from '../parts/format.js';
import { agrees, compareTable } from '../parts/hand_set.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';
import { lessonWords } from './words.js';

export const TOKENS = ['今天', '天气', '很', '好'];
// 今天 天气 很 好 is "today the weather is good"; four English tokens keep one word per token.
export const PAIRS = [
  ['今天', 'The'],
  ['天气', 'weather'],
  ['很', 'is'],
  ['好', 'good'],
];
export const WORDS = lessonWords(PAIRS);
// Lower triangle: the seed's "scores（掩码后）"; upper triangle: ours, masked in the seed.
export const SCORES = [
  [0.8, 0.1, 0.4, 0.3],
  [0.5, 0.6, 0.2, 0.5],
  [0.3, 0.7, 0.4, 0.6],
  [0.2, 0.5, 0.3, 0.8],
];
// The seed's "经过 softmax" rows, as printed.
const PRINTED = [
  [1.0, 0.0, 0.0, 0.0],
  [0.47, 0.53, 0.0, 0.0],
  [0.24, 0.47, 0.29, 0.0],
  [0.13, 0.27, 0.22, 0.38],
];
const N = TOKENS.length;
// The tutorial's sentence, written as the model reads text (its spaces only separate the words); in
// English on the built-in model too (a mask is the same whatever the model learned), the words spaced.
export const DOOR = { view: 'masks', text: '今天天气很好', words: TOKENS, note: 'lesson.causal.door', en: { text: 'The weather is good', words: PAIRS.map(([, en]) => en) } };

export function mount(root, app) {
  let scores = Float32Array.from(SCORES.flat());
  let causal = true;
  const causalBox = el('input', { type: 'checkbox', id: 'lesson-causal', checked: true, attrs: { 'aria-describedby': 'lesson-causal-note' }, on: { change: () => { causal = causalBox.checked; app.redraw(); } } });
  const inputs = el('div', {});
  const results = el('div', { className: 'multiples tables' });
  const comparison = el('div', {});
  const tiny = el('div', {});
  const boolMask = el('div', {});
  const leak = el('div', {});
  const reset = el('button', { type: 'button', className: 'action secondary', on: { click: () => { scores = Float32Array.from(SCORES.flat()); app.redraw(); } } }, t('lesson.reset'));
  root.append(
    ...[WORDS.bar(app)].filter(Boolean),
    el(
      'section',
      { className: 'card' },
      el('h3', {}, t('lesson.causal.inputs')),
      el('p', { className: 'hint' }, t('lesson.causal.inputsNote')),
      inputs,
      el('div', { className: 'toolbar' }, el('label', { className: 'switch' }, causalBox, el('span', {}, t('lesson.causal.switch'))), reset),
      el('p', { className: 'hint', id: 'lesson-causal-note' }, t('lesson.causal.switchNote')),
    ),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.causal.results')), el('pre', { className: 'formula code' }, `mask = torch.triu(torch.ones(4, 4), diagonal=1).bool()\nscores = scores.masked_fill(mask, float('-inf'))\n${t('lesson.causal.minimindWay')}\n# scores = scores + torch.full((4, 4), float('-inf')).triu(1)\nweights = F.softmax(scores, dim=-1)`), results),
    el('section', { className: 'card', dataset: { part: 'bool-mask' } }, el('h3', {}, t('lesson.causal.boolHeading')), el('pre', { className: 'formula code' }, 'mask = torch.triu(torch.ones(4, 4), diagonal=1).bool()'), el('p', { className: 'hint' }, t('lesson.causal.boolNote')), boolMask),
    el('section', { className: 'card', dataset: { part: 'leak' } }, el('h3', {}, t('lesson.causal.leakHeading')), el('p', { className: 'hint' }, t('lesson.causal.leakNote')), leak),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.causal.compareHeading')), comparison),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.causal.tinyHeading')), tiny),
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    // softmax([1, 2, −∞]): the third key is in the future of a query at position 1.
    // The mask and the leak are the same scores with the mask on and off, whatever the switch says.
    const [on, off, small] = await Promise.all([
      app.call('softmax', { scores, spec: { t: N, s: N, causal: true } }),
      app.call('softmax', { scores, spec: { t: N, s: N, causal: false } }),
      app.call('softmax', { scores: Float32Array.of(1, 2, 3), spec: { t: 1, s: 3, causal: true, prefix_len: 1 } }),
    ]);
    if (signal.aborted) return;
    const tokens = WORDS.list(TOKENS);
    const out = causal ? on : off;
    inputs.replaceChildren(
      matrixTable({ data: scores, rows: N, cols: N, rowLabels: tokens, colLabels: tokens, editable: true, corner: 'Q \\ K', id: 'scores', onEdit: (r, c, v) => { scores[r * N + c] = v; app.redraw(); } }),
    );
    results.replaceChildren(
      el('figure', { className: 'panel-cell', dataset: { matrix: 'masked' } }, el('figcaption', { className: 'panel-title' }, t('lesson.causal.masked')), matrixTable({ data: out.masked, rows: N, cols: N, rowLabels: tokens, colLabels: tokens, scale: diverging(1), digits: 1, corner: 'Q \\ K' })),
      el('figure', { className: 'panel-cell', dataset: { matrix: 'probs' } }, el('figcaption', { className: 'panel-title' }, t('lesson.causal.probs')), matrixTable({ data: out.probs, rows: N, cols: N, rowLabels: tokens, colLabels: tokens, scale: sequential(0, 1), digits: 3, corner: 'Q \\ K' })),
    );
    // Row r of the masked softmax reads scores r[0..r]; without the mask, the whole row.
    const edited = (r) => scores.subarray(r * N, r * N + (causal ? r + 1 : N)).some((v, c) => v !== Math.fround(SCORES[r][c]));
    const verdicts = PRINTED.map((row, r) => agrees(row, out.probs.subarray(r * N, r * N + N), 2));
    const verdict = (r) => (!causal ? 'maskOff' : edited(r) ? 'yours' : verdicts[r] ? 'agrees' : 'illustrative');
    comparison.replaceChildren(
      el('p', { className: 'hint' }, t(PRINTED.every((_, r) => ['agrees', 'illustrative'].includes(verdict(r))) ? 'lesson.causal.compareNote' : 'lesson.causal.compareOff')),
      compareTable({
        rows: PRINTED.map((printed, r) => ({ label: tokens[r], printed, computed: out.probs.subarray(r * N, r * N + N), verdict: verdict(r), agrees: verdicts[r] })),
        digits: 2,
        text: { row: t('lesson.causal.row'), printed: t('lesson.causal.printed'), computed: t('lesson.causal.computed'), verdict: (v) => t(`lesson.causal.${v}`) },
      }),
    );
    // True wherever the core put −∞: the mask read off the computation, not drawn by the page.
    boolMask.replaceChildren(
      matrixTable({ data: on.masked, rows: N, cols: N, rowLabels: tokens, colLabels: tokens, corner: 'Q \\ K', cellText: (v) => (v === -Infinity ? 'True' : 'False') }),
    );
    const future = (r, c) => c > r;
    leak.replaceChildren(
      el('figure', { className: 'panel-cell', dataset: { matrix: 'leak' } }, matrixTable({ data: off.probs, rows: N, cols: N, rowLabels: tokens, colLabels: tokens, scale: sequential(0, 1), digits: 3, corner: 'Q \\ K', cellClass: (r, c) => (future(r, c) ? 'leaked' : '') })),
      el(
        'ul',
        { className: 'leak-rows' },
        tokens.slice(0, N - 1).map((token, r) => {
          const w = off.probs.subarray(r * N + r + 1, r * N + N).reduce((a, b) => a + b, 0);
          return el('li', { dataset: { row: r, leak: String(w) } }, t('lesson.causal.leakRow', { token, w: fixed(w, 3) }));
        }),
      ),
    );
    tiny.replaceChildren(
      el('p', { className: 'hint' }, t('lesson.causal.tinyNote')),
      el('pre', { className: 'formula' }, `F.softmax(torch.tensor([1.0, 2.0, float('-inf')]), dim=0)`),
      bars(
        Array.from(small.masked, (v, c) => ({ label: fixed(v, 1), value: small.probs[c] })),
        { label: t('lesson.causal.tinyHeading'), digits: 2 },
      ),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
    },
  };
}

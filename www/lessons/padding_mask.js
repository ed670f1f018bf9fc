// Lesson: padding mask versus causal mask (shared/seeds/002, section 7). A batch pads the shorter
// sentence; MiniMind's attention_mask (1 = real, 0 = padding) adds (1 − mask) · −1e9 to the padding
// keys' scores, while the causal mask adds −∞ to future keys. The sentence of the causal lesson with
// one padding token, left (as batched generation pads) or right: the core runs each mask alone and
// both together, and the lesson measures how much attention real tokens still give to padding.
// An English reader reads the causal lesson's English words (words.js).

import { el } from '../parts/dom.js';
import { matrixTable } from '../parts/matrix_table.js';
import { value } from '../parts/value.js';
import { gap } from '../parts/format.js';
import { sequential, diverging } from '../parts/color_scale.js';
import { TOKENS as SENTENCE, SCORES as REAL, PAIRS, DOOR as CAUSAL_DOOR } from './causal_mask.js';
import { lessonWords } from './words.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

const PAD = '<pad>';
// Padding tokens are often nothing like real ones; a large raw score makes their pull visible.
const PAD_SCORE = 0.9;
export const WORDS = lessonWords(PAIRS);
const N = SENTENCE.length + 1;
const MODES = ['causal', 'padding', 'both'];
// The same sentence without the spaces: four tokens, one per word, as in the lesson.
// The door pads the sentence as MiniMind's batched generation does: its padding token, then BOS,
// typed into the text with the page's own BOS off, and the padding marked 0 (pad: [0]).
const PADDED = `<|endoftext|><|im_start|>${SENTENCE.join('')}`;
export const DOOR = {
  view: 'masks',
  text: PADDED,
  fields: { bos: false, pad: [0] },
  words: SENTENCE,
  note: 'lesson.padding.door',
  // In English the causal lesson's English sentence, padded alike.
  en: { text: `<|endoftext|><|im_start|>${CAUSAL_DOOR.en.text}`, words: CAUSAL_DOOR.en.words },
};

// The sentence with its padding token first (left) or last (right): tokens, mask and scores.
function layout(side) {
  const pad = side === 'left' ? 0 : N - 1;
  const word = (i) => (side === 'left' ? i - 1 : i);
  return {
    tokens: Array.from({ length: N }, (_, i) => (i === pad ? PAD : SENTENCE[word(i)])),
    mask: Array.from({ length: N }, (_, i) => (i === pad ? 0 : 1)),
    scores: Float32Array.from({ length: N * N }, (_, at) => {
      const [i, j] = [Math.floor(at / N), at % N];
      return i === pad || j === pad ? PAD_SCORE : REAL[word(i)][word(j)];
    }),
  };
}

// Whether the padding row sees nothing but masked keys: each of its scores −∞ (the future) or
// −1e9 plus a score (padding).
function allMasked(masked, pad) {
  return masked.subarray(pad * N, (pad + 1) * N).every((v) => v < -1e8);
}

export function mount(root, app) {
  let side = 'left';
  let data = layout(side);
  const sides = ['left', 'right'].map((s) => el('button', { type: 'button', className: 'segment', dataset: { side: s }, on: { click: () => { side = s; data = layout(side); app.redraw(); } } }, t(`lesson.padding.${s}`)));
  const inputs = el('div', {});
  const results = el('div', { className: 'multiples tables' });
  // With the padding on the right, after every real token, all three panels agree: said why.
  const sideNote = el('p', { className: 'hint', dataset: { note: 'side' } });
  root.append(
    ...[WORDS.bar(app)].filter(Boolean),
    el(
      'section',
      { className: 'card' },
      el('h3', {}, t('lesson.padding.inputs')),
      el('div', { className: 'toolbar' }, el('div', { className: 'segmented', attrs: { role: 'group', 'aria-label': t('lesson.padding.side') } }, sides)),
      el('p', { className: 'hint' }, t('lesson.padding.inputsNote')),
      inputs,
    ),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.padding.results')), el('pre', { className: 'formula code' }, `${t('lesson.padding.codeCausal')}\nscores += triu(full(T, T, -inf), 1)\n${t('lesson.padding.codePadding')}\nscores += (1.0 - attention_mask) * -1e9`), results, sideNote),
    el(
      'section',
      { className: 'card' },
      el('h3', {}, t('lesson.padding.tableHeading')),
      el(
        'table',
        { className: 'data-table' },
        el('thead', {}, el('tr', {}, el('th', { attrs: { scope: 'col' } }, t('lesson.padding.mask')), el('th', { attrs: { scope: 'col' } }, t('lesson.padding.purpose')))),
        el('tbody', {}, el('tr', {}, el('th', { attrs: { scope: 'row' } }, t('lesson.padding.causalName')), el('td', {}, t('lesson.padding.causalPurpose'))), el('tr', {}, el('th', { attrs: { scope: 'row' } }, 'attention_mask'), el('td', {}, t('lesson.padding.paddingPurpose')))),
      ),
    ),
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    const { mask, scores } = data;
    const tokens = WORDS.list(data.tokens);
    const specs = { causal: { causal: true }, padding: { causal: false, padding: mask }, both: { causal: true, padding: mask } };
    const outs = await Promise.all(MODES.map((m) => app.call('softmax', { scores, spec: { t: N, s: N, ...specs[m] } })));
    if (signal.aborted) return;
    for (const b of sides) b.setAttribute('aria-pressed', String(b.dataset.side === side));
    const pad = mask.indexOf(0);
    sideNote.textContent = t(`lesson.padding.${side}Note`);
    inputs.replaceChildren(
      matrixTable({ data: scores, rows: N, cols: N, rowLabels: tokens, colLabels: tokens, editable: true, corner: 'Q \\ K', id: 'scores', onEdit: (r, c, v) => { scores[r * N + c] = v; app.redraw(); } }),
      el('p', { className: 'hint' }, 'attention_mask = [', mask.join(', '), ']'),
    );
    results.replaceChildren(
      ...MODES.map((m, n) => {
        const { masked, probs } = outs[n];
        // Attention the real queries give the padding key, on average.
        const realRows = tokens.map((_, i) => i).filter((i) => mask[i]);
        const leak = realRows.reduce((s, i) => s + probs[i * N + pad], 0) / realRows.length;
        return el(
          'figure',
          { className: 'panel-cell', dataset: { mode: m } },
          el('figcaption', { className: 'panel-title' }, t(`lesson.padding.${m}`)),
          matrixTable({ data: masked, rows: N, cols: N, rowLabels: tokens, colLabels: tokens, scale: diverging(1), digits: 1, corner: t('stage.masked') }),
          matrixTable({ data: probs, rows: N, cols: N, rowLabels: tokens, colLabels: tokens, scale: sequential(0, 1), digits: 2, corner: t('stage.probs') }),
          // A row whose every visible key is padding (<pad> itself, padded on the left, under both masks)
          // still gives out all its weight: −1e9 is finite, so softmax puts it on the masked cells.
          el('p', { className: 'hint', dataset: { note: 'pad-row' } }, t(allMasked(masked, pad) ? 'lesson.padding.padRowAll' : 'lesson.padding.padRow')),
          el('p', { className: 'leak', dataset: { leak: m } }, t('lesson.padding.leak'), gap(t('lesson.padding.leak')), value(leak, 3)),
        );
      }),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
    },
  };
}

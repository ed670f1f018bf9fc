// Lesson: why divide by √d (shared/seeds/000, "为什么要除以 √d?"). First the seed's two rows:
// softmax([1, 2, 3]) ≈ [0.09, 0.24, 0.67] spreads its weight, softmax([10, 20, 30]) ≈ [0, 0, 1] gives
// it all to the winner. Then where such big numbers come from: one query against six keys with
// random entries of size about 1 (inputs drawn here, seeded, so every reader sees the same ones);
// their dot products grow like √d, and only ÷ √d brings the softmax back to a spread-out row.
// The tutorial's d = 512 (and MiniMind-3's 768) are hidden sizes; a dot product in attention runs
// over one head, head_dim = 96 in MiniMind-3. A table sets each d beside its √d, the typical size of
// q·k there (which follows √d) and the raw scores the core measures for the lesson's one query, so
// "几百甚至上千" can be weighed against numbers. The lesson itself has no words; its door (the
// sentence of 她 in English on SmolLM2 for an English reader) follows the lesson's switch (words.js).

import { el } from '../parts/dom.js';
import { bars } from '../parts/bars.js';
import { value } from '../parts/value.js';
import { fixed, gap, numberList } from '../parts/format.js';
import { entropy } from '../parts/entropy.js';
import { t } from '../strings.js';
import { SENTENCE, SENTENCE_EN, SENTENCE_WORDS, SMOLLM2_DOOR } from './qk_match.js';
import { lessonWords } from './words.js';
import { latest } from '../page/latest.js';

const SEED_ROWS = ['1, 2, 3', '10, 20, 30'];
const DIMS = [4, 16, 64, 96, 512, 768];
const HEAD_DIM = 96; // MiniMind-3's head_dim (shared/seeds/002)
const HIDDEN = [512, 768]; // the tutorial's dim and MiniMind-3's hidden_size
const TOY = 4; // the dim of the tutorial's worked examples
export const WORDS = lessonWords([[SENTENCE, SENTENCE_EN]]);
// In English, on SmolLM2's head where " she" looks at " Mary" the most: a row with a clear winner.
export const DOOR = { view: 'scale', text: SENTENCE, focus: '她', words: SENTENCE_WORDS, note: 'lesson.sqrt_d.door', en: { ...SMOLLM2_DOOR, note: 'lesson.sqrt_d.doorSmollm2' } };
const KEYS = 6;
const SEED = 20250;

// Standard normal numbers from a fixed seed (mulberry32 + Box–Muller): the lesson's hand-set inputs.
function normals(n, seed) {
  let a = seed >>> 0;
  const uniform = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return Float32Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform()));
}

// The typical size of q·k at width d: the root mean square of PAIRS dot products of seeded random
// vectors (entries of size about 1). It follows √d, where one query's largest of six scores wanders.
const PAIRS = 256;
function typicalDot(d) {
  const a = normals(PAIRS * d, SEED + 2);
  const b = normals(PAIRS * d, SEED + 3);
  let sum = 0;
  for (let p = 0; p < PAIRS; p++) {
    let dot = 0;
    for (let n = p * d; n < (p + 1) * d; n++) dot += a[n] * b[n];
    sum += dot * dot;
  }
  return Math.sqrt(sum / PAIRS);
}

export function mount(root, app) {
  const rows = SEED_ROWS.map((text, n) => el('input', { type: 'text', value: text, attrs: { 'aria-label': t('lesson.sqrt_d.rowLabel', { n: n + 1 }), inputmode: 'decimal' }, on: { change: () => app.redraw() } }));
  const seedOut = el('div', { className: 'multiples wide' });
  const dimSelect = el('select', { id: 'lesson-d', on: { change: () => app.redraw() } }, DIMS.map((d) => el('option', { value: String(d) }, d === HEAD_DIM ? t('lesson.sqrt_d.headDimOption', { d }) : d === HIDDEN[0] ? t('lesson.sqrt_d.tutorialOption', { d }) : d)));
  dimSelect.value = '512';
  const growth = el('div', {});
  const sizes = el('div', {});
  root.append(
    ...[WORDS.bar(app)].filter(Boolean),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.sqrt_d.seedHeading')), el('p', { className: 'hint' }, t('lesson.sqrt_d.seedNote')), el('p', { className: 'hint', dataset: { note: 'entropy' } }, t('lesson.sqrt_d.entropyNote')), el('p', { className: 'hint bars-key', dataset: { note: 'bars' } }, t('lesson.sqrt_d.barsKey')), seedOut),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.sqrt_d.growthHeading')), el('p', { className: 'hint' }, t('lesson.sqrt_d.growthNote', { keys: KEYS })), el('div', { className: 'toolbar' }, el('label', { htmlFor: 'lesson-d' }, 'd ='), dimSelect), growth),
    el('section', { className: 'card' }, el('h3', {}, t('lesson.sqrt_d.sizesHeading')), sizes),
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    const parsed = rows.map((input) => numberList(input.value));
    const valid = parsed.map((r) => r.length > 0 && r.every(Number.isFinite));
    const d = Number(dimSelect.value);
    const q = normals(d, SEED);
    const k = normals(KEYS * d, SEED + 1);
    const spec = { t: 1, s: KEYS, d, causal: false };
    const [soft, raw, scaled, each] = await Promise.all([
      Promise.all(parsed.map((r, n) => (valid[n] ? app.call('softmax', { scores: Float32Array.from(r), spec: { t: 1, s: r.length, causal: false } }) : null))),
      app.call('attend', { q, k, spec: { ...spec, scale: 1 } }),
      app.call('attend', { q, k, spec }),
      Promise.all(DIMS.map((n) => app.call('attend', { q: normals(n, SEED), k: normals(KEYS * n, SEED + 1), spec: { t: 1, s: KEYS, d: n, scale: 1, causal: false } }))),
    ]);
    if (signal.aborted) return;
    rows.forEach((input, n) => input.setAttribute('aria-invalid', String(!valid[n])));
    seedOut.replaceChildren(
      ...parsed.map((r, n) =>
        el(
          'figure',
          { className: 'panel-cell', dataset: { row: n } },
          el('figcaption', { className: 'panel-title' }, rows[n]),
          valid[n] ? bars(r.map((x, c) => ({ label: fixed(x, 1), value: soft[n].probs[c] })), { label: `softmax([${r.join(', ')}])` }) : el('p', { className: 'field-error' }, t('scale.ownInvalid')),
          valid[n] && el('p', { className: 'hint' }, t('scale.entropyShort'), gap(t('scale.entropyShort')), value(entropy(soft[n].probs), 3), ` ${t('scale.bits')}`),
        ),
      ),
    );
    const keyLabels = Array.from({ length: KEYS }, (_, j) => `k${j}`);
    const spread = Math.max(...raw.scores) - Math.min(...raw.scores);
    growth.replaceChildren(
      // Three separate facts, each with its own label: never one line that reads as a product.
      el('p', {}, t('lesson.sqrt_d.spread', { d }), gap(t('lesson.sqrt_d.spread', { d })), value(spread, 2), t('lesson.sqrt_d.root'), value(Math.sqrt(d), 2), t('lesson.sqrt_d.after'), value(Math.max(...scaled.scores) - Math.min(...scaled.scores), 2)),
      el('p', { className: 'hint bars-key', dataset: { note: 'bars' } }, t('lesson.sqrt_d.keyBarsKey')),
      el(
        'div',
        { className: 'multiples wide' },
        el('figure', { className: 'panel-cell', dataset: { variant: 'raw' } }, el('figcaption', { className: 'panel-title' }, t('lesson.sqrt_d.unscaled')), bars(keyLabels.map((label, j) => ({ label: `${label} (${fixed(raw.scores[j], 1)})`, value: raw.probs[j] })), { label: t('lesson.sqrt_d.unscaled') }), el('p', { className: 'hint' }, t('scale.entropyShort'), gap(t('scale.entropyShort')), value(entropy(raw.probs), 3), ` ${t('scale.bits')}`)),
        el('figure', { className: 'panel-cell', dataset: { variant: 'scaled' } }, el('figcaption', { className: 'panel-title' }, t('lesson.sqrt_d.scaled')), bars(keyLabels.map((label, j) => ({ label: `${label} (${fixed(scaled.scores[j], 1)})`, value: scaled.probs[j] })), { label: t('lesson.sqrt_d.scaled') }), el('p', { className: 'hint' }, t('scale.entropyShort'), gap(t('scale.entropyShort')), value(entropy(scaled.probs), 3), ` ${t('scale.bits')}`)),
      ),
      el('p', { className: 'hint' }, t('lesson.sqrt_d.takeaway')),
    );
    sizes.replaceChildren(
      el('p', { className: 'hint' }, t('lesson.sqrt_d.sizesNote', { keys: KEYS, pairs: PAIRS })),
      el(
        'table',
        { className: 'data-table sizes' },
        el('thead', {}, el('tr', {}, ['d', '√d', t('lesson.sqrt_d.typical'), t('lesson.sqrt_d.largest'), t('lesson.sqrt_d.what')].map((h) => el('th', { attrs: { scope: 'col' } }, h)))),
        el(
          'tbody',
          {},
          DIMS.map((n, i) =>
            el(
              'tr',
              { dataset: { d: n }, className: n === HEAD_DIM ? 'marked-row' : '' },
              el('th', { attrs: { scope: 'row' } }, n),
              el('td', {}, value(Math.sqrt(n), 2)),
              el('td', { dataset: { column: 'typical' } }, value(typicalDot(n), 2)),
              el('td', {}, value(Math.max(...each[i].scores.map(Math.abs)), 2)),
              el('td', {}, n === HEAD_DIM ? t('lesson.sqrt_d.headDim') : HIDDEN.includes(n) ? t('lesson.sqrt_d.hidden') : n === TOY ? t('lesson.sqrt_d.toy') : ''),
            ),
          ),
        ),
      ),
      el('p', { className: 'hint', dataset: { note: 'overstates' } }, t('lesson.sqrt_d.overstates', { root512: fixed(Math.sqrt(512), 1), root96: fixed(Math.sqrt(HEAD_DIM), 1), largest: fixed(Math.max(...each[DIMS.indexOf(HEAD_DIM)].scores.map(Math.abs)), 1) })),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
    },
  };
}

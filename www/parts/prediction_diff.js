// Two next-token predictions side by side, and how they differ: the compare view (two sentences)
// and the knock-out view (the model before and after heads are switched off) both ask "what did the
// change do to the prediction?". Each prediction is the core's softmax over the whole vocabulary
// (the worker's `top` with k = the vocabulary, so every token's probability is the core's); shown
// are each side's top tokens as bars on a 0–1 scale, the tokens that moved most with both
// probabilities and the change, and the KL divergence of the two full distributions.

import { el } from './dom.js';
import { candidateBars, TOP } from './prediction.js';
import { exact, percent, tokenText } from './format.js';
import { klDivergence } from './entropy.js';
import { t } from '../strings.js';

// How many of the most moved tokens the change table lists.
const MOVED = 8;

// The core's full next-token distribution of one logits row: {top: [{id, p, piece}] sorted by p,
// p: Float64Array by id}.
export async function distribution(app, row) {
  const top = await app.call('top', { logits: row, k: row.length });
  const p = new Float64Array(row.length);
  for (const c of top) p[c.id] = c.p;
  return { top, p };
}

// A signed change of probability in percentage points: +12.3 pp, −0.42 pp, and below 0.01 pp two
// significant digits (−0.0041 pp), so a change never shows as a signed zero.
export function points(d) {
  const v = d * 100;
  const a = Math.abs(v);
  const digits = a >= 10 ? a.toFixed(1) : a >= 0.01 || a === 0 ? a.toFixed(2) : a.toPrecision(2);
  return `${v > 0 ? '+' : v < 0 ? '−' : '±'}${digits} ${t('diff.pp')}`;
}

/**
 * The two predictions and their difference as one block. a, b: distribution() results; labels:
 * {a, b} headings for the two sides. The node carries data-kl (the exact KL) for tests.
 */
export function predictionDiff(a, b, labels) {
  const kl = klDivergence(a.p, b.p);
  const piece = new Map([...a.top.slice(0, TOP), ...b.top.slice(0, TOP)].map((c) => [c.id, c.piece]));
  const moved = [...piece.keys()].sort((x, y) => Math.abs(b.p[y] - a.p[y]) - Math.abs(b.p[x] - a.p[x]) || x - y).slice(0, MOVED);
  const side = (d, label) => el('div', { className: 'diff-side' }, el('h4', {}, label), candidateBars(d.top.slice(0, TOP), { label }));
  const table = el(
    'table',
    { className: 'data-table diff-table' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t('diff.token')), el('th', { scope: 'col' }, labels.a), el('th', { scope: 'col' }, labels.b), el('th', { scope: 'col' }, t('diff.change')))),
    el(
      'tbody',
      {},
      moved.map((id) => {
        const d = b.p[id] - a.p[id];
        return el(
          'tr',
          { dataset: { id } },
          el('th', { scope: 'row' }, `${tokenText(piece.get(id))} · ${id}`),
          el('td', { className: 'num', dataset: { value: exact(Math.fround(a.p[id])) } }, percent(a.p[id])),
          el('td', { className: 'num', dataset: { value: exact(Math.fround(b.p[id])) } }, percent(b.p[id])),
          el('td', { className: `num ${d > 0 ? 'up' : d < 0 ? 'down' : ''}` }, points(d)),
        );
      }),
    ),
  );
  const same = a.top[0].id === b.top[0].id;
  return el(
    'div',
    { className: 'prediction-diff', dataset: { kl: String(kl) } },
    el('div', { className: 'split' }, side(a, labels.a), side(b, labels.b)),
    el('p', { className: 'diff-verdict' }, same ? t('diff.sameTop', { token: tokenText(a.top[0].piece) }) : t('diff.newTop', { a: tokenText(a.top[0].piece), b: tokenText(b.top[0].piece) })),
    el('h4', {}, t('diff.moved')),
    el('div', { className: 'table-scroll' }, table),
    el('p', { className: 'diff-kl' }, el('strong', {}, t('diff.kl', { a: labels.a, b: labels.b })), ' ', el('span', { className: 'num' }, Number.isFinite(kl) ? kl.toFixed(4) : '∞'), ' ', t('diff.nats')),
    el('p', { className: 'hint' }, t('diff.klExplain')),
  );
}

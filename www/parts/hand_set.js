// Shared pieces of the lessons that set numbers by hand beside a tutorial's printed ones:
// a matrix product by the core, and the table that sets each printed row beside the computed one
// with its verdict (agrees / illustrative in the tutorial / the reader's own numbers).

import { el } from './dom.js';
import { fixed } from './format.js';

// a [n, m] @ b [m, p] by the core: the core's q·k with scale 1 and no mask is exactly a matrix
// product when the "keys" are the columns of b, so the page has no arithmetic of its own here.
export async function matmul(app, a, n, m, b, p) {
  const bt = new Float32Array(p * m);
  for (let i = 0; i < m; i++) for (let j = 0; j < p; j++) bt[j * m + i] = b[i * p + j];
  const { scores } = await app.call('attend', { q: a, k: bt, spec: { t: n, s: p, d: m, scale: 1, causal: false } });
  return scores;
}

// A printed number agrees when it is the computed one rounded to the digits the tutorial prints, with
// a little room for a value on the boundary (0.47502 printed as 0.47).
export function agrees(printed, computed, digits) {
  const room = 0.6 * 10 ** -digits;
  return printed.every((p, c) => Math.abs(p - computed[c]) <= room);
}

const CHECK_CLASS = { agrees: 'ok', illustrative: 'differs' };

// rows: [{label, printed: number[], computed: ArrayLike<number>, verdict, agrees?}]; digits: the printed
// decimals; text: {row, printed, computed, verdict(v)}; computedDigits: decimals of the computed.
export function compareTable({ rows, digits, computedDigits = 3, text }) {
  return el(
    'table',
    { className: 'data-table compare' },
    el('thead', {}, el('tr', {}, [text.row, text.printed, text.computed, ''].map((c) => el('th', { attrs: { scope: 'col' } }, c)))),
    el(
      'tbody',
      {},
      rows.map((row, r) =>
        el(
          'tr',
          { dataset: { row: r, verdict: row.verdict, ...(row.agrees === undefined ? {} : { agrees: String(row.agrees) }) } },
          el('th', { attrs: { scope: 'row' } }, row.label),
          el('td', {}, `[${row.printed.map((p) => p.toFixed(digits)).join(', ')}]`),
          el('td', { className: 'computed' }, `[${Array.from(row.computed, (p) => fixed(p, computedDigits)).join(', ')}]`),
          el('td', { className: `check ${CHECK_CLASS[row.verdict] ?? 'yours'}` }, text.verdict(row.verdict)),
        ),
      ),
    ),
  );
}

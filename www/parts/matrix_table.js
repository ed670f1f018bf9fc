// A small matrix as an HTML table, for the lessons' hand-set Q and K and the scores and probabilities
// the core computes from them: row and column labels (tokens), every cell its number or, when
// editable, an input. Cells are coloured by a scale (color_scale.js) and masked cells (-∞, -1e9) are
// hatched, as in the heatmaps. Tables read well to screen readers and every input is reachable by Tab.

import { el } from './dom.js';
import { exact, fixed } from './format.js';
import { isMasked } from './color_scale.js';

// opts: data (Float32Array or number[]), rows, cols, rowLabels, colLabels, scale (or null), digits,
// editable, onEdit(r, c, value), mark: {r, c} | {r} | null, onCellClick(r, c), caption,
// corner: the top-left header; cellText(v, r, c): words in place of the number (a boolean mask),
// cellClass(r, c): an extra class for a cell (cells a lesson points at).
export function matrixTable(opts) {
  const { data, rows, cols, rowLabels, colLabels, scale = null, digits = 2, editable = false, mark = null, caption, corner = '' } = opts;
  const head = el('tr', {}, el('th', { className: 'corner', attrs: { scope: 'col' } }, corner), colLabels.map((c) => el('th', { attrs: { scope: 'col' } }, c)));
  const body = [];
  for (let r = 0; r < rows; r++) {
    const cells = [];
    for (let c = 0; c < cols; c++) {
      const v = data[r * cols + c];
      const marked = mark && mark.r === r && (mark.c === undefined || mark.c === c);
      const masked = v === -Infinity || isMasked(v);
      const td = el('td', {
        className: ['cell', masked ? (v === -Infinity ? 'cell-neginf' : 'cell-padding') : '', marked ? 'marked' : '', opts.cellClass?.(r, c) ?? ''].join(' ').trim(),
        dataset: { r, c, value: exact(v) },
        style: scale && !masked ? { background: scale.css(v), color: ink(scale, v) } : {},
      });
      if (editable) {
        const input = el('input', {
          type: 'text',
          inputMode: 'decimal',
          value: String(+v.toFixed(6)),
          attrs: { 'aria-label': `${rowLabels[r]}, ${colLabels[c]}` },
          on: {
            change: () => {
              const next = Number(input.value);
              input.setAttribute('aria-invalid', String(!Number.isFinite(next)));
              if (Number.isFinite(next)) opts.onEdit(r, c, next);
            },
          },
        });
        td.append(input);
      } else if (opts.onCellClick) {
        td.append(el('button', { type: 'button', className: 'cell-button', on: { click: () => opts.onCellClick(r, c) } }, fixed(v, digits)));
      } else {
        td.append(opts.cellText ? opts.cellText(v, r, c) : fixed(v, digits));
      }
      cells.push(td);
    }
    body.push(el('tr', { className: mark && mark.r === r && mark.c === undefined ? 'marked-row' : '' }, el('th', { attrs: { scope: 'row' } }, rowLabels[r]), cells));
  }
  return el('table', { className: editable ? 'matrix editable' : 'matrix' }, caption && el('caption', {}, caption), el('thead', {}, head), el('tbody', {}, body));
}

// Dark text on light cells, light text on dark ones, so every number stays readable on its colour.
function ink(scale, v) {
  const [r, g, b] = scale.css(v).match(/\d+/g).map(Number);
  return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? '#1f2430' : '#ffffff';
}

// A small matrix as an HTML table, for the lessons' hand-set Q and K and the scores and probabilities
// the core computes from them: row and column labels (tokens), every cell its number or, when
// editable, an input. Cells are coloured by a scale (color_scale.js) and masked cells (-∞, -1e9) are
// hatched, as in the heatmaps. Tables read well to screen readers and every input is reachable by Tab.
//
// A lesson's edits travel in the link (state.js's edits) without the lesson doing anything but
// naming its editable tables (opts.id): views/lessons.js opens an edit book for the lesson shown
// (openEdits). The first time a table with an id is drawn, the book's cells for it are laid over its
// data in place (the data is the lesson's own array, so the lesson's next update computes from them)
// and the book asks for that update; each edit the reader makes is recorded. A recorded cell whose
// data changed by other means (the lesson's reset, a new layout) is no longer an edit and is dropped,
// and so is a cell the reader sets back to the lesson's own number (book.own: each table's numbers
// before any edit), so the link and the "you have changed…" line forget it.

import { el } from './dom.js';
import { exact, fixed, typedNumber } from './format.js';
import { isMasked } from './color_scale.js';
import { MAX_EDIT_VALUE } from '../state.js';
import { language, t } from '../strings.js';

let book = null; // the open edit book: {cells: {id: [[r, c, value], …]}, claimed, refused, own: {id: {src, cols, data}}, onChange}

/**
 * Opens the edit book of the lesson about to be drawn: cells {tableId: [[r, c, value], …]} (from the
 * link), onChange(cells) called when tables laid them over their data (to recompute) or the reader's
 * edits changed them. Returns the book; closeEdits(book) when the lesson goes.
 */
export function openEdits(cells, onChange) {
  book = { cells: structuredClone(cells), claimed: new Set(), refused: [], own: {}, onChange };
  return book;
}

export function closeEdits(closing) {
  if (book === closing) book = null;
}

// A number as the data array holds it (a Float32Array rounds), so that a recorded cell compares equal.
function stored(data, v) {
  return data instanceof Float32Array ? Math.fround(v) : v;
}

// Lays the book's cells for table `id` over data the first time; afterwards drops recorded cells the
// data no longer holds. Cells outside rows × cols are refused (book.refused, "id [r, c]").
function bind(id, data, rows, cols) {
  const cells = book.cells[id] ?? [];
  // The lesson's own numbers, taken before the book's cells go over them (and again for a new layout).
  // A new array (a lesson's other layout, even of the same size) brings its own numbers.
  if (!book.claimed.has(id) || book.own[id].src !== data || book.own[id].cols !== cols) book.own[id] = { src: data, cols, data: Array.from(data) };
  if (!book.claimed.has(id)) {
    book.claimed.add(id);
    const fits = cells.filter(([r, c]) => r < rows && c < cols);
    for (const [r, c] of cells.filter((cell) => !fits.includes(cell))) book.refused.push(`${id} [${r}, ${c}]`);
    for (const [r, c, v] of fits) data[r * cols + c] = v;
    if (cells.length) settle(id, fits);
    return;
  }
  const held = cells.filter(([r, c, v]) => Object.is(data[r * cols + c], stored(data, v)));
  if (held.length < cells.length) settle(id, held);
}

function settle(id, cells) {
  if (cells.length) book.cells[id] = cells;
  else delete book.cells[id];
  const open = book;
  queueMicrotask(() => open.onChange(open.cells)); // after the table is drawn, not inside the lesson's update
}

// An edit; one back to the lesson's own number is no edit.
function record(id, r, c, v, data) {
  const others = (book.cells[id] ?? []).filter(([r2, c2]) => r2 !== r || c2 !== c);
  const own = book.own[id];
  const back = own?.cols !== undefined && Object.is(own.data[r * own.cols + c], stored(data, v));
  settle(id, back ? others : [...others, [r, c, v]].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
}

// opts: data (Float32Array or number[]), rows, cols, rowLabels, colLabels, scale (or null), digits,
// editable, onEdit(r, c, value), id (an editable table's name in its lesson: its edits go in the
// link), mark: {r, c} | {r} | null, onCellClick(r, c), caption, corner: the top-left header;
// cellText(v, r, c): words in place of the number (a boolean mask), cellClass(r, c): an extra class
// for a cell (cells a lesson points at).
export function matrixTable(opts) {
  const { data, rows, cols, rowLabels, colLabels, scale = null, digits = 2, editable = false, mark = null, caption, corner = '', id = null } = opts;
  const kept = editable && id !== null && book ? book : null;
  if (kept) bind(id, data, rows, cols);
  // A lesson redraws its tables when an edit's results come back. If the reader is in a cell of this
  // table by then (tabbed on, or already typing the next number), the new table's cell takes over: the
  // focus, the caret and a number typed but not yet entered, which enters as it would have, on Enter,
  // Tab or leaving the cell. Without this the redraw dropped the focus and any half-typed number.
  const name = editable ? `${id ?? caption ?? corner}` : null;
  const active = document.activeElement;
  const carried = name !== null && active?.dataset?.cellOf === name ? { r: Number(active.dataset.r), c: Number(active.dataset.c), value: active.value, typed: active.value !== active.dataset.entered, start: active.selectionStart, end: active.selectionEnd } : null;
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
        const shown = String(+v.toFixed(6));
        const enter = () => {
          if (input.value === input.dataset.entered) return;
          input.dataset.entered = input.value;
          // A number, within what a link keeps (±MAX_EDIT_VALUE): 1e39 would be ∞ in f32, and the
          // link would say another number than the screen.
          const next = typedNumber(input.value);
          const fits = Number.isFinite(next) && Math.abs(next) <= MAX_EDIT_VALUE;
          input.setAttribute('aria-invalid', String(!fits));
          td.querySelector('.cell-refused')?.remove();
          if (!fits) {
            // What it wants (a decimal comma is said as such), and that the results are still the
            // last number's, which the table still holds.
            const last = String(+data[r * cols + c].toFixed(6));
            // (1,000 may be a thousand: three digits after the comma get no decimal advice.)
            const typed = input.value.normalize('NFKC').trim();
            const said = /^[-+−]?\d+,(?!\d{3}$)\d+$/.test(typed)
              ? t('lesson.cellComma', { example: typed.replace(',', '.'), last })
              : !Number.isFinite(next) && typed.length <= 24
                ? t('lesson.cellNotNumber', { typed, last })
                : t('lesson.cellRange', { most: language() === 'zh' ? `${MAX_EDIT_VALUE / 1e4} 万` : MAX_EDIT_VALUE.toLocaleString('en-US'), last });
            // Under a right-hand cell it runs leftwards, so a narrow screen does not cut it off.
            td.append(el('span', { className: c >= cols / 2 ? 'cell-refused end' : 'cell-refused', attrs: { role: 'alert' } }, said));
            return;
          }
          if (kept && kept === book) record(id, r, c, next, data);
          opts.onEdit(r, c, next);
        };
        const input = el('input', {
          type: 'text',
          inputMode: 'decimal',
          value: shown,
          dataset: { cellOf: name, r, c, entered: shown },
          attrs: { 'aria-label': `${rowLabels[r]}, ${colLabels[c]}` },
          on: { change: enter, blur: enter, keydown: (e) => e.key === 'Enter' && enter(), input: () => input.style.setProperty('--chars', String(input.value.length)) },
        });
        input.style.setProperty('--chars', String(shown.length));
        if (carried && carried.r === r && carried.c === c) {
          if (carried.typed) input.value = carried.value;
          queueMicrotask(() => {
            if (!input.isConnected) return;
            input.focus();
            input.setSelectionRange(carried.start, carried.end);
          });
        }
        td.append(input);
      } else if (opts.onCellClick) {
        // A clickable cell is still the table's number: part of an exported figure (data-figure).
        td.append(el('button', { type: 'button', className: 'cell-button', dataset: { figure: '' }, on: { click: () => opts.onCellClick(r, c) } }, masked && v !== -Infinity ? '−1e9' : fixed(v, digits)));
      } else {
        // A padding-masked score is written as the code adds it (−1e9), not as 1.0e+9 in exponent form.
        td.append(opts.cellText ? opts.cellText(v, r, c) : masked && v !== -Infinity ? '−1e9' : fixed(v, digits));
      }
      cells.push(td);
    }
    body.push(el('tr', { className: mark && mark.r === r && mark.c === undefined ? 'marked-row' : '' }, el('th', { attrs: { scope: 'row' } }, rowLabels[r]), cells));
  }
  return el('table', { className: editable ? 'matrix editable' : 'matrix', dataset: kept ? { table: id } : {} }, caption && el('caption', {}, caption), el('thead', {}, head), el('tbody', {}, body));
}

// Of dark and white text, the one with the higher WCAG contrast on the cell's colour, so every
// number stays readable on its colour (mid tones included).
function ink(scale, v) {
  const cell = luminance(scale.css(v).match(/\d+/g).map(Number));
  const dark = luminance([0x1f, 0x24, 0x30]);
  return (cell + 0.05) / (dark + 0.05) >= 1.05 / (cell + 0.05) ? '#1f2430' : '#ffffff';
}

// WCAG relative luminance of an sRGB colour.
function luminance(rgb) {
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

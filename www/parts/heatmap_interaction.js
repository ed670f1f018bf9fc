// Reading a heatmap's cells by mouse and keyboard: hovering or the arrow keys (Home / End: the
// row's ends) outline a cell and show its exact value in the tooltip, which screen readers hear
// (tooltip.js); a click or Enter calls the heatmap's `interaction.onCellClick`, Enter before any
// cell is outlined its `interaction.onOpen`; Escape puts the tooltip away. The outlined cell's row
// and column labels are lit, and on a map of the input's tokens (cells.tokens) its query and key
// are said to the page (TOKENS_EVENT on document, detail {query, key} or null), whose token chips
// light them. The canvas is an
// interactive "heatmap" (role application, for the arrow keys), named by `interaction.name` and how
// to use the keys.

import { exact } from './format.js';
import { isMasked } from './color_scale.js';
import { clamp } from './heatmap_layout.js';
import { showTooltip, hideTooltip } from './tooltip.js';
import { t } from '../strings.js';

export const TOKENS_EVENT = 'attnscope-tokens';

const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], Home: [0, -Infinity], End: [0, Infinity] };

/**
 * Wires `canvas`, its focus outline `focusBox` and the label guides {row, col}; `current()` gives
 * the heatmap's options and layout now ({o, geo}; geo null until painted). Returns {painted() after
 * each paint, reset() to forget the cell on new options, clear() to also hide the tooltip}.
 */
export function cellReader(canvas, focusBox, guides, current) {
  let focus = null;
  let said = false; // whether the page was told of tokens, so that it is told when they go

  function tell(detail) {
    if (!detail && !said) return;
    said = Boolean(detail);
    document.dispatchEvent(new CustomEvent(TOKENS_EVENT, { detail }));
  }

  function cellAt(event) {
    const { o, geo } = current();
    if (!geo) return null;
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left - geo.x0;
    const y = event.clientY - rect.top - geo.y0;
    if (x < 0 || y < 0 || x >= geo.w || y >= geo.h) return null;
    const { rows, cols } = o.cells;
    return { r: Math.min(rows - 1, Math.floor((y / geo.h) * rows)), c: Math.min(cols - 1, Math.floor((x / geo.w) * cols)) };
  }

  // A row's token label, left of the map, where the map takes `interaction.onRowClick` (the
  // attention map: a click on a word follows it as the query, as a click on its row does); null elsewhere.
  function rowLabelAt(event) {
    const { o, geo } = current();
    if (!geo || !o.interaction.onRowClick || !o.labels?.rows) return null;
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top - geo.y0;
    if (x < 0 || x >= geo.x0 || y < 0 || y >= geo.h) return null;
    return Math.min(o.cells.rows - 1, Math.floor((y / geo.h) * o.cells.rows));
  }

  // Lights row r's label, left of the map.
  function lightRow(r) {
    const { o, geo } = current();
    const ch = geo.h / o.cells.rows;
    guides.row.hidden = false;
    Object.assign(guides.row.style, { left: '0px', top: `${geo.y0 + r * ch}px`, width: `${Math.max(geo.x0 - 2, 0)}px`, height: `${ch}px` });
  }

  function place(r, c) {
    const { o, geo } = current();
    focusBox.hidden = false;
    const cw = geo.w / o.cells.cols;
    const ch = geo.h / o.cells.rows;
    Object.assign(focusBox.style, {
      left: `${geo.x0 + c * cw - 1}px`,
      top: `${geo.y0 + r * ch - 1}px`,
      width: `${Math.max(cw, 2) + 2}px`,
      height: `${Math.max(ch, 2) + 2}px`,
    });
    const labels = o.labels ?? {};
    guides.row.hidden = true;
    if (labels.rows) lightRow(r);
    guides.col.hidden = !labels.cols;
    if (labels.cols) Object.assign(guides.col.style, { left: `${geo.x0 + c * cw}px`, top: `${geo.groupBand}px`, width: `${cw}px`, height: `${Math.max(geo.colBand - 2, 0)}px` });
    // A window of the map (map_window.js) names its cells' input positions in rowAt / colAt.
    if (o.cells.tokens) tell({ query: o.cells.rowAt?.[r] ?? r, key: o.cells.colAt?.[c] ?? c });
  }

  function show(cell, clientX, clientY) {
    const { data, cols, rowMask } = current().o.cells;
    focus = cell;
    place(cell.r, cell.c);
    const { future, off, padKeys } = current().o.cells;
    const v = data[cell.r * cols + cell.c];
    const lines = current().o.interaction.describe(cell.r, cell.c);
    const note = off?.has(cell.r * cols + cell.c) ? t('tip.off') : v === -Infinity ? t(future ? 'tip.future' : 'tip.causal') : isMasked(v) ? t('tip.padding') : rowMask && !rowMask[cell.r] ? t('tip.paddedRow') : null;
    // A future token's or a padded key's attention weight is 0, however its cell is drawn.
    const shown = (v === -Infinity && future) || (padKeys && isMasked(v)) ? exact(0) : exact(v);
    showTooltip(clientX, clientY, [...lines, [t('tip.value'), shown], ...(note ? [note] : [])], shown);
  }

  function reset() {
    focus = null;
    focusBox.hidden = true;
    guides.row.hidden = true;
    guides.col.hidden = true;
    tell(null);
  }

  function clear() {
    reset();
    hideTooltip();
  }

  canvas.addEventListener('mousemove', (e) => {
    const cell = cellAt(e);
    const row = cell ? null : rowLabelAt(e);
    canvas.style.cursor = row === null ? '' : 'pointer';
    if (cell) show(cell, e.clientX, e.clientY);
    else if (row !== null) {
      // The label lit as the row's crosshair, and the tooltip says what a click does.
      clear();
      lightRow(row);
      showTooltip(e.clientX, e.clientY, current().o.interaction.rowTip?.(row) ?? []);
    } else clear();
  });
  canvas.addEventListener('mouseleave', clear);
  canvas.addEventListener('blur', clear);
  // A tap shows a cell's value as hovering does; where a click leaves the view (interaction.confirmTap:
  // head attribution opens the head's attention map), a finger acts on a second tap of the same cell.
  let pointer = 'mouse';
  let tapped = null;
  canvas.addEventListener('pointerdown', (e) => {
    pointer = e.pointerType;
  });
  canvas.addEventListener('click', (e) => {
    const cell = cellAt(e);
    if (cell && pointer === 'touch' && current().o.interaction.confirmTap && !(tapped && tapped.r === cell.r && tapped.c === cell.c)) {
      tapped = cell;
      show(cell, e.clientX, e.clientY);
      return;
    }
    tapped = null;
    if (cell) current().o.interaction.onCellClick?.(cell.r, cell.c);
    else {
      const row = rowLabelAt(e);
      if (row !== null) current().o.interaction.onRowClick(row);
    }
  });
  canvas.addEventListener('keydown', (e) => {
    // Enter or Space acts on the outlined cell; before any cell is outlined, on the whole map
    // (`interaction.onOpen`: a head-grid thumbnail opens its head).
    if (e.key === 'Enter' || e.key === ' ') {
      const { interaction } = current().o;
      const act = focus ? interaction.onCellClick && (() => interaction.onCellClick(focus.r, focus.c)) : interaction.onOpen;
      if (act) {
        e.preventDefault();
        act();
      }
      return;
    }
    if (e.key === 'Escape' && focus) {
      clear();
      return;
    }
    if (!MOVES[e.key]) return;
    e.preventDefault();
    e.stopPropagation();
    const [dr, dc] = MOVES[e.key];
    const { o, geo } = current();
    const { rows, cols } = o.cells;
    // The first key shows the cell the view starts at (`interaction.start`: the followed query's row),
    // else (0, 0).
    const start = o.interaction?.start;
    const cell = focus ? { r: clamp(focus.r + dr, 0, rows - 1), c: clamp(focus.c + dc, 0, cols - 1) } : start ? { r: clamp(start.r, 0, rows - 1), c: clamp(start.c, 0, cols - 1) } : { r: 0, c: 0 };
    const rect = canvas.getBoundingClientRect();
    show(cell, rect.left + geo.x0 + ((cell.c + 1) * geo.w) / cols, rect.top + geo.y0 + ((cell.r + 1) * geo.h) / rows);
  });

  return {
    painted() {
      const { interaction } = current().o;
      canvas.setAttribute('aria-label', `${interaction.name ?? ''}${t('heatmap.nameEnd')}${t(interaction.onOpen ? 'heatmap.keysOpen' : 'heatmap.keys')}`);
      canvas.setAttribute('aria-roledescription', t('heatmap.role'));
      if (focus) place(focus.r, focus.c);
    },
    reset,
    clear,
  };
}

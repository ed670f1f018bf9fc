// A reusable canvas heatmap for one 2-D slice of a trace tensor (rows x cols, row-major): the
// component a view holds. It puts together the parts, each with one job: heatmap_layout.js (where
// cells and labels go), heatmap_paint.js (the pixels), heatmap_interaction.js (hover, keys,
// tooltip, accessible name) and legend.js; it repaints when its width changes, and registers its
// repaint for figure exports (figure_export.js) so a 2x PNG has sharp cells and labels.
// A heatmap paints once it is in the page, at its real width: update() on a detached heatmap
// waits for the ResizeObserver, or for paintAll() from a view that wants it painted now.
//
// Options for update(), in groups:
//   cells: {data (Float32Array), rows, cols, rowMask: 0/1 per row (0: padded query row) or null,
//           tokens: bool, row i and column j are the input's token i and j (headCells with
//           `input`): the outlined cell lights those two token chips (panels/token_chips.js),
//           maxCell: largest cell side in CSS px (default 28), square: bool,
//           minCell: smallest cell side (default none): past it the map is wider than its box, which
//           the view lets scroll,
//           rowHeight: each row's height in CSS px, whatever the cells' width (a lone row read as a strip),
//           future: bool, −∞ cells are attention weights of future tokens (weight 0, hatched as
//           masked) rather than the causal mask's −∞ scores,
//           off: a Set of flat cell indices drawn striped over their colour, knocked-out heads}
//   scale: the colour scale (parts/color_scale.js), so several heatmaps can share one;
//   legend: bool (default true), the scale's legend under the cells;
//   labels: {rows, cols: string[], one per row / column, else update() throws (absent: none, or
//            index ticks along columns under row labels),
//            groups: {size, label(g), short(g) (optional: where label(g) does not fit, e.g. a short last group)}
//            to frame groups of columns (heads inside a [T, nH*d] row),
//            sums: bool, each row's sum at its right} (absent: no labels);
//   mark: {r, c} or null, a cell outlined for good (the pair a view is explaining); {r, c: null}: row r;
//   interaction: {name: accessible name, describe(r, c): [key, value] pairs naming the cell for
//                 the tooltip, onCellClick(r, c) (optional), onOpen() (optional: Enter or Space
//                 before a cell is outlined, for a map that stands for one thing, a grid thumbnail),
//                 start: {r, c} (optional: the cell the first arrow key shows, else (0, 0))}.

import { el } from './dom.js';
import { axisLabel, indexLabel, tokenText } from './format.js';
import { legend, marksOf } from './legend.js';
import { exportable } from './figure_export.js';
import { layout } from './heatmap_layout.js';
import { paint } from './heatmap_paint.js';
import { cellReader } from './heatmap_interaction.js';
import { t } from '../strings.js';

export function heatmap() {
  // Arrow keys read its cells: an interactive widget (heatmap_interaction.js), not a still image.
  const canvas = el('canvas', { className: 'heatmap-canvas', tabIndex: 0, attrs: { role: 'application' } });
  const focusBox = el('div', { className: 'heatmap-focus', hidden: true });
  // The outlined cell's row label and column label, lit as a crosshair (heatmap_interaction.js).
  const guides = { row: el('div', { className: 'heatmap-guide', hidden: true }), col: el('div', { className: 'heatmap-guide', hidden: true }) };
  const legendSlot = el('div', { className: 'heatmap-legend' });
  const node = el('div', { className: 'heatmap' }, el('div', { className: 'heatmap-stage' }, canvas, focusBox, guides.row, guides.col), legendSlot);
  let opts = null;
  let geo = null;
  let lastWidth = 0;
  const reader = cellReader(canvas, focusBox, guides, () => ({ o: opts, geo }));

  // The first observation comes once the node is in the page: a heatmap updated while detached
  // paints then (lastWidth 0), unless paintAll() got to it first.
  const resize = new ResizeObserver(() => {
    if (opts && node.clientWidth !== lastWidth) draw();
  });
  resize.observe(node);

  // An export repaints at its own pixel ratio, its text handed to the export as text (onText).
  exportable(canvas, (ratio, onText) => {
    const copy = document.createElement('canvas');
    paint(copy, opts, layout(opts, lastWidth || 600, ratio), onText);
    return copy;
  });

  function draw(width = node.clientWidth) {
    lastWidth = width;
    geo = layout(opts, lastWidth || 600);
    paint(canvas, opts, geo);
    reader.painted();
  }

  return {
    node,
    update(next) {
      sameInput(next);
      opts = next;
      reader.reset();
      legendSlot.replaceChildren();
      if (opts.legend !== false) {
        const marks = { ...marksOf(opts.cells.data, opts.cells.rowMask), off: opts.cells.off?.size > 0 };
        const said = opts.cells.future ? { ...marks, neginf: false, future: marks.neginf } : marks;
        legendSlot.append(legend(opts.scale, opts.cells.padKeys ? { ...said, padding: false, paddedKeys: said.padding } : said));
      }
      if (node.isConnected) draw();
      else lastWidth = 0;
    },
    // Where row r is drawn on screen (client px), to bring a followed row into sight; null before a paint.
    rowBox(r) {
      if (!geo || !opts) return null;
      const top = canvas.getBoundingClientRect().top + geo.y0 + (r * geo.h) / opts.cells.rows;
      return { top, bottom: top + geo.h / opts.cells.rows };
    },
    // paintAll's two halves: the width to paint at (a layout read), and the paint (a write).
    width: () => (opts && !lastWidth ? node.clientWidth : null),
    paint: (width) => draw(width),
    destroy() {
      resize.disconnect();
      reader.clear();
    },
  };
}

// Labels name the cells' own rows and columns, one each: labels of another input (a view that read
// a newer sentence's tokens for an older run's numbers) are refused where the view gives them, with
// what did not match, so that no repaint (a resize, an export) lays them out over cells they do not name.
function sameInput({ cells, labels }) {
  for (const axis of ['rows', 'cols']) {
    const given = labels?.[axis]?.length;
    if (given !== undefined && given !== cells[axis]) throw new Error(`A heatmap of ${cells.rows} × ${cells.cols} cells was given ${given} labels for its ${axis}.`);
  }
}

// Paints heatmaps updated while detached and now in the page, in the same task: every width is
// read before any canvas changes size, so the page is laid out once, not once per heatmap.
export function paintAll(maps) {
  const widths = maps.map((m) => m.width());
  maps.forEach((m, i) => {
    if (widths[i] !== null) m.paint(widths[i]);
  });
}

// The cells and labels every one-head attention heatmap shares: T query rows over S keys with the
// tokens on both axes (labels cut to `labelChars`), padded query rows marked by `mask`, square
// cells at most `maxCell` px. `input`: the pieces are the input's tokens (not a probe's or another
// text's), so the cell under the pointer lights its query and key among the input's chips.
// `future`: `data` are a causal run's weights, whose future keys are hatched (causalFuture).
export function headCells({ data, T, S, pieces, mask, maxCell, labelChars = 8, input = false, future = false, weights = false }) {
  const labels = pieces.map((p) => axisLabel(p, labelChars));
  const padKeys = hatchesPaddedKeys(weights, mask);
  const hatched = future ? causalFuture(data, T, S) : data;
  const shown = padKeys ? paddedKeys(hatched, T, S, mask) : hatched;
  const cells = { data: shown, rows: T, cols: S, rowMask: mask, square: true, maxCell, tokens: input, future, padKeys };
  return { cells, labels: { rows: labels.slice(0, T), cols: labels.slice(0, S) } };
}

// Attention weights of a causal run drawn as the masked stages draw the mask: a key after its query
// (j > i) holds weight 0, and is −∞ here so that it is hatched and read as a future token's weight
// 0 (pass `future: true` in cells). Without it, the future's 0 looks like any small weight.
export function causalFuture(data, T, S) {
  const out = Float32Array.from(data);
  for (let i = 0; i < T; i++) out.fill(-Infinity, i * S + i + 1 + (S - T), (i + 1) * S);
  return out;
}

// Whether weights (`weights`: attention weights, not scores) get their padded keys hatched: some key is padded.
export function hatchesPaddedKeys(weights, mask) {
  return weights && Boolean(mask?.some((m) => !m));
}

// Attention weights with the padding mask's columns drawn as the masked stage draws them: a padded
// key's weight 0 is −1e9 here, so that it is hatched and said to be a padded key (pass `padKeys` in
// cells), not read as any small weight. Only an exact 0: a row with nothing but padded keys to see
// spreads its weight over them, and those weights are shown as they are.
export function paddedKeys(data, T, S, mask) {
  const out = Float32Array.from(data);
  for (let i = 0; i < T; i++) for (let j = 0; j < S; j++) if (!mask[j] && out[i * S + j] === 0) out[i * S + j] = -1e9;
  return out;
}

// The tooltip lines every one-head attention heatmap starts with: cell (i, j) of head h's panel of
// `tensor` by its index, then its query and key tokens.
export function headTip(tensor, h, pieces) {
  return (i, j) => [
    [tensor, indexLabel(h, i, j)],
    [t('tip.query'), `${i} ${tokenText(pieces[i])}`],
    [t('tip.key'), `${j} ${tokenText(pieces[j])}`],
  ];
}

// Where a heatmap's parts go, in CSS pixels: the cells' size from the width available, the bands
// its row labels, column labels, column groups and row sums need, and how each column label is
// drawn. Chinese, Japanese and Korean text and emoji are never laid on their side: such a column
// label that is wider than its cell stands upright with its characters stacked top to bottom;
// other labels stand upright when they fit their cell (short words) and are turned on their side
// otherwise. Small multiples keep every label: the font shrinks to the cell (down to 7 px) before
// labels are skipped. heatmap_paint.js draws what this places.

export const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif';
export const STACK_LINE = 12;
const STACK_MAX = 6;
const UPRIGHT_SCRIPT = /[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]|\p{Extended_Pictographic}/u;
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

export function clamp(v, lo, hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

const measure = document.createElement('canvas').getContext('2d');
measure.font = FONT;
// Label widths by text: the same tokens label every panel and step (one font, so one table).
const widths = new Map();

function textWidth(labels, cap) {
  let max = 0;
  for (const s of labels) {
    let w = widths.get(s);
    if (w === undefined) {
      if (widths.size > 10000) widths.clear();
      w = measure.measureText(s).width;
      widths.set(s, w);
    }
    if (w > max) max = w;
  }
  return Math.min(cap, max);
}

/**
 * {dpr, x0, y0, w, h, groupBand, colBand, cols, width, height}: the cells' corner (x0, y0) and size
 * (w x h, whole device pixels), the bands above them, the column labels' modes (`cols`, or null),
 * and the whole picture's size, for a heatmap's `cells` and `labels` options in `available` px.
 */
export function layout(o, available, dpr = window.devicePixelRatio || 1) {
  const g = place(o, available, dpr);
  const fit = canvasFit(g.width, g.height, dpr);
  return fit === dpr ? g : place(o, available, fit);
}

// A canvas past the browser's limits is drawn blank: 32,767 px a side, 268,435,456 px in all in
// Chromium (Firefox and Safari allow less area: 16,384² is the common bound). A picture that would
// be larger is painted at fewer device pixels per CSS pixel and stretched: coarser, never blank.
export const CANVAS_SIDE = 32_767;
export const CANVAS_AREA = 16_384 * 16_384;
export function canvasFit(width, height, dpr) {
  // (2 px to spare: the layout rounds the cells to whole device pixels.)
  const most = Math.min((CANVAS_SIDE - 2) / Math.max(1, width), (CANVAS_SIDE - 2) / Math.max(1, height), Math.sqrt((CANVAS_AREA - 4 * CANVAS_SIDE) / Math.max(1, width * height)));
  return most >= dpr ? dpr : most;
}

function place({ cells, labels = {} }, available, dpr) {
  const left = labels.rows ? textWidth(labels.rows, 110) + 8 : 0;
  const groupBand = labels.groups ? 16 : 0;
  const right = labels.sums ? 52 : 0;
  const room = Math.max(40, available - left - right - 2);
  const maxCell = cells.maxCell ?? 28;
  // A map with a smallest cell (minCell) grows past its width rather than shrink its labels below
  // readable; its view lets it scroll.
  const cw = Math.max(cells.minCell ?? 0, Math.min(maxCell, room / cells.cols));
  const ch = cells.rowHeight ?? (cells.square ? cw : clamp(cw, labels.rows ? 16 : 3, Math.max(maxCell, 16)));
  const cols = labels.cols ? columnLabels(labels.cols, cw) : null;
  const colBand = cols ? cols.band : labels.rows ? 14 : 0;
  const w = Math.max(1, Math.round(cw * cells.cols * dpr)) / dpr;
  const h = Math.max(1, Math.round(ch * cells.rows * dpr)) / dpr;
  return { dpr, x0: left, y0: groupBand + colBand, w, h, groupBand, colBand, cols, width: left + w + right, height: groupBand + colBand + h };
}

// A label's lines when stacked: one character each, a split character's part mark (昨¹) kept with it.
function stackLines(label) {
  const lines = [];
  for (const { segment } of graphemes.segment(label)) {
    if (/^[¹²³⁴]$/.test(segment) && lines.length) lines[lines.length - 1] += segment;
    else lines.push(segment);
  }
  return lines.length > STACK_MAX ? [...lines.slice(0, STACK_MAX - 1), '⋮'] : lines;
}

// How each column label is drawn ({mode: 'upright' | 'stacked' | 'rotated', lines}), and the
// height of the band they need.
// Once one label is turned, every word-length label of a turning script turns with it, so that the
// row does not switch direction from column to column ("␣more" standing, "␣than" lying); a single
// character (",", "I") and Chinese stay upright, as they read best.
// Chinese a little too wide for its column (中国 in a 24 px cell) is set smaller, side by side, rather
// than stacked, whose bottom line would read across the columns as a sentence of its own ("国的济在…");
// every Chinese label of the row takes that size (`size`), so none stands out. If one cannot fit at
// CJK_MIN px, the row's Chinese labels stack at full size (banded, heatmap_paint.js): Chinese at 8 or
// 9 px, where a 21 px column would set 中国 side by side, is too small to read.
const CJK_MIN = 10;
function columnLabels(labels, cw) {
  const turns = (label) => !UPRIGHT_SCRIPT.test(label) && [...graphemes.segment(label)].length > 1;
  const fits = labels.map((label) => textWidth([label], Infinity) <= cw - 4);
  const anyTurned = labels.some((label, c) => !fits[c] && !UPRIGHT_SCRIPT.test(label));
  const tooWide = labels.filter((label, c) => !fits[c] && UPRIGHT_SCRIPT.test(label));
  const base = Number(FONT.match(/(\d+)px/)[1]);
  const size = Math.min(base, ...tooWide.map((label) => Math.floor((base * (cw - 4)) / textWidth([label], Infinity))));
  const shrink = tooWide.length > 0 && size >= CJK_MIN;
  const modes = labels.map((label, c) => {
    if (shrink && UPRIGHT_SCRIPT.test(label)) return { mode: 'upright', size };
    if (fits[c] && !(anyTurned && turns(label))) return { mode: 'upright' };
    if (UPRIGHT_SCRIPT.test(label)) return { mode: 'stacked', lines: stackLines(label) };
    return { mode: 'rotated' };
  });
  const band = Math.max(
    16,
    ...modes.map((m, c) => (m.mode === 'stacked' ? m.lines.length * STACK_LINE + 6 : m.mode === 'rotated' ? textWidth([labels[c]], 90) + 8 : 16)),
  );
  return { modes, band };
}

/** The font for labels along cells `cell` px apart, and every how many labels fit. */
export function labelFont(cell) {
  const size = clamp(Math.floor(cell) - 1, 7, 11);
  return { font: FONT.replace('11px', `${size}px`), every: Math.ceil(size / cell) };
}

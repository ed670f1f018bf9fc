// A reusable canvas heatmap for one 2-D slice of a trace tensor (rows x cols, row-major).
// Cells are written into ImageData at device-pixel resolution, so the picture stays crisp at any
// devicePixelRatio: one table look-up per cell, one pixel row per row of cells, stretched down to
// the cells' height by drawImage; the hatching is pattern fills on top; labels are canvas text.
// A heatmap paints once it is in the page, at its real width: update() on a detached heatmap
// waits for the ResizeObserver, or for paintAll() from a view that wants it painted now.
// The caller gives the colour scale (parts/color_scale.js) so several heatmaps can share one.
// -∞ cells (causal mask) and cells at or below -1e8 (padding mask, -1e9) are hatched, never
// coloured; padded query rows get a light overlay. Hover or arrow keys show the exact value.
//
// Options for update():
//   data (Float32Array), rows, cols, scale,
//   rowLabels / colLabels: string[] or null (null: index ticks),
//   colGroups: {size, label(g)} to frame groups of columns (heads inside a [T, nH*d] row),
//   rowMask: 0/1 per row (0: padded query row), rowSums: bool,
//   maxCell: largest cell side in CSS px, square: bool,
//   describe(r, c): [key, value] pairs naming the cell for the tooltip,
//   onCellClick(r, c), legend: bool (default true), label: accessible name,
//   mark: {r, c} or null, a cell outlined for good (the pair a view is explaining).
// Text and gaps take the page's theme colours (style.css variables) at each paint.

import { el } from './dom.js';
import { axisLabel, exact, short } from './format.js';
import { isMasked } from './color_scale.js';
import { range } from './controls.js';
import { legend, marksOf } from './legend.js';
import { showTooltip, hideTooltip } from './tooltip.js';
import { exportable } from './figure_export.js';
import { t } from '../strings.js';

const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif';
const NEGINF = [0xff3a3a3a, 0xff8c8c8c]; // dark grey, light stripes (ABGR, little-endian)
const PADDING = [0xffd6d6d6, 0xff9e9e9e]; // light grey, darker stripes
const PADDED_ROW = 0xffc8c8c8;

// The theme's colours, resolved from style.css's variables (light-dark() included), so dark mode
// needs no second table: a hidden probe element takes each colour in turn. Each read restyles the
// page, so they are kept for as long as the theme (the button's pick, else the system's) holds.
let probe = null;
let themed = { key: null, colours: null };
const systemDark = matchMedia('(prefers-color-scheme: dark)');
function theme() {
  const key = `${document.documentElement.dataset.theme ?? ''}|${systemDark.matches}`;
  if (themed.key === key) return themed.colours;
  if (!probe) {
    probe = el('span', { hidden: true });
    document.body.append(probe);
  }
  const v = (name) => {
    probe.style.color = `var(${name})`;
    return getComputedStyle(probe).color;
  };
  const surface = v('--surface');
  themed = { key, colours: { gap: packed(surface), gapCss: surface, text: v('--ink-2'), faint: v('--ink-3'), rule: v('--line-2'), strong: v('--ink') } };
  return themed.colours;
}

// 'rgb(r, g, b)' as a little-endian ABGR pixel.
function packed(css) {
  const [r, g, b] = css.match(/\d+(\.\d+)?/g).map(Number);
  return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

export function heatmap() {
  const canvas = el('canvas', { className: 'heatmap-canvas', tabIndex: 0, attrs: { role: 'img' } });
  const focusBox = el('div', { className: 'heatmap-focus', hidden: true });
  const legendSlot = el('div', { className: 'heatmap-legend' });
  const node = el('div', { className: 'heatmap' }, el('div', { className: 'heatmap-stage' }, canvas, focusBox), legendSlot);
  let opts = null;
  let geo = null;
  let focus = null;
  let lastWidth = 0;

  // The first observation comes once the node is in the page: a heatmap updated while detached
  // paints then (lastWidth 0), unless paintAll() got to it first.
  const resize = new ResizeObserver(() => {
    if (opts && node.clientWidth !== lastWidth) draw();
  });
  resize.observe(node);

  // An export repaints at its own pixel ratio, so a 2x PNG has sharp cells and labels.
  exportable(canvas, (ratio) => {
    const copy = document.createElement('canvas');
    paint(copy, opts, layout(opts, lastWidth || 600, ratio));
    return copy;
  });

  function draw(width = node.clientWidth) {
    lastWidth = width;
    geo = layout(opts, lastWidth || 600);
    paint(canvas, opts, geo);
    canvas.setAttribute('aria-label', `${opts.label ?? ''}. ${t('heatmap.keys')}`);
    if (focus) place(focus.r, focus.c);
  }

  function cellAt(event) {
    if (!geo) return null;
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left - geo.x0;
    const y = event.clientY - rect.top - geo.y0;
    if (x < 0 || y < 0 || x >= geo.w || y >= geo.h) return null;
    return { r: Math.min(opts.rows - 1, Math.floor((y / geo.h) * opts.rows)), c: Math.min(opts.cols - 1, Math.floor((x / geo.w) * opts.cols)) };
  }

  function place(r, c) {
    focusBox.hidden = false;
    const cw = geo.w / opts.cols;
    const ch = geo.h / opts.rows;
    Object.assign(focusBox.style, {
      left: `${geo.x0 + c * cw - 1}px`,
      top: `${geo.y0 + r * ch - 1}px`,
      width: `${Math.max(cw, 2) + 2}px`,
      height: `${Math.max(ch, 2) + 2}px`,
    });
  }

  function show(cell, clientX, clientY) {
    focus = cell;
    place(cell.r, cell.c);
    const v = opts.data[cell.r * opts.cols + cell.c];
    const lines = opts.describe(cell.r, cell.c);
    const note = v === -Infinity ? t('tip.causal') : isMasked(v) ? t('tip.padding') : opts.rowMask && !opts.rowMask[cell.r] ? t('tip.paddedRow') : null;
    showTooltip(clientX, clientY, [...lines, [t('tip.value'), exact(v)], ...(note ? [note] : [])], exact(v));
  }

  function clear() {
    focus = null;
    focusBox.hidden = true;
    hideTooltip();
  }

  canvas.addEventListener('mousemove', (e) => {
    const cell = cellAt(e);
    if (cell) show(cell, e.clientX, e.clientY);
    else clear();
  });
  canvas.addEventListener('mouseleave', clear);
  canvas.addEventListener('blur', clear);
  canvas.addEventListener('click', (e) => {
    const cell = cellAt(e);
    if (cell && opts.onCellClick) opts.onCellClick(cell.r, cell.c);
  });
  canvas.addEventListener('keydown', (e) => {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], Home: [0, -Infinity], End: [0, Infinity] };
    if (e.key === 'Enter' && focus && opts.onCellClick) {
      opts.onCellClick(focus.r, focus.c);
      return;
    }
    if (!moves[e.key]) return;
    e.preventDefault();
    e.stopPropagation();
    const [dr, dc] = moves[e.key];
    const cell = focus ? { r: clamp(focus.r + dr, 0, opts.rows - 1), c: clamp(focus.c + dc, 0, opts.cols - 1) } : { r: 0, c: 0 };
    const rect = canvas.getBoundingClientRect();
    show(cell, rect.left + geo.x0 + ((cell.c + 1) * geo.w) / opts.cols, rect.top + geo.y0 + ((cell.r + 1) * geo.h) / opts.rows);
  });

  return {
    node,
    update(next) {
      opts = next;
      focus = null;
      focusBox.hidden = true;
      legendSlot.replaceChildren();
      if (opts.legend !== false) legendSlot.append(legend(opts.scale, marksOf(opts.data, opts.rowMask)));
      if (node.isConnected) draw();
      else lastWidth = 0;
    },
    // paintAll's two halves: the width to paint at (a layout read), and the paint (a write).
    width: () => (opts && !lastWidth ? node.clientWidth : null),
    paint: (width) => draw(width),
    destroy() {
      resize.disconnect();
      clear();
    },
  };
}

// Paints heatmaps updated while detached and now in the page, in the same task: every width is
// read before any canvas changes size, so the page is laid out once, not once per heatmap.
export function paintAll(maps) {
  const widths = maps.map((m) => m.width());
  maps.forEach((m, i) => {
    if (widths[i] !== null) m.paint(widths[i]);
  });
}

function clamp(v, lo, hi) {
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

// Where everything goes, in CSS pixels.
function layout(o, available, dpr = window.devicePixelRatio || 1) {
  const left = o.rowLabels ? textWidth(o.rowLabels, 110) + 8 : 0;
  const groupBand = o.colGroups ? 16 : 0;
  const right = o.rowSums ? 52 : 0;
  const room = Math.max(40, available - left - right - 2);
  const maxCell = o.maxCell ?? 28;
  const cw = Math.min(maxCell, room / o.cols);
  const ch = o.square ? cw : clamp(cw, o.rowLabels ? 16 : 3, Math.max(maxCell, 16));
  const cols = o.colLabels ? columnLabels(o.colLabels, cw) : null;
  const colBand = cols ? cols.band : o.rowLabels ? 14 : 0;
  const w = Math.max(1, Math.round(cw * o.cols * dpr)) / dpr;
  const h = Math.max(1, Math.round(ch * o.rows * dpr)) / dpr;
  return { dpr, x0: left, y0: groupBand + colBand, w, h, groupBand, colBand, cols, width: left + w + right, height: groupBand + colBand + h };
}

// Chinese, Japanese and Korean text and emoji are never laid on their side: such a column label
// that is wider than its cell stands upright with its characters stacked top to bottom. Other
// labels stand upright when they fit their cell (short words) and are turned on their side otherwise.
const UPRIGHT_SCRIPT = /[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]|\p{Extended_Pictographic}/u;
const STACK_LINE = 12;
const STACK_MAX = 6;
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

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
function columnLabels(labels, cw) {
  const modes = labels.map((label) => {
    if (textWidth([label], Infinity) <= cw - 4) return { mode: 'upright' };
    if (UPRIGHT_SCRIPT.test(label)) return { mode: 'stacked', lines: stackLines(label) };
    return { mode: 'rotated' };
  });
  const band = Math.max(
    16,
    ...modes.map((m, c) => (m.mode === 'stacked' ? m.lines.length * STACK_LINE + 6 : m.mode === 'rotated' ? textWidth([labels[c]], 90) + 8 : 16)),
  );
  return { modes, band };
}

// Small multiples keep every label: the font shrinks to the cell (down to 7 px) before labels are skipped.
function labelFont(cell) {
  const size = clamp(Math.floor(cell) - 1, 7, 11);
  return { font: FONT.replace('11px', `${size}px`), every: Math.ceil(size / cell) };
}

function paint(canvas, o, g) {
  const { dpr } = g;
  canvas.width = Math.round(g.width * dpr); // setting the size clears the canvas and its state
  canvas.height = Math.round(g.height * dpr);
  canvas.style.width = `${canvas.width / dpr}px`;
  canvas.style.height = `${canvas.height / dpr}px`;
  const ctx = canvas.getContext('2d');
  const colours = theme();
  drawCells(ctx, o, g, colours);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  drawGroups(ctx, o, g, colours);
  const drawn = drawLabels(ctx, o, g, colours);
  canvas.dataset.rotatedLabels = drawn.rotated.join('\n');
  canvas.dataset.skippedLabels = drawn.skipped;
  drawMark(ctx, o, g, colours);
}

function drawMark(ctx, o, g, colours) {
  if (!o.mark) return;
  const cw = g.w / o.cols;
  const ch = g.h / o.rows;
  ctx.lineWidth = 2;
  ctx.strokeStyle = colours.strong;
  ctx.strokeRect(g.x0 + o.mark.c * cw + 1, g.y0 + o.mark.r * ch + 1, Math.max(cw - 2, 2), Math.max(ch - 2, 2));
}

// Pixel x of a picture pw wide shows column floor(x * cols / pw): column c starts at edges[c].
function edges(n, size) {
  const at = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) at[i] = Math.ceil((i * size) / n);
  return at;
}

// One pixel row per row of cells, as wide as the picture, handed to drawImage as a bitmap.
const strip = new OffscreenCanvas(1, 1);

// The cells, in device pixels from the picture's corner. Scale colours and column gaps go into
// ImageData one pixel row per row of cells, and each row is stretched to its cells' height; the
// hatching (-∞ and padding cells, padded query rows) is filled over them with patterns, in runs
// of cells, and the gaps are restored over the hatching.
function drawCells(ctx, o, g, colours) {
  const { dpr } = g;
  const { data, rows, cols, scale, rowMask } = o;
  const pw = Math.round(g.w * dpr);
  const ph = Math.round(g.h * dpr);
  const xs = edges(cols, pw);
  const ys = edges(rows, ph);
  // A one-pixel gap between cells once they are big enough to read as separate squares.
  const gapX = pw / cols >= 8 * dpr ? 1 : 0;
  const gapY = ph / rows >= 8 * dpr ? 1 : 0;
  const image = ctx.createImageData(pw, rows);
  const pixels = new Uint32Array(image.data.buffer);
  const hatched = []; // [kind, r, c0, c1): runs of -∞ (1) or padding (2) cells
  for (let r = 0; r < rows; r++) {
    if (ys[r + 1] - gapY <= ys[r]) continue;
    const line = r * pw;
    let run = null;
    for (let c = 0; c < cols; c++) {
      const v = data[r * cols + c];
      const k = v === -Infinity || Number.isNaN(v) ? 1 : isMasked(v) ? 2 : 0;
      if (run && run[0] !== k) run = null;
      if (k) {
        if (run) run[3] = c + 1;
        else hatched.push((run = [k, r, c, c + 1]));
      } else if (xs[c + 1] > xs[c]) {
        pixels.fill(scale.packed(v), line + xs[c], line + xs[c + 1]);
      }
      if (gapX && xs[c + 1] > xs[c]) pixels[line + xs[c + 1] - 1] = colours.gap;
    }
  }
  if (strip.width < pw || strip.height < rows) {
    strip.width = Math.max(strip.width, pw);
    strip.height = Math.max(strip.height, rows);
  }
  strip.getContext('2d').putImageData(image, 0, 0);
  const rowsImage = strip.transferToImageBitmap();
  const x0 = Math.round(g.x0 * dpr);
  const y0 = Math.round(g.y0 * dpr);
  ctx.setTransform(1, 0, 0, 1, x0, y0); // device pixels from the picture's corner, where patterns start
  ctx.imageSmoothingEnabled = false;
  if (gapY) {
    ctx.fillStyle = colours.gapCss;
    ctx.fillRect(0, 0, pw, ph);
  }
  // A single source row stretched by whole pixels: every sample falls inside it, so this is exact.
  for (let r = 0; r < rows; r++) {
    const h = ys[r + 1] - ys[r] - gapY;
    if (h > 0) ctx.drawImage(rowsImage, 0, r, pw, 1, 0, ys[r], pw, h);
  }
  rowsImage.close();
  const stripe = Math.max(2, Math.round(2 * dpr));
  const padded = rowMask ? range(rows).filter((r) => !rowMask[r]) : [];
  ctx.fillStyle = hatch(ctx, 'paddedRow', stripe);
  for (const r of padded) ctx.fillRect(0, ys[r], pw, ys[r + 1] - ys[r] - gapY);
  for (const kind of [1, 2]) {
    ctx.fillStyle = hatch(ctx, kind === 1 ? 'neginf' : 'padding', stripe);
    for (const [k, r, c0, c1] of hatched) if (k === kind) ctx.fillRect(xs[c0], ys[r], xs[c1] - xs[c0], ys[r + 1] - ys[r] - gapY);
  }
  if ((hatched.length || padded.length) && (gapX || gapY)) {
    ctx.fillStyle = colours.gapCss;
    if (gapX) for (let c = 1; c <= cols; c++) ctx.fillRect(xs[c] - 1, 0, 1, ph);
    if (gapY) for (let r = 1; r <= rows; r++) ctx.fillRect(0, ys[r] - 1, pw, 1);
  }
}

// Diagonal stripes one period square, so that a repeating pattern continues them seamlessly:
// -∞ light on dark along x + y, padding dark on light along x - y, padded rows grey on nothing.
const HATCH = {
  neginf: { base: NEGINF[0], line: NEGINF[1], on: (x, y, p) => (x + y) % p },
  padding: { base: PADDING[0], line: PADDING[1], on: (x, y, p) => (x - y + p) % p },
  paddedRow: { base: 0, line: PADDED_ROW, on: (x, y, p) => (x + y) % p },
};
const tiles = new Map();
function hatch(ctx, name, stripe) {
  const key = `${name} ${stripe}`;
  if (!tiles.has(key)) {
    const { base, line, on } = HATCH[name];
    const period = stripe * 3;
    const tile = document.createElement('canvas');
    tile.width = tile.height = period;
    const tctx = tile.getContext('2d');
    const image = tctx.createImageData(period, period);
    const px = new Uint32Array(image.data.buffer);
    for (let y = 0; y < period; y++) for (let x = 0; x < period; x++) px[y * period + x] = on(x, y, period) < stripe ? line : base;
    tctx.putImageData(image, 0, 0);
    tiles.set(key, tile);
  }
  return ctx.createPattern(tiles.get(key), 'repeat');
}

function drawGroups(ctx, o, g, colours) {
  if (!o.colGroups) return;
  const { size, label } = o.colGroups;
  const n = Math.ceil(o.cols / size);
  const gw = (g.w * size) / o.cols;
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'center';
  for (let k = 0; k < n; k++) {
    const x = g.x0 + k * gw;
    ctx.fillStyle = colours.text;
    ctx.fillText(label(k), x + gw / 2, g.groupBand / 2, gw - 2);
    ctx.fillStyle = colours.rule;
    ctx.fillRect(x + 1, g.groupBand - 3, gw - 2, 1);
    if (k > 0) {
      ctx.fillStyle = colours.strong;
      ctx.fillRect(x - 0.75, g.y0, 1.5, g.h);
    }
  }
}

function drawLabels(ctx, o, g, colours) {
  ctx.font = FONT;
  ctx.fillStyle = colours.text;
  const cw = g.w / o.cols;
  const ch = g.h / o.rows;
  // What was drawn how, for the tests: labels laid on their side, and labels left out.
  const drawn = { rotated: [], skipped: 0 };
  if (o.rowLabels) {
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    const { font, every } = labelFont(ch);
    ctx.font = font;
    for (let r = 0; r < o.rows; r += every) ctx.fillText(o.rowLabels[r], g.x0 - 6, g.y0 + (r + 0.5) * ch, g.x0 - 8);
    drawn.skipped += o.rows - Math.ceil(o.rows / every);
  }
  if (o.colLabels) {
    const { font, every } = labelFont(cw);
    ctx.font = font;
    for (let c = 0; c < o.cols; c++) {
      const { mode, lines } = g.cols.modes[c];
      const x = g.x0 + (c + 0.5) * cw;
      if (mode !== 'upright' && c % every !== 0) {
        drawn.skipped++;
        continue;
      }
      ctx.textAlign = 'center';
      ctx.textBaseline = 'bottom';
      if (mode === 'upright') ctx.fillText(o.colLabels[c], x, g.y0 - 3);
      else if (mode === 'stacked') lines.forEach((line, k) => ctx.fillText(line, x, g.y0 - 3 - (lines.length - 1 - k) * STACK_LINE, cw + 2));
      else {
        drawn.rotated.push(o.colLabels[c]);
        ctx.save();
        ctx.translate(x, g.y0 - 6);
        ctx.rotate(-Math.PI / 2);
        ctx.textAlign = 'left';
        ctx.textBaseline = 'middle';
        ctx.fillText(o.colLabels[c], 0, 0, g.colBand - 8);
        ctx.restore();
      }
    }
    ctx.font = FONT;
  } else if (g.colBand) {
    // Index ticks: enough to find a column, few enough not to collide.
    const span = o.colGroups ? o.colGroups.size : o.cols;
    const step = niceStep(span, (span * cw) / 34);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    ctx.fillStyle = colours.faint;
    for (let start = 0; start < o.cols; start += span) {
      for (let local = 0; local < span && start + local < o.cols; local += step) {
        ctx.fillText(String(local), g.x0 + (start + local + 0.5) * cw, g.y0 - 2);
      }
    }
  }
  if (o.rowSums) {
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    ctx.fillStyle = colours.faint;
    ctx.fillText(t('heatmap.rowSum'), g.x0 + g.w + 6, g.y0 - 7);
    ctx.fillStyle = colours.text;
    for (let r = 0; r < o.rows; r++) ctx.fillText(short(rowSum(o.data, r, o.cols)), g.x0 + g.w + 6, g.y0 + (r + 0.5) * ch);
  }
  return drawn;
}

// Sum of a row's unmasked entries: 1 for a softmax row, the plain sum otherwise.
function rowSum(data, r, cols) {
  let s = 0;
  for (let c = 0; c < cols; c++) {
    const v = data[r * cols + c];
    if (!isMasked(v)) s += v;
  }
  return s;
}

function niceStep(span, slots) {
  const raw = span / Math.max(1, Math.floor(slots));
  for (const s of [1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 200, 256, 500, 512, 1000]) if (s >= raw) return s;
  return Math.ceil(raw / 1000) * 1000;
}

// The options every one-head attention heatmap shares: T query rows over S keys with the tokens on
// both axes (labels cut to `labelChars`), padded query rows marked by `mask`, square cells.
export function headCells({ data, T, S, pieces, mask, labelChars = 8 }) {
  const labels = pieces.map((p) => axisLabel(p, labelChars));
  return { data, rows: T, cols: S, rowLabels: labels.slice(0, T), colLabels: labels.slice(0, S), rowMask: mask, square: true };
}

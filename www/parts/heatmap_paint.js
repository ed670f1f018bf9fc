// Paints a heatmap onto a canvas at the places heatmap_layout.js gives, at any pixel ratio (the
// page's, or an export's). Cells are written into ImageData at device-pixel resolution, so the
// picture stays crisp: one table look-up per cell, one pixel row per row of cells, stretched down
// to the cells' height by drawImage; the hatching is pattern fills on top; labels, column groups,
// row sums and the marked cell are canvas text and strokes. -∞ cells (causal mask) and cells at or
// below -1e8 (padding mask, -1e9) are hatched, never coloured; padded query rows get a light
// overlay. Text and gaps take the page's theme colours (theme_colours.js) at each paint. An export's
// paint hands its text over as text (figure_export.js), so that a figure's labels are SVG text.

import { short } from './format.js';
import { isMasked } from './color_scale.js';
import { range } from './controls.js';
import { FONT, STACK_LINE, labelFont } from './heatmap_layout.js';
import { isDark, themeColours } from './theme_colours.js';
import { textRecorder } from './figure_export.js';
import { t } from '../strings.js';

const NEGINF = [0xff3a3a3a, 0xff8c8c8c]; // dark grey, light stripes (ABGR, little-endian)
const PADDING = [0xffd6d6d6, 0xff9e9e9e]; // light grey, darker stripes
const PADDED_ROW = 0xffc8c8c8;
const OFF = [0xff606060, 0xffa8a8a8]; // a knocked-out head's cell: stripes over its own colour, dark (light in dark mode)

/**
 * Paints heatmap options `o` ({cells, scale, labels, mark}) on `canvas` at layout `g`, resizing it.
 * `onText` (an export's): the text is handed to it instead of drawn (figure_export.js textRecorder).
 */
export function paint(canvas, o, g, onText = null) {
  const { dpr } = g;
  canvas.width = Math.round(g.width * dpr); // setting the size clears the canvas and its state
  canvas.height = Math.round(g.height * dpr);
  canvas.style.width = `${canvas.width / dpr}px`;
  canvas.style.height = `${canvas.height / dpr}px`;
  const ctx = onText ? textRecorder(canvas.getContext('2d'), onText) : canvas.getContext('2d');
  const colours = themeColours();
  const labels = o.labels ?? {};
  drawCells(ctx, o.cells, o.scale, g, colours);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  drawGroups(ctx, o.cells, labels, g, colours);
  const drawn = drawLabels(ctx, o.cells, labels, g, colours);
  canvas.dataset.rotatedLabels = drawn.rotated.join('\n');
  canvas.dataset.skippedLabels = drawn.skipped;
  canvas.dataset.labelOverlaps = drawn.overlaps;
  canvas.dataset.ticks = drawn.ticks.join('\n');
  canvas.dataset.rowSums = String(Boolean(labels.sums));
  canvas.dataset.cells = `${g.y0} ${g.h} ${g.x0} ${g.w}`; // where the cells start (px from the top) and their height, then from the left and their width
  canvas.dataset.bandedLabels = String(Boolean(drawn.banded));
  canvas.dataset.shrunkLabels = drawn.shrunk ? String(drawn.shrunk) : 'false'; // the smallest size set, px
  canvas.dataset.guides = o.guides ? [o.guides.split, ...(o.guides.diagonals ?? []).map((d) => `${d.side} ${d.back} from ${d.from}`), ...(o.guides.colBreak ? [`break ${o.guides.colBreak}`] : [])].join('\n') : '';
  drawGuides(ctx, o.cells, o.guides, g, colours);
  drawValues(ctx, o.cells, o.scale, g);
  canvas.dataset.values = String(Boolean(o.cells.values) && valuesFit(o.cells, g));
  drawMark(ctx, o.cells, o.mark, g, colours);
}

// Whether each cell has room for its number (`cells.values`, a small map such as head attribution's).
function valuesFit(cells, g) {
  return g.w / cells.cols >= 30 && g.h / cells.rows >= 16;
}

// `cells.values(v)`, where given and there is room, written in each cell that is not knocked out,
// dark on a light colour and white on a dark one.
function drawValues(ctx, cells, scale, g) {
  if (!cells.values || !valuesFit(cells, g)) return;
  const cw = g.w / cells.cols;
  const ch = g.h / cells.rows;
  ctx.save();
  ctx.font = `${Math.min(12, Math.floor(ch * 0.6))}px ui-monospace, SFMono-Regular, Menlo, monospace`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  for (let r = 0; r < cells.rows; r++) {
    for (let c = 0; c < cells.cols; c++) {
      const k = r * cells.cols + c;
      const v = cells.data[k];
      if (cells.off?.has(k) || !Number.isFinite(v)) continue;
      const p = scale.packed(v);
      // The packed colour is RGBA in memory order (ImageData's), so red is the lowest byte.
      const light = 0.299 * (p & 255) + 0.587 * ((p >>> 8) & 255) + 0.114 * ((p >>> 16) & 255) > 140;
      ctx.fillStyle = light ? '#1d232d' : '#ffffff';
      ctx.fillText(cells.values(v), g.x0 + (c + 0.5) * cw, g.y0 + (r + 0.5) * ch, cw - 4);
    }
  }
  ctx.restore();
}

// Guides over the cells (the induction probe's): `split`, a rule before row and column `split`
// (where a repeat begins); `diagonals`, dashed lines along the cells (i, i − back) for rows from
// `from` on, each along one side of its stripe so as not to cover it: 'upper' runs along the
// cells' top-right corners, 'lower' along their bottom-left ones.
function drawGuides(ctx, cells, guides, g, colours) {
  if (!guides) return;
  const cw = g.w / cells.cols;
  const ch = g.h / cells.rows;
  ctx.save();
  ctx.beginPath();
  ctx.rect(g.x0, g.y0, g.w, g.h);
  ctx.clip();
  // colBreak: a gap before column `colBreak`, where the columns jump (a window's pinned first key).
  if (guides.colBreak) {
    ctx.fillStyle = colours.gapCss;
    ctx.fillRect(g.x0 + guides.colBreak * cw - 2, g.y0, 4, g.h);
    ctx.fillStyle = colours.strong;
    ctx.fillRect(g.x0 + guides.colBreak * cw - 0.5, g.y0, 1, g.h);
  }
  if (guides.split) {
    ctx.fillStyle = colours.strong;
    ctx.fillRect(g.x0, g.y0 + guides.split * ch - 0.75, g.w, 1.5);
    ctx.fillRect(g.x0 + guides.split * cw - 0.75, g.y0, 1.5, g.h);
  }
  for (const { back, from, side } of guides.diagonals ?? []) {
    const [dx, dy] = side === 'upper' ? [1, 0] : [0, 1];
    const x = (i) => g.x0 + (i - back + dx) * cw;
    const y = (i) => g.y0 + (i + dy) * ch;
    const last = cells.rows - 1;
    ctx.setLineDash([4, 3]);
    for (const [width, colour] of [[3, colours.strong], [1, colours.gapCss]]) {
      ctx.lineWidth = width;
      ctx.strokeStyle = colour;
      ctx.beginPath();
      ctx.moveTo(x(from - dy), y(from - dy));
      ctx.lineTo(x(last + 1 - dy), y(last + 1 - dy));
      ctx.stroke();
    }
  }
  ctx.restore();
}

function drawMark(ctx, cells, mark, g, colours) {
  if (!mark) return;
  const cw = g.w / cells.cols;
  const ch = g.h / cells.rows;
  // c null: the whole row (the query a view follows).
  const row = mark.c === null || mark.c === undefined;
  // {rows, cols}: a frame over that many cells (an overview's window, map_window.js).
  const [nr, nc] = [mark.rows ?? 1, mark.cols ?? 1];
  const box = [g.x0 + (row ? 0 : mark.c * cw) + 1, g.y0 + mark.r * ch + 1, Math.max((row ? g.w : nc * cw) - 2, 2), Math.max(nr * ch - 2, 2)];
  // The ink's line with the page's surface inside it: seen on dark cells and on light ones.
  ctx.lineWidth = 3;
  ctx.strokeStyle = colours.strong;
  ctx.strokeRect(...box);
  ctx.lineWidth = 1;
  ctx.strokeStyle = colours.gapCss;
  ctx.strokeRect(...box);
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
function drawCells(ctx, { data, rows, cols, rowMask, off = null }, scale, g, colours) {
  const { dpr } = g;
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
  ctx.fillStyle = hatch(ctx, isDark() ? 'offDark' : 'off', stripe);
  for (const k of off ?? []) {
    const [r, c] = [Math.floor(k / cols), k % cols];
    ctx.fillRect(xs[c], ys[r], xs[c + 1] - xs[c], ys[r + 1] - ys[r] - gapY);
  }
  for (const kind of [1, 2]) {
    ctx.fillStyle = hatch(ctx, kind === 1 ? 'neginf' : 'padding', stripe);
    for (const [k, r, c0, c1] of hatched) if (k === kind) ctx.fillRect(xs[c0], ys[r], xs[c1] - xs[c0], ys[r + 1] - ys[r] - gapY);
  }
  if ((hatched.length || padded.length || off?.size) && (gapX || gapY)) {
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
  off: { base: 0, line: OFF[0], on: (x, y, p) => (x - y + p) % p },
  offDark: { base: 0, line: OFF[1], on: (x, y, p) => (x - y + p) % p },
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

function drawGroups(ctx, cells, { groups }, g, colours) {
  if (!groups) return;
  const { size, label } = groups;
  const n = Math.ceil(cells.cols / size);
  const cw = g.w / cells.cols;
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  ctx.textAlign = 'center';
  for (let k = 0; k < n; k++) {
    const x = g.x0 + k * size * cw;
    // The last group may be short (a last tile of fewer keys): its label and rule span only its columns,
    // and a label too wide for them gives way to its short form (groups.short), where there is one.
    const gw = Math.min(size, cells.cols - k * size) * cw;
    const full = label(k);
    const text = groups.short && ctx.measureText(full).width > gw - 2 ? groups.short(k) : full;
    ctx.fillStyle = colours.text;
    ctx.fillText(text, x + gw / 2, g.groupBand / 2, gw - 2);
    ctx.fillStyle = colours.rule;
    ctx.fillRect(x + 1, g.groupBand - 3, gw - 2, 1);
    if (k > 0) {
      ctx.fillStyle = colours.strong;
      ctx.fillRect(x - 0.75, g.y0, 1.5, g.h);
    }
  }
}

function drawLabels(ctx, cells, labels, g, colours) {
  const { rows, cols } = cells;
  ctx.font = FONT;
  ctx.fillStyle = colours.text;
  const cw = g.w / cols;
  const ch = g.h / rows;
  // What was drawn how, for the tests: labels laid on their side, labels left out, index ticks
  // ("text left right" in CSS px).
  const drawn = { rotated: [], skipped: 0, ticks: [], overlaps: 0 };
  // Each drawn label's extent across its axis ([from, to], CSS px), to count any two that overlap.
  const spans = { rows: [], cols: [] };
  const px = () => Number(ctx.font.match(/(\d+)px/)[1]);
  if (labels.rows) {
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    const { font, every } = labelFont(ch);
    ctx.font = font;
    for (let r = 0; r < rows; r += every) {
      const y = g.y0 + (r + 0.5) * ch;
      ctx.fillText(labels.rows[r], g.x0 - 6, y, g.x0 - 8);
      spans.rows.push([y - px() / 2, y + px() / 2]);
    }
    drawn.skipped += rows - Math.ceil(rows / every);
  }
  if (labels.cols) {
    const { font, every } = labelFont(cw);
    ctx.font = font;
    // Where a token of two or more characters stands stacked (中 over 国), the bottom line of the
    // labels reads across the columns as a sentence of its own ("国的济在…"): every other column's
    // label gets a faint band, so that each column's characters read as one token.
    // (Where only every few labels are drawn, they stand apart already.)
    // Chinese set small side by side ("中国的经济") is banded too, for the same reason.
    if (every === 1 && g.cols.modes.some((m) => (m.mode === 'stacked' && m.lines.length > 1) || m.size)) {
      ctx.fillStyle = colours.band;
      for (let c = 1; c < cols; c += 2) ctx.fillRect(g.x0 + c * cw, g.y0 - g.colBand + 2, cw, g.colBand - 2);
      ctx.fillStyle = colours.text;
      drawn.banded = true;
    }
    for (let c = 0; c < cols; c++) {
      const { mode, lines, size } = g.cols.modes[c];
      const x = g.x0 + (c + 0.5) * cw;
      if (mode !== 'upright' && c % every !== 0) {
        drawn.skipped++;
        continue;
      }
      ctx.textAlign = 'center';
      ctx.textBaseline = 'bottom';
      if (mode === 'upright' && size) {
        const px = Math.min(size, Number(font.match(/(\d+)px/)[1]));
        ctx.font = FONT.replace(/\d+px/, `${px}px`);
        ctx.fillText(labels.cols[c], x, g.y0 - 3);
        spans.cols.push(across(ctx, labels.cols[c], x, Infinity));
        ctx.font = font;
        drawn.shrunk = Math.min(drawn.shrunk || Infinity, px);
      } else if (mode === 'upright') {
        ctx.fillText(labels.cols[c], x, g.y0 - 3);
        spans.cols.push(across(ctx, labels.cols[c], x, Infinity));
      } else if (mode === 'stacked') {
        lines.forEach((line, k) => ctx.fillText(line, x, g.y0 - 3 - (lines.length - 1 - k) * STACK_LINE, cw + 2));
        spans.cols.push(...lines.map((line) => across(ctx, line, x, cw + 2)));
      } else {
        spans.cols.push([x - px() / 2, x + px() / 2]);
        drawn.rotated.push(labels.cols[c]);
        ctx.save();
        ctx.translate(x, g.y0 - 6);
        ctx.rotate(-Math.PI / 2);
        ctx.textAlign = 'left';
        ctx.textBaseline = 'middle';
        ctx.fillText(labels.cols[c], 0, 0, g.colBand - 8);
        ctx.restore();
      }
    }
    ctx.font = FONT;
  } else if (g.colBand) {
    // Index ticks: enough to find a column, few enough not to collide.
    const span = labels.groups ? labels.groups.size : cols;
    const step = niceStep(span, (span * cw) / 34);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    ctx.fillStyle = colours.faint;
    for (let start = 0; start < cols; start += span) {
      for (let local = 0; local < span && start + local < cols; local += step) {
        // Centred over its column, but kept inside the canvas: the last tick ("190" of 192 columns)
        // is wider than the cells to its right.
        const text = String(local);
        const half = ctx.measureText(text).width / 2;
        const x = Math.min(g.x0 + (start + local + 0.5) * cw, g.width - half - 1);
        ctx.fillText(text, x, g.y0 - 2);
        drawn.ticks.push(`${text} ${(x - half).toFixed(1)} ${(x + half).toFixed(1)}`);
      }
    }
  }
  if (labels.sums) {
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    ctx.fillStyle = colours.faint;
    ctx.fillText(t('heatmap.rowSum'), g.x0 + g.w + 6, g.y0 - 7);
    ctx.fillStyle = colours.text;
    // Given sums (an array) are the whole rows' where the cells are a window of them (map_window.js).
    for (let r = 0; r < rows; r++) ctx.fillText(short(Array.isArray(labels.sums) ? labels.sums[r] : rowSum(cells.data, r, cols)), g.x0 + g.w + 6, g.y0 + (r + 0.5) * ch);
  }
  drawn.overlaps = overlaps(spans.rows) + overlaps(spans.cols);
  return drawn;
}

// A label's extent along the row of labels: its drawn width (fillText squeezes it to `most`) about x.
function across(ctx, text, x, most) {
  const half = Math.min(most, ctx.measureText(text).width) / 2;
  return [x - half, x + half];
}

// How many labels start before the one drawn before them ends (stacked lines of one label share a column).
function overlaps(spans) {
  let n = 0;
  let end = -Infinity;
  let last = null;
  for (const [from, to] of spans.sort((a, b) => a[0] - b[0])) {
    const centre = (from + to) / 2;
    if (last !== null && Math.abs(centre - last) > 0.01 && from < end - 0.5) n++;
    if (last === null || Math.abs(centre - last) > 0.01) end = to;
    else end = Math.max(end, to);
    last = centre;
  }
  return n;
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

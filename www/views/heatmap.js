// A reusable canvas heatmap for one 2-D slice of a trace tensor (rows x cols, row-major).
// Cells are written into ImageData at device-pixel resolution, so the picture stays crisp at any
// devicePixelRatio and costs one table look-up per pixel; labels are drawn as canvas text.
// The caller gives the colour scale (views/color_scale.js) so several heatmaps can share one.
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
import { exact, short } from './format.js';
import { isMasked } from './color_scale.js';
import { legend, marksOf } from './legend.js';
import { showTooltip, hideTooltip } from './tooltip.js';
import { exportable } from './figure_export.js';
import { t } from '../strings.js';

const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei", sans-serif';
const NEGINF = [0xff3a3a3a, 0xff8c8c8c]; // dark grey, light stripes (ABGR, little-endian)
const PADDING = [0xffd6d6d6, 0xff9e9e9e]; // light grey, darker stripes
const PADDED_ROW = 0xffc8c8c8;

// The theme's colours, resolved from style.css's variables (light-dark() included) when a heatmap
// paints, so dark mode needs no second table: a hidden probe element takes each colour in turn.
let probe = null;
function theme() {
  if (!probe) {
    probe = el('span', { hidden: true });
    document.body.append(probe);
  }
  const v = (name) => {
    probe.style.color = `var(${name})`;
    return getComputedStyle(probe).color;
  };
  return { gap: packed(v('--surface')), text: v('--ink-2'), faint: v('--ink-3'), rule: v('--line-2'), strong: v('--ink') };
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

  function draw() {
    lastWidth = node.clientWidth;
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
      draw();
    },
    destroy() {
      resize.disconnect();
      clear();
    },
  };
}

function clamp(v, lo, hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

const measure = document.createElement('canvas').getContext('2d');

function textWidth(labels, cap) {
  measure.font = FONT;
  return Math.min(cap, Math.max(0, ...labels.map((s) => measure.measureText(s).width)));
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
  // Column labels stand upright when every one fits its cell (short words, CJK characters),
  // and are turned on their side otherwise.
  const labelWidth = o.colLabels ? textWidth(o.colLabels, 90) : 0;
  const upright = labelWidth <= cw - 4;
  const colBand = o.colLabels ? (upright ? 16 : labelWidth + 8) : o.rowLabels ? 14 : 0;
  const w = Math.max(1, Math.round(cw * o.cols * dpr)) / dpr;
  const h = Math.max(1, Math.round(ch * o.rows * dpr)) / dpr;
  return { dpr, x0: left, y0: groupBand + colBand, w, h, groupBand, colBand, upright, width: left + w + right, height: groupBand + colBand + h };
}

function paint(canvas, o, g) {
  const { dpr } = g;
  canvas.width = Math.round(g.width * dpr);
  canvas.height = Math.round(g.height * dpr);
  canvas.style.width = `${canvas.width / dpr}px`;
  canvas.style.height = `${canvas.height / dpr}px`;
  const ctx = canvas.getContext('2d');
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const colours = theme();
  const pw = Math.round(g.w * dpr);
  const ph = Math.round(g.h * dpr);
  const image = ctx.createImageData(pw, ph);
  fillCells(new Uint32Array(image.data.buffer), pw, ph, o, dpr, colours.gap);
  ctx.putImageData(image, Math.round(g.x0 * dpr), Math.round(g.y0 * dpr));
  ctx.scale(dpr, dpr);
  drawGroups(ctx, o, g, colours);
  drawLabels(ctx, o, g, colours);
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

function fillCells(pixels, pw, ph, o, dpr, gap) {
  const { data, rows, cols, scale, rowMask } = o;
  const colOf = new Int32Array(pw);
  const rowOf = new Int32Array(ph);
  for (let x = 0; x < pw; x++) colOf[x] = Math.floor((x * cols) / pw);
  for (let y = 0; y < ph; y++) rowOf[y] = Math.floor((y * rows) / ph);
  // A one-pixel gap between cells once they are big enough to read as separate squares.
  const gapX = pw / cols >= 8 * dpr ? 1 : 0;
  const gapY = ph / rows >= 8 * dpr ? 1 : 0;
  const colour = new Uint32Array(rows * cols);
  const kind = new Uint8Array(rows * cols); // 0 scale, 1 -∞, 2 padding mask
  for (let i = 0; i < colour.length; i++) {
    const v = data[i];
    if (v === -Infinity || Number.isNaN(v)) kind[i] = 1;
    else if (isMasked(v)) kind[i] = 2;
    else colour[i] = scale.packed(v);
  }
  const stripe = Math.max(2, Math.round(2 * dpr));
  const period = stripe * 3;
  for (let y = 0; y < ph; y++) {
    const r = rowOf[y];
    const rowGap = gapY && (y === ph - 1 || rowOf[y + 1] !== r);
    const padded = rowMask && !rowMask[r];
    for (let x = 0; x < pw; x++) {
      const c = colOf[x];
      const at = y * pw + x;
      if (rowGap || (gapX && (x === pw - 1 || colOf[x + 1] !== c))) {
        pixels[at] = gap;
        continue;
      }
      const i = r * cols + c;
      const k = kind[i];
      if (k === 1) pixels[at] = NEGINF[(x + y) % period < stripe ? 1 : 0];
      else if (k === 2) pixels[at] = PADDING[(((x - y) % period) + period) % period < stripe ? 1 : 0];
      else if (padded && (x + y) % period < stripe) pixels[at] = PADDED_ROW;
      else pixels[at] = colour[i];
    }
  }
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
  if (o.rowLabels) {
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    const every = Math.ceil(12 / ch);
    for (let r = 0; r < o.rows; r += every) ctx.fillText(o.rowLabels[r], g.x0 - 6, g.y0 + (r + 0.5) * ch, g.x0 - 8);
  }
  if (o.colLabels && g.upright) {
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    for (let c = 0; c < o.cols; c++) ctx.fillText(o.colLabels[c], g.x0 + (c + 0.5) * cw, g.y0 - 3);
  } else if (o.colLabels) {
    const every = Math.ceil(12 / cw);
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    for (let c = 0; c < o.cols; c += every) {
      ctx.save();
      ctx.translate(g.x0 + (c + 0.5) * cw, g.y0 - 6);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText(o.colLabels[c], 0, 0, g.colBand - 8);
      ctx.restore();
    }
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

// A small SVG line chart: x numeric, one or more series on one y axis, vertical markers for the points
// a view wants to point at (the model's own √d, the current distance). Focus it and ←/→ move a cursor
// along x; the shared tooltip, a live region, reads every series at that x, as hovering does.

import { svg } from './dom.js';
import { exact, short } from './format.js';
import { showTooltip, hideTooltip } from './tooltip.js';
import { t } from '../strings.js';

const SUPERSCRIPT = '⁰¹²³⁴⁵⁶⁷⁸⁹';

// Two to four round values (steps of 1, 2 or 5 times a power of ten) inside [lo, hi], for a linear
// axis: −8, −6, −4 rather than −8.13, −6.47, −4.8. Falls back to the ends.
function niceTicks(lo, hi) {
  const span = hi - lo;
  const mag = 10 ** Math.floor(Math.log10(span / 3));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((st) => span / st <= 4);
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + span * 1e-9; v += step) ticks.push(+v.toPrecision(12));
  return ticks.length >= 2 ? ticks : [lo, hi];
}
// A power of ten as a log axis labels it: 1, 10, 10², 10³ …
const decade = (k) => (k === 0 ? '1' : k === 1 ? '10' : `10${[...String(k)].map((c) => (c === '-' ? '⁻' : SUPERSCRIPT[c])).join('')}`);

const PAD = { left: 62, right: 12, top: 12, bottom: 34 };

// xs: numbers (increasing); series: [{name, values, className}]; markers: [{x, label}];
// logX, logY: that axis on a log scale (values must then be positive). Returns {node}.
export function lineChart({ xs, series, markers = [], xLabel, yLabel, label, width = 560, height = 220, logX = false, logY = false }) {
  const fy = logY ? Math.log10 : (v) => v;
  const finite = series.flatMap((s) => Array.from(s.values, fy)).filter(Number.isFinite);
  let lo = Math.min(...finite);
  let hi = Math.max(...finite);
  if (lo === hi) [lo, hi] = [lo - 1, hi + 1];
  // A little room above and below the curves, so none runs along the frame; with markers, a band
  // on top for their labels (a curve's peak under a label would hide behind its halo).
  const span = hi - lo;
  [lo, hi] = [lo - 0.04 * span, hi + (markers.length ? 0.16 : 0.04) * span];
  const fx = logX ? Math.log : (v) => v;
  const [x0, x1] = [fx(xs[0]), fx(xs[xs.length - 1])];
  const w = width - PAD.left - PAD.right;
  const h = height - PAD.top - PAD.bottom;
  const px = (v) => PAD.left + ((fx(v) - x0) / (x1 - x0 || 1)) * w;
  // Markers on the same point are one line with their labels joined ("τ = √d" when the divisor is
  // set to √d), not two labels stacked on one line.
  const marks = [];
  for (const m of markers) {
    const same = marks.find((o) => Math.abs(px(o.x) - px(m.x)) < 0.5);
    if (same) same.label = `${m.label} = ${same.label}`;
    else marks.push({ ...m });
  }
  const py = (v) => PAD.top + (1 - (fy(v) - lo) / (hi - lo)) * h;

  const path = (values) =>
    xs
      .map((x, i) => (Number.isFinite(fy(values[i])) ? `${px(x).toFixed(1)},${py(values[i]).toFixed(1)}` : null))
      .filter(Boolean)
      .map((p, i) => `${i ? 'L' : 'M'}${p}`)
      .join('');
  // A log axis is marked at its whole powers of ten (written 10², 10³), and says it is one.
  const decades = logY ? Array.from({ length: Math.max(0, Math.floor(hi) - Math.ceil(lo) + 1) }, (_, n) => Math.ceil(lo) + n) : [];
  const ticks = decades.length >= 2 ? decades.map((k) => 10 ** k) : logY ? [lo, (lo + hi) / 2, hi].map((v) => 10 ** v) : niceTicks(lo, hi);
  const tickText = (v) => (decades.length >= 2 ? decade(Math.round(Math.log10(v))) : short(v));
  const yName = logY ? t('chart.logScale', { label: yLabel }) : yLabel;
  const xTicks = [xs[0], xs[Math.floor((xs.length - 1) / 2)], xs[xs.length - 1]];
  const cursor = svg('line', { class: 'chart-cursor', y1: PAD.top, y2: PAD.top + h, visibility: 'hidden' });
  const node = svg(
    'svg',
    { class: 'line-chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': label, tabindex: 0 },
    svg('rect', { class: 'chart-frame', x: PAD.left, y: PAD.top, width: w, height: h }),
    ticks.map((v) => [
      svg('line', { class: 'chart-grid', x1: PAD.left, x2: PAD.left + w, y1: py(v), y2: py(v) }),
      svg('text', { class: 'chart-tick', x: PAD.left - 6, y: py(v), 'text-anchor': 'end', 'dominant-baseline': 'middle' }, tickText(v)),
    ]),
    xTicks.map((v) => svg('text', { class: 'chart-tick', x: px(v), y: PAD.top + h + 14, 'text-anchor': 'middle' }, short(v))),
    svg('text', { class: 'chart-axis', x: PAD.left + w / 2, y: height - 4, 'text-anchor': 'middle' }, xLabel),
    svg('text', { class: 'chart-axis', x: 10, y: PAD.top + h / 2, 'text-anchor': 'middle', 'dominant-baseline': 'hanging', transform: `rotate(-90 10 ${PAD.top + h / 2})` }, yName),
    marks.map((m) => svg('line', { class: 'chart-marker', x1: px(m.x), x2: px(m.x), y1: PAD.top, y2: PAD.top + h })),
    series.map((s) => svg('path', { class: `chart-line ${s.className ?? ''}`, d: path(s.values) })),
    // The labels over the lines, on a halo of the page's colour, so a curve never runs through one; a
    // label within a few pixels of an earlier marker's goes one line lower, so the two never overprint.
    marks.map((m, n) =>
      svg('text', { class: 'chart-marker-label', x: px(m.x) + 4, y: PAD.top + 10 + 14 * marks.slice(0, n).filter((o) => Math.abs(px(o.x) - px(m.x)) < 28).length }, m.label),
    ),
    cursor,
  );

  let at = null;
  const show = (i, clientX, clientY) => {
    at = i;
    cursor.setAttribute('x1', px(xs[i]));
    cursor.setAttribute('x2', px(xs[i]));
    cursor.setAttribute('visibility', 'visible');
    showTooltip(clientX, clientY, [[xLabel, exact(xs[i])], ...series.map((s) => [s.name, exact(s.values[i])])], exact(series[0].values[i]));
  };
  const nearest = (clientX) => {
    const rect = node.getBoundingClientRect();
    const x = ((clientX - rect.left) / rect.width) * width;
    let best = 0;
    xs.forEach((v, i) => {
      if (Math.abs(px(v) - x) < Math.abs(px(xs[best]) - x)) best = i;
    });
    return best;
  };
  const hide = () => {
    at = null;
    cursor.setAttribute('visibility', 'hidden');
    hideTooltip();
  };
  node.addEventListener('mousemove', (e) => show(nearest(e.clientX), e.clientX, e.clientY));
  node.addEventListener('mouseleave', hide);
  node.addEventListener('blur', hide);
  node.addEventListener('keydown', (e) => {
    const step = { ArrowLeft: -1, ArrowRight: 1, Home: -xs.length, End: xs.length }[e.key];
    if (!step) return;
    e.preventDefault();
    e.stopPropagation();
    const i = Math.max(0, Math.min(xs.length - 1, at === null ? 0 : at + step));
    const rect = node.getBoundingClientRect();
    show(i, rect.left + (px(xs[i]) / width) * rect.width, rect.top + PAD.top);
  });
  return { node };
}

// Figure export: the current view as SVG (for papers and slides) and as PNG at 2x. Any view can be
// exported, including ones added later, because the SVG is built from what the page has laid out:
// text nodes become real SVG <text> at their line positions, boxes with a background or border
// become <rect>s, inline SVG (token lines) is copied with its computed styles, and each canvas
// (a heatmap) becomes an <image> of its bitmap — repainted at the export scale when the canvas
// registered a repaint (heatmap.js does), so cells stay sharp at 2x, and with the repaint's text
// (labels, row sums, values) left out of the bitmap and written as SVG <text> over it, each where the
// canvas would have drawn it (textRecorder).
// Controls (the toolbar, buttons, selects) are left out: a figure shows tensors, not widgets; a
// button that is part of the figure (the overview's tokens box) says so with data-figure.
// A figure is exported whole: a box that scrolls sideways (the logit lens's positions, the head
// grid's heads, the knock-out board) has the room it needs while the figure is read, the view laid
// out that much wider (up to MAX_WIDTH). A box that still scrolls or hides its overflow (the Q·K
// terms table, which scrolls down) is exported as it looks on screen: its content, at its scroll
// position, clipped to the box (an SVG clipPath), so nothing is drawn over what follows it.
// What is not the figure is left out (.exporting, style.css and share.css): the controls, and the
// view's explanations, hints and instructions, the list an embed's "figure only" leaves out.
// The link to the state is kept in the SVG's <desc>, so a figure can be reopened.

import { svg } from './dom.js';

const SCALE = 2;
const MARGIN = 16;
const TITLE_BAND = 30;
const SUBTITLE_BAND = 20;
// The widest a figure is laid out for its export, in CSS px.
const MAX_WIDTH = 4000;
// .how-to: a line that says how to use the page ("Click a row…"), which a figure cannot do; .lesson-share:
// the Share panel a lesson shows under its bar (views/lessons.js).
const SKIP = '.toolbar, .how-to, .lesson-share, button:not([data-figure]), select, input, textarea, .heatmap-focus, script, style, template';

const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const repaints = new WeakMap();

/**
 * Registers how a canvas repaints itself at a pixel ratio, for sharp exports: repaint(ratio, onText)
 * returns a canvas; where it draws through textRecorder(ctx, onText), its text comes out as SVG text.
 */
export function exportable(canvas, repaint) {
  repaints.set(canvas, repaint);
}

/**
 * A 2D context that draws everything but its text: each fillText is handed to `sink` instead, with
 * the context's font, colour, alignment and transform at that moment, for an export to write it as
 * SVG text (canvasText).
 */
export function textRecorder(ctx, sink) {
  return new Proxy(ctx, {
    get(target, key) {
      if (key === 'fillText') {
        return (text, x, y, maxWidth) => {
          const said = String(text);
          const m = target.measureText(said);
          sink({ text: said, x, y, maxWidth, width: m.width, rise: m.alphabeticBaseline ?? 0, font: target.font, fill: target.fillStyle, align: target.textAlign, matrix: target.getTransform() });
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set(target, key, value) {
      target[key] = value;
      return true;
    },
  });
}

const ANCHOR = { left: 'start', start: 'start', right: 'end', end: 'end', center: 'middle' };

// A canvas's recorded text (textRecorder) as SVG text over its image at `box` (CSS px): the canvas's
// transform, from its device pixels at `ratio`, becomes the text's, so a label turned on its side
// stays turned; the canvas's baseline becomes the alphabetic one SVG uses, and a text the canvas
// squeezed into a maxWidth is squeezed as much.
function canvasText({ text, x, y, maxWidth, width, rise, font, fill, align, matrix: m }, box, ratio, at) {
  const [, style = '', weight = '', size = '11', family = 'sans-serif'] = /^(?:(italic|oblique)\s+)?(?:(bold|\d{3})\s+)?([\d.]+)px\s+(.+)$/.exec(font) ?? [];
  const k = 1 / ratio;
  const matrix = [m.a * k, m.b * k, m.c * k, m.d * k, m.e * k + at.x(box.left), m.f * k + at.y(box.top)].map((v) => +v.toFixed(3));
  const squeezed = maxWidth !== undefined && width > maxWidth ? { textLength: +maxWidth.toFixed(2), lengthAdjust: 'spacingAndGlyphs' } : {};
  return svg(
    'text',
    {
      x: +x.toFixed(2),
      y: +(y - rise).toFixed(2),
      transform: `matrix(${matrix.join(' ')})`,
      'font-family': family,
      'font-size': `${size}px`,
      ...(weight ? { 'font-weight': weight === 'bold' ? '700' : weight } : {}),
      ...(style ? { 'font-style': style } : {}),
      'text-anchor': ANCHOR[align] ?? 'start',
      ...(fillAttrs(typeof fill === 'string' ? fill : '') ?? { fill: 'currentColor' }),
      ...squeezed,
    },
    text,
  );
}

// '#rgb', 'rgb()' or 'rgba()' → {color, opacity}; transparent → null.
function colour(css) {
  const m = /rgba?\(([^)]+)\)/.exec(css);
  if (!m) return css && css !== 'transparent' ? { color: css, opacity: 1 } : null;
  const [r, g, b, a = '1'] = m[1].split(/[\s,/]+/).filter(Boolean);
  const opacity = Number(a);
  return opacity > 0 ? { color: `rgb(${r},${g},${b})`, opacity } : null;
}

function fillAttrs(css, prefix = 'fill') {
  const c = colour(css);
  if (!c) return null;
  return c.opacity < 1 ? { [prefix]: c.color, [`${prefix}-opacity`]: c.opacity } : { [prefix]: c.color };
}

const measure = document.createElement('canvas').getContext('2d');

// The distance from the top of a line's content box to its baseline, for this element's font.
function ascent(style) {
  measure.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const m = measure.measureText('Hg');
  return m.fontBoundingBoxAscent ?? parseFloat(style.fontSize) * 0.8;
}

function fontAttrs(style) {
  const attrs = { 'font-family': style.fontFamily, 'font-size': style.fontSize };
  if (style.fontWeight !== '400') attrs['font-weight'] = style.fontWeight;
  if (style.fontStyle !== 'normal') attrs['font-style'] = style.fontStyle;
  if (style.letterSpacing !== 'normal') attrs['letter-spacing'] = style.letterSpacing;
  if (style.textDecorationLine && style.textDecorationLine !== 'none') attrs['text-decoration'] = style.textDecorationLine;
  return attrs;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

// A text node as the lines the browser broke it into: [{text, left, top}], in client coordinates.
// In preserved white space a run of spaces (a formula's columns) starts a new piece at its own place,
// since the SVG's font need not give spaces the page's width.
function lines(node, preserve) {
  const value = node.nodeValue;
  const range = document.createRange();
  const out = [];
  let line = null;
  let gap = false;
  const rectOf = (index, length) => {
    range.setStart(node, index);
    range.setEnd(node, index + length);
    return [...range.getClientRects()].filter((r) => r.width > 0 || r.height > 0);
  };
  // Words with their first box, except that a word the browser broke over two lines (Chinese breaks
  // inside a segmenter's word) goes character by character, each on the line it is on.
  const pieces = function* () {
    for (const { segment, index } of segmenter.segment(value)) {
      const rects = rectOf(index, segment.length);
      if (rects.length > 1 && rects.some((r) => Math.abs(r.top - rects[0].top) > r.height / 2)) {
        let at = index;
        for (const ch of segment) {
          yield { segment: ch, rect: rectOf(at, ch.length)[0] };
          at += ch.length;
        }
      } else yield { segment, rect: rects[0] };
    }
  };
  for (const { segment, rect } of pieces()) {
    if (preserve && /^ {2,}$/.test(segment)) {
      gap = true;
      continue;
    }
    if (!rect) continue;
    if (!line || gap || Math.abs(rect.top - line.top) > rect.height / 2) {
      gap = false;
      line = { text: '', left: rect.left, top: rect.top, bottom: rect.bottom, right: rect.right };
      out.push(line);
    }
    line.text += segment;
    line.right = Math.max(line.right, rect.right);
  }
  // Spaces are kept (the SVG preserves them): a line that starts with one is placed at the space.
  for (const l of out) l.text = preserve ? l.text.replace(/\n$/, '') : l.text.replace(/\s+/g, ' ');
  return out.filter((l) => l.text.trim() !== '');
}

function transformText(text, style) {
  if (style.textTransform === 'uppercase') return text.toUpperCase();
  if (style.textTransform === 'lowercase') return text.toLowerCase();
  return text;
}

// Inline SVG keeps its look outside the page: the computed styles its CSS classes gave it.
const SVG_STYLE = ['fill', 'fill-opacity', 'stroke', 'stroke-width', 'stroke-opacity', 'stroke-dasharray', 'stroke-linecap', 'stroke-linejoin', 'opacity', 'font-family', 'font-size', 'font-weight', 'letter-spacing', 'text-decoration'];
// 'none' is a value that counts for these (an unfilled frame or line); elsewhere it is the default.
const KEEP_NONE = new Set(['fill', 'stroke']);

function copySvg(source) {
  const copy = source.cloneNode(true);
  const from = [source, ...source.querySelectorAll('*')];
  const to = [copy, ...copy.querySelectorAll('*')];
  from.forEach((node, i) => {
    const style = getComputedStyle(node);
    const target = to[i];
    if (style.display === 'none' || style.visibility === 'hidden') {
      target.remove();
      return;
    }
    for (const attr of [...target.attributes]) if (attr.name === 'tabindex' || attr.name === 'class' || attr.name.startsWith('data-')) target.removeAttribute(attr.name);
    for (const name of SVG_STYLE) {
      const v = style.getPropertyValue(name);
      if (v && (v !== 'none' || KEEP_NONE.has(name)) && v !== 'normal') target.setAttribute(name, name === 'text-decoration' ? style.textDecorationLine : v);
    }
    if (node.tagName === 'text') {
      const transformed = transformText(target.textContent, style);
      if (transformed !== target.textContent && target.children.length === 0) target.textContent = transformed;
    }
  });
  return copy;
}

// Hatching (the mask and knock-out swatches): a computed repeating-linear-gradient, "<angle>deg,
// <colour> <from>px, <colour> <to>px, …" (a stop given two positions comes as two stops), as the
// stripes of one period along the gradient's line: {angle, period, bands: [{colour, from, to}]},
// transparent bands left out. A CSS angle α points the line at (sin α, −cos α), which an SVG
// pattern's x axis takes after rotate(α − 90). Null for anything else.
function hatching(image) {
  const m = /^repeating-linear-gradient\(([-\d.]+)deg, (.+)\)$/.exec(image);
  if (!m) return null;
  const stops = [...m[2].matchAll(/(rgba?\([^)]*\)|#[0-9a-f]{3,8})\s+([-\d.]+)px/gi)].map(([, c, p]) => ({ c, p: Number(p) }));
  if (stops.length < 2) return null;
  const period = stops.at(-1).p - stops[0].p;
  if (!(period > 0)) return null;
  const bands = [];
  for (let i = 0; i + 1 < stops.length; i++) {
    const [from, to] = [stops[i].p - stops[0].p, stops[i + 1].p - stops[0].p];
    if (to > from && stops[i].c === stops[i + 1].c && colour(stops[i].c)) bands.push({ colour: stops[i].c, from, to });
  }
  return bands.length ? { angle: Number(m[1]), period, bands } : null;
}

function backgroundRect(style, box, at) {
  const shapes = [];
  const rx = parseFloat(style.borderTopLeftRadius) || 0;
  const rect = { x: at.x(box.left), y: at.y(box.top), width: box.width, height: box.height, ...(rx ? { rx } : {}) };
  const fill = fillAttrs(style.backgroundColor);
  if (fill) shapes.push(svg('rect', { ...rect, ...fill }));
  const gradient = /linear-gradient\(to right, (.+)\)$/.exec(style.backgroundImage);
  if (gradient && !style.backgroundImage.startsWith('repeating')) {
    const stops = gradient[1].match(/rgba?\([^)]*\)/g) ?? [];
    const gid = `g${at.nextId()}`;
    at.defs.append(svg('linearGradient', { id: gid }, stops.map((s, i) => svg('stop', { offset: stops.length > 1 ? i / (stops.length - 1) : 0, 'stop-color': colour(s)?.color ?? s }))));
    shapes.push(svg('rect', { ...rect, fill: `url(#${gid})` }));
  } else if (/gradient/.test(style.backgroundImage)) {
    const hatch = hatching(style.backgroundImage);
    if (hatch) {
      const pid = `p${at.nextId()}`;
      at.defs.append(svg('pattern', { id: pid, width: hatch.period, height: hatch.period, patternUnits: 'userSpaceOnUse', patternTransform: `rotate(${hatch.angle - 90})` }, hatch.bands.map((b) => svg('rect', { x: b.from, width: b.to - b.from, height: hatch.period, ...fillAttrs(b.colour) }))));
      shapes.push(svg('rect', { ...rect, fill: `url(#${pid})` }));
    }
  }
  const sides = ['Top', 'Right', 'Bottom', 'Left'].map((side) => ({
    width: style[`border${side}Style`] === 'none' ? 0 : parseFloat(style[`border${side}Width`]) || 0,
    color: style[`border${side}Color`],
    dashed: /dash|dot/.test(style[`border${side}Style`]),
  }));
  const [top, right, bottom, left] = sides;
  const same = sides.every((b) => b.width === top.width && b.color === top.color && b.dashed === top.dashed);
  if (same && top.width > 0) {
    // One outline, rounded corners and all.
    const stroke = fillAttrs(top.color, 'stroke');
    if (stroke) shapes.push(svg('rect', { ...rect, x: rect.x + top.width / 2, y: rect.y + top.width / 2, width: Math.max(0, box.width - top.width), height: Math.max(0, box.height - top.width), fill: 'none', 'stroke-width': top.width, ...(top.dashed ? { 'stroke-dasharray': `${3 * top.width} ${2 * top.width}` } : {}), ...stroke }));
  } else {
    // Sides that differ (a coloured top over grey sides, a left rule alone): each side as a band.
    const bands = [
      [top, { x: rect.x, y: rect.y, width: box.width, height: top.width }],
      [right, { x: rect.x + box.width - right.width, y: rect.y, width: right.width, height: box.height }],
      [bottom, { x: rect.x, y: rect.y + box.height - bottom.width, width: box.width, height: bottom.width }],
      [left, { x: rect.x, y: rect.y, width: left.width, height: box.height }],
    ];
    for (const [side, band] of bands) {
      const fill = side.width > 0 ? fillAttrs(side.color) : null;
      if (fill) shapes.push(svg('rect', { ...band, ...fill }));
    }
  }
  return shapes;
}

const clips = (style) => style.overflowX !== 'visible' || style.overflowY !== 'visible';

// The box inside the borders, where a scrolling box shows its content.
function paddingBox(style, box) {
  const left = box.left + parseFloat(style.borderLeftWidth);
  const top = box.top + parseFloat(style.borderTopWidth);
  return { left, top, right: box.right - parseFloat(style.borderRightWidth), bottom: box.bottom - parseFloat(style.borderBottomWidth) };
}

// `at` for the content of a box that clips: shapes go into a group clipped to the box, and the
// figure does not grow for content that is hidden.
function clipped(style, box, out, at) {
  const edge = paddingBox(style, box);
  const id = `c${at.nextId()}`;
  at.defs.append(svg('clipPath', { id }, svg('rect', { x: at.x(edge.left), y: at.y(edge.top), width: Math.max(0, edge.right - edge.left), height: Math.max(0, edge.bottom - edge.top) })));
  const group = svg('g', { 'clip-path': `url(#${id})` });
  out.push(group);
  return {
    group: { push: (...shapes) => group.append(...shapes) },
    at: { ...at, extend: (r, b) => at.extend(Math.min(r, edge.right), Math.min(b, edge.bottom)) },
  };
}

function walk(node, out, at) {
  if (node.nodeType === Node.TEXT_NODE) {
    const parent = node.parentElement;
    if (!node.nodeValue.trim() || !parent) return;
    const style = getComputedStyle(parent);
    if (style.visibility === 'hidden') return;
    const preserve = /^pre/.test(style.whiteSpace);
    const rise = ascent(style);
    const fill = fillAttrs(style.color) ?? { fill: 'currentColor' };
    for (const line of lines(node, preserve)) {
      out.push(svg('text', { x: at.x(line.left), y: at.y(line.top + rise), ...fontAttrs(style), ...fill }, transformText(line.text, style)));
      at.extend(line.right, line.bottom);
    }
    return;
  }
  if (node.nodeType === Node.ELEMENT_NODE && isValueBox(node)) {
    out.push(...valueText(node, at));
    return;
  }
  if (node.nodeType !== Node.ELEMENT_NODE || node.matches(SKIP)) return;
  const style = getComputedStyle(node);
  if (style.display === 'none') return;
  const box = node.getBoundingClientRect();
  if (box.width === 0 && box.height === 0 && style.display !== 'contents') return;
  if (style.visibility !== 'hidden') {
    out.push(...backgroundRect(style, box, at));
    if (node instanceof HTMLCanvasElement) {
      const texts = [];
      const bitmap = repaints.get(node)?.(SCALE, (text) => texts.push(text)) ?? node;
      out.push(svg('image', { x: at.x(box.left), y: at.y(box.top), width: box.width, height: box.height, href: bitmap.toDataURL('image/png'), preserveAspectRatio: 'none' }));
      for (const text of texts) out.push(canvasText(text, box, SCALE, at));
      at.extend(box.right, box.bottom);
      return;
    }
    if (node instanceof SVGSVGElement) {
      const copy = copySvg(node);
      for (const [k, v] of Object.entries({ x: at.x(box.left), y: at.y(box.top), width: box.width, height: box.height })) copy.setAttribute(k, v);
      out.push(copy);
      at.extend(box.right, box.bottom);
      return;
    }
    at.extend(box.right, box.bottom);
  }
  const inner = clips(style) ? clipped(style, box, out, at) : { group: out, at };
  // A sticky child (the logit lens's layer names, stuck at the left of a scrolled table) is drawn
  // over its siblings, as on screen, not under the cells scrolled beneath it.
  const stuck = [];
  for (const child of node.childNodes) {
    if (child.nodeType === Node.ELEMENT_NODE && getComputedStyle(child).position === 'sticky') stuck.push(child);
    else walk(child, inner.group, inner.at);
  }
  for (const child of stuck) walk(child, inner.group, inner.at);
}

// A text or number box in the figure (a lesson's editable numbers; a toolbar's are controls): its
// frame and its value, as text where the box shows it.
function isValueBox(node) {
  return node instanceof HTMLInputElement && (node.type === 'text' || node.type === 'number') && !node.closest('.toolbar') && node.value !== '';
}

function valueText(node, at) {
  const style = getComputedStyle(node);
  if (style.display === 'none' || style.visibility === 'hidden') return [];
  const box = node.getBoundingClientRect();
  const left = box.left + parseFloat(style.borderLeftWidth) + parseFloat(style.paddingLeft);
  const lineTop = box.top + (box.height - parseFloat(style.fontSize) * 1.2) / 2;
  at.extend(box.right, box.bottom);
  return [
    ...backgroundRect(style, box, at),
    svg('text', { x: at.x(left), y: at.y(lineTop + ascent(style)), ...fontAttrs(style), ...(fillAttrs(style.color) ?? { fill: 'currentColor' }) }, node.value),
  ];
}

/**
 * The view under `root` as an SVG document: {text, width, height} (width and height in CSS px).
 * title: a line drawn above the figure; subtitle: a smaller line under it (what the figure shows),
 * optional; link: the state's URL, kept in <desc>.
 */
export function figureSvg(root, { title, subtitle = '', link }) {
  const restore = exportLayout(root);
  try {
    return figureOf(root, { title, subtitle, link });
  } finally {
    restore();
  }
}

/**
 * Lays `root` out as its export draws it, until the function it returns puts it back: without the
 * controls and explanations it leaves out (they take no room), and as wide as its boxes that scroll
 * sideways need.
 */
export function exportLayout(root) {
  root.classList.add('exporting');
  const { width, maxWidth } = root.style;
  const scrolled = [];
  widen(root, scrolled);
  return () => {
    root.classList.remove('exporting');
    Object.assign(root.style, { width, maxWidth });
    // The reader's place in each box, as it was.
    for (const [node, left] of scrolled) node.scrollLeft = left;
  };
}

// Lays `root` out wider by as much as its widest box that scrolls sideways hides, so that the box
// shows all of it (up to MAX_WIDTH in all); `scrolled` gets each such box with its scroll.
function widen(root, scrolled) {
  let hidden = 0;
  for (const node of root.querySelectorAll('*')) {
    if (node.scrollWidth <= node.clientWidth + 1 || node.clientWidth === 0) continue;
    const overflow = getComputedStyle(node).overflowX;
    if (overflow !== 'auto' && overflow !== 'scroll') continue;
    hidden = Math.max(hidden, node.scrollWidth - node.clientWidth);
    scrolled.push([node, node.scrollLeft]);
  }
  if (hidden <= 0) return;
  root.style.maxWidth = 'none';
  root.style.width = `${Math.min(MAX_WIDTH, Math.ceil(root.getBoundingClientRect().width + hidden))}px`;
}

function figureOf(root, { title, subtitle, link }) {
  // The subtitle's line is kept even when empty: the figure sits at one place under the title.
  const band = TITLE_BAND + SUBTITLE_BAND;
  const origin = root.getBoundingClientRect();
  let right = origin.right;
  let bottom = origin.bottom;
  let ids = 0;
  const defs = svg('defs');
  const at = {
    x: (clientX) => +(clientX - origin.left + MARGIN).toFixed(2),
    y: (clientY) => +(clientY - origin.top + MARGIN + band).toFixed(2),
    extend(r, b) {
      right = Math.max(right, r);
      bottom = Math.max(bottom, b);
    },
    nextId: () => ++ids,
    defs,
  };
  const shapes = [];
  for (const child of root.childNodes) walk(child, shapes, at);
  const width = Math.ceil(right - origin.left + 2 * MARGIN);
  const height = Math.ceil(bottom - origin.top + 2 * MARGIN + band);
  const page = getComputedStyle(document.body);
  const heading = getComputedStyle(root);
  const doc = svg(
    'svg',
    { width, height, viewBox: `0 0 ${width} ${height}` },
    svg('title', {}, title),
    svg('desc', {}, link),
    defs,
    svg('rect', { width, height, ...(fillAttrs(page.backgroundColor) ?? { fill: '#ffffff' }) }),
    svg('text', { x: MARGIN, y: MARGIN + 16, 'font-family': heading.fontFamily, 'font-size': '16px', 'font-weight': '650', ...(fillAttrs(page.color) ?? {}) }, title),
    subtitle ? svg('text', { x: MARGIN, y: MARGIN + 16 + SUBTITLE_BAND, 'font-family': heading.fontFamily, 'font-size': '13px', ...(fillAttrs(page.color) ?? {}) }, fitted(subtitle, `13px ${heading.fontFamily}`, width - 2 * MARGIN)) : null,
    svg('g', {}, shapes),
  );
  doc.setAttributeNS(XML_NS, 'xml:space', 'preserve');
  return { text: `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(doc)}\n`, width, height };
}

// `text` cut at its end, with "…", to `room` pixels in `font` (a phone's figure is narrow; a line
// past its edge would be cut mid-character by the image's border).
function fitted(text, font, room) {
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = font;
  if (ctx.measureText(text).width <= room) return text;
  const chars = [...text];
  let n = chars.length;
  while (n > 1 && ctx.measureText(`${chars.slice(0, n).join('')}…`).width > room) n--;
  return `${chars.slice(0, n).join('').trimEnd()}…`;
}

/** An SVG document (figureSvg's result) drawn at `scale` into a PNG Blob. */
export async function figurePng({ text, width, height }, scale = SCALE) {
  const url = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }));
  try {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(width * scale);
    canvas.height = Math.round(height * scale);
    canvas.getContext('2d').drawImage(image, 0, 0, canvas.width, canvas.height);
    return await new Promise((resolve, reject) => canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('The PNG could not be encoded.'))), 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** Saves a Blob as a file through the browser's download. */
export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// Colour scales for tensors: viridis (sequential, for probabilities) and a blue-white-red
// diverging scale centred on 0 (for signed activations). Both are colour-blind safe
// (viridis by design; the diverging one is ColorBrewer's RdBu). In dark mode the diverging scale
// keeps RdBu's hues but runs from a dark grey at 0 to light ends, so zero stays the quiet colour
// of the page instead of a white slab (`neutralWord` names it). A scale maps a value to one of
// 256 packed RGBA colours, so a heatmap fills ImageData with a table look-up per cell.
//
// Masked cells never take a scale colour: -∞ (the causal mask) and values at or below -1e8
// (MiniMind's padding mask adds -1e9) are drawn as hatching by the heatmap and named in the legend.

import { isDark } from './theme_colours.js';
import { short } from './format.js';
import { t } from '../strings.js';

const VIRIDIS = ['#440154', '#482475', '#414487', '#355f8d', '#2a788e', '#21918c', '#22a884', '#44bf70', '#7ad151', '#bddf26', '#fde725'];
const RDBU = ['#2166ac', '#4393c3', '#92c5de', '#d1e5f0', '#f7f7f7', '#fddbc7', '#f4a582', '#d6604d', '#b2182b'];
const RDBU_DARK = ['#7cc0f2', '#4b9bd4', '#2f6ea8', '#1d3f66', '#2a2d33', '#66261f', '#a8382b', '#dc4f3a', '#ff7a5c'];

const PADDING_LIMIT = -1e8;

/** The diverging scale's colour for 0, as a sentence names it: white, or dark grey in dark mode. */
export function neutralWord() {
  return t(isDark() ? 'scale.neutralDark' : 'scale.neutral');
}

export function isMasked(v) {
  return !(v > PADDING_LIMIT) && !Number.isNaN(v);
}

function hex(c) {
  return [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
}

// 256 colours interpolated between the anchors, packed little-endian as ImageData expects.
function table(anchors) {
  const rgb = anchors.map(hex);
  const packed = new Uint32Array(256);
  const css = new Array(256);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (rgb.length - 1);
    const k = Math.min(Math.floor(t), rgb.length - 2);
    const f = t - k;
    const [r, g, b] = [0, 1, 2].map((c) => Math.round(rgb[k][c] + (rgb[k + 1][c] - rgb[k][c]) * f));
    packed[i] = (255 << 24) | (b << 16) | (g << 8) | r;
    css[i] = `rgb(${r},${g},${b})`;
  }
  return { packed, css };
}

const TABLES = { sequential: table(VIRIDIS), diverging: table(RDBU), divergingDark: table(RDBU_DARK) };

function makeScale(kind, min, max) {
  const { packed, css } = TABLES[kind === 'diverging' && isDark() ? 'divergingDark' : kind];
  const span = max - min || 1;
  const index = (v) => {
    const i = Math.round(((v - min) / span) * 255);
    return i < 0 ? 0 : i > 255 ? 255 : i;
  };
  return {
    kind,
    min,
    max,
    packed: (v) => packed[index(v)],
    css: (v) => css[index(v)],
    gradient: () => `linear-gradient(to right, ${[0, 64, 128, 191, 255].map((i) => css[i]).join(', ')})`,
  };
}

export function sequential(min, max) {
  return makeScale('sequential', min, max);
}

// Symmetric around 0 so that the middle colour (white, dark grey in dark mode) always means zero.
export function diverging(maxAbs) {
  const m = maxAbs > 0 ? maxAbs : 1;
  return makeScale('diverging', -m, m);
}

// Range of the unmasked, finite values of one or more arrays.
export function extent(arrays) {
  let min = Infinity;
  let max = -Infinity;
  for (const a of arrays) {
    for (let i = 0; i < a.length; i++) {
      const v = a[i];
      if (v > PADDING_LIMIT && v < Infinity) {
        if (v < min) min = v;
        if (v > max) max = v;
      }
    }
  }
  return min > max ? { min: 0, max: 0, maxAbs: 0 } : { min, max, maxAbs: Math.max(-min, max) };
}

// A diverging scale for activations, which in a trained model hold a few huge values (the first
// token's hidden state reaches ±100 where the rest stay within ±5: "massive activations"). Scaled to
// those, every other cell is the colour of 0. When the largest |x| is over OUTLIER times the 99th
// percentile, the scale ends at that percentile: the few beyond take the end colours, the ticks say
// "≤" and "≥", and `clipped` ({limit, maxAbs, count}) lets the legend say how many and how far.
const OUTLIER = 3;
const SAMPLE = 65536; // values looked at for the percentile; a larger tensor is strided

export function activationScale(data) {
  const { maxAbs } = extent([data]);
  const stride = Math.max(1, Math.floor(data.length / SAMPLE));
  const seen = [];
  for (let i = 0; i < data.length; i += stride) {
    const v = data[i];
    if (v > PADDING_LIMIT && v < Infinity) seen.push(Math.abs(v));
  }
  seen.sort((a, b) => a - b);
  const limit = seen.length ? seen[Math.min(seen.length - 1, Math.floor(0.99 * seen.length))] : 0;
  if (!(limit > 0) || maxAbs <= OUTLIER * limit) return diverging(maxAbs);
  let count = 0;
  for (let i = 0; i < data.length; i++) if (Math.abs(data[i]) > limit && data[i] > PADDING_LIMIT && data[i] < Infinity) count++;
  const scale = diverging(limit);
  scale.ticks = [`≤ ${short(-limit)}`, '0', `≥ ${short(limit)}`];
  scale.clipped = { limit, maxAbs, count };
  return scale;
}

// The scale a trace tensor gets by default: probabilities are sequential on [0, 1],
// everything else diverging around 0.
export function scaleFor(name, arrays) {
  if (name.endsWith('probs')) return sequential(0, 1);
  return diverging(extent(arrays).maxAbs);
}

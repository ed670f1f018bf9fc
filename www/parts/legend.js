// A colour legend: the gradient of a scale with its ends and middle labelled, plus swatches for
// the cells that take no scale colour (the causal mask's -∞, the padding mask's -1e9, padded rows).
// Heatmaps add one each; the head grid adds one for all its panels, since they share a scale.

import { el } from './dom.js';
import { grouped, short } from './format.js';
import { isMasked } from './color_scale.js';
import { t } from '../strings.js';

// marks: which special swatches to show, e.g. {neginf: true, padding: true, paddedRows: true};
// `future` is the same hatching on attention weights: a future token's weight, 0; `off`: knocked-out heads.
// A null scale leaves out the gradient: a mask has only the values 0, -∞ and -1e9.
export function legend(scale, marks = {}) {
  return el(
    'div',
    { className: 'legend' },
    scale && gradient(scale),
    marks.visible && swatch('swatch-visible', t('legend.visible')),
    marks.neginf && swatch('swatch-neginf', t('legend.neginf')),
    marks.future && swatch('swatch-neginf', t('legend.future')),
    marks.padding && swatch('swatch-padding', t('legend.padding')),
    marks.paddedKeys && swatch('swatch-padding', t('legend.paddedKey')),
    marks.paddedRows && swatch('swatch-padded-row', t('legend.paddedRow')),
    marks.off && swatch('swatch-off', t('legend.off')),
    scale?.clipped && el('div', { className: 'legend-item legend-clipped' }, t('legend.clipped', { n: grouped(scale.clipped.count), limit: short(scale.clipped.limit), max: short(scale.clipped.maxAbs) })),
  );
}

function gradient(scale) {
  const mid = (scale.min + scale.max) / 2;
  return el(
    'div',
    { className: 'legend-scale' },
    el('div', { className: 'legend-bar', style: { background: scale.gradient() } }),
    // A scale may name its three ticks itself (RoPE's angles: 0, π, 2π).
    el('div', { className: 'legend-ticks' }, (scale.ticks ?? [scale.min, mid, scale.max].map(short)).map((text) => el('span', {}, text))),
  );
}

function swatch(className, label) {
  return el('div', { className: 'legend-item' }, el('span', { className: `swatch ${className}` }), label);
}

// Which special swatches a tensor needs: does it hold -∞, padding-masked cells, padded rows?
export function marksOf(data, rowMask = null) {
  let neginf = false;
  let padding = false;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    if (v === -Infinity) neginf = true;
    else if (isMasked(v)) padding = true;
  }
  return { neginf, padding, paddedRows: !!rowMask && rowMask.some((m) => !m) };
}

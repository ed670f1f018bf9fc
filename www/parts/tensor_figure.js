// One trace tensor drawn as heatmaps according to its shape (docs/trace-contract.md):
//   [T, X]        one heatmap, a row per token;
//   [T, n, d]     one heatmap, a row per token, the n heads side by side as framed column groups
//                 (q and its norms/rotations have query heads, k/v/caches have KV heads, a MoE
//                 layer's ffn.expert_out has the token's k chosen experts, most probable first);
//   [nH, T, S]    attention: one T x S panel per query head on one shared scale.
// The header names the tensor and writes its shape as MiniMind prints it, batch first.

import { el } from './dom.js';
import { headCells, headTip, heatmap } from './heatmap.js';
import { legend, marksOf } from './legend.js';
import { activationScale, diverging, scaleFor } from './color_scale.js';
import { shapeLabel, axisLabel, tokenText } from './format.js';
import { t } from '../strings.js';

const ATTENTION = /(^|\.)(scores|masked_scores|probs)$/;
const KV_TENSOR = /attn\.(k|v|k_norm|k_rope|k_cache|v_cache)$/;
const EXPERT_CHOICES = /ffn\.expert_out$/;

// ctx: {pieces, mask, nRep, maxCell, causal, repeat}. Returns {node, maps, destroy()}: the heatmaps paint once the
// node is in the page (heatmap.js), or at once with paintAll(maps).
export function tensorFigure(name, { data, shape }, ctx) {
  const maps = [];
  const body = ATTENTION.test(name) && shape.length === 3 ? attentionPanels(name, data, shape, ctx, maps) : matrix(name, data, shape, ctx, maps);
  const node = el(
    'figure',
    { className: 'tensor-figure', dataset: { tensor: name } },
    el('figcaption', {}, el('code', { className: 'tensor-name' }, name), el('span', { className: 'shape' }, shapeLabel(shape))),
    body,
  );
  return { node, maps, destroy: () => maps.forEach((m) => m.destroy()) };
}

function tokenRow(ctx, r) {
  return `${r} ${tokenText(ctx.pieces[r] ?? '')}`;
}

function matrix(name, data, shape, ctx, maps) {
  const [rows, ...rest] = shape;
  const cols = rest.reduce((a, b) => a * b, 1);
  const grouped = rest.length === 2;
  const d = grouped ? rest[1] : cols;
  const headWord = KV_TENSOR.test(name) ? 'KV' : EXPERT_CHOICES.test(name) ? t('moe.choice') : t('tip.head');
  const scale = name.startsWith('rope.') ? diverging(1) : activationScale(data);
  const map = heatmap();
  maps.push(map);
  map.update({
    cells: { data, rows, cols, rowMask: ctx.mask, maxCell: ctx.maxCell ?? 22 },
    scale,
    // ctx.repeat (repeat_kv's n_rep): each query head's group names the KV head it reads.
    labels: { rows: ctx.pieces.slice(0, rows).map((p) => axisLabel(p)), groups: grouped ? { size: d, label: (g) => (ctx.repeat ? t('stepper.repeatGroup', { h: g, kv: Math.floor(g / ctx.repeat) }) : `${headWord} ${g}`), short: ctx.repeat ? (g) => `KV ${Math.floor(g / ctx.repeat)}` : null } : null },
    interaction: {
      name: `${name} ${shapeLabel(shape)}`,
      describe: (r, c) => [
        [name, `[${(grouped ? [r, Math.floor(c / d), c % d] : [r, c]).join(', ')}]`],
        [t('tip.token'), tokenRow(ctx, r)],
        ...(grouped ? [[headWord, Math.floor(c / d)]] : []),
        [t('tip.dim'), c % d],
      ],
    },
  });
  return map.node;
}

function attentionPanels(name, data, shape, ctx, maps) {
  const [nH, T, S] = shape;
  const scale = scaleFor(name, [data]);
  const panels = [];
  // A causal run's weights hatch the future, as its masked scores do (ctx.causal).
  const future = ctx.causal === true && name.endsWith('probs');
  for (let h = 0; h < nH; h++) {
    const map = heatmap();
    maps.push(map);
    const head = data.subarray(h * T * S, (h + 1) * T * S);
    const { cells, labels } = headCells({ data: head, T, S, pieces: ctx.pieces, mask: ctx.mask, maxCell: 18, input: true, future });
    map.update({
      cells,
      labels,
      scale,
      legend: false,
      interaction: {
        name: t('heatmap.headName', { name, h }),
        describe: headTip(name, h, ctx.pieces),
      },
    });
    panels.push(el('div', { className: 'panel-cell' }, el('div', { className: 'panel-title' }, t('control.headOption', { h, kv: Math.floor(h / ctx.nRep) })), map.node));
  }
  // The one scale they share comes before them: on a phone the heads stack, and a key after the last
  // one was screens away from the first.
  return el('div', {}, el('p', { className: 'hint' }, t('stepper.perHead')), legend(scale, { ...marksOf(data, ctx.mask), future }), el('div', { className: 'multiples heads' }, panels));
}

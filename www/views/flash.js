// The flash path (docs/minimind-semantics.md, "The flash path"): one query row of one head
// walks the keys tile by tile with an online softmax, keeping a running max m, denominator l and
// unnormalised output o, and never forms the whole row of probabilities. The core records the walk
// (flashRecord); ← / → reveal it one tile at a time. At the end o / l is set beside the explicit
// path's context row (attn.context) with the core's max |flash − naive|.

import { el } from '../parts/dom.js';
import { heatmap } from '../parts/heatmap.js';
import { value } from '../parts/value.js';
import { layerSelect, headSelect, tokenSelect, tokenAt } from '../parts/controls.js';
import { diverging, extent } from '../parts/color_scale.js';
import { axisLabel, fixed, indexLabel, tokenText, spaced } from '../parts/format.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

const TILES = [1, 2, 3, 4, 8, 16, 32, 64];
const DEFAULT_TILE = 4;

export function mount(root, app) {
  const { state } = app;
  const controls = [layerSelect(app), headSelect(app), tokenSelect(app, 'query', 'control.row')];
  const tileSelect = el('select', { id: 'flash-tile', name: 'tile', on: { change: () => app.set({ tile: Number(tileSelect.value) }) } }, TILES.map((n) => el('option', { value: String(n) }, n)));
  const prev = el('button', { type: 'button', className: 'nav-button', title: t('flash.prev'), attrs: { 'aria-label': t('flash.prev') }, on: { click: () => walk(-1) } }, '←');
  const next = el('button', { type: 'button', className: 'nav-button', title: t('flash.next'), attrs: { 'aria-label': t('flash.next') }, on: { click: () => walk(1) } }, '→');
  const progress = el('span', { className: 'hint', attrs: { 'aria-live': 'polite' } });
  const rowMap = heatmap();
  const oMap = heatmap();
  const finalMap = heatmap();
  const table = el('div', { className: 'table-scroll' });
  const result = el('section', { className: 'card flash-result' });
  root.append(
    el('div', { className: 'toolbar' }, controls.map((c) => c.node), el('div', { className: 'picker' }, el('label', { htmlFor: 'flash-tile' }, t('flash.tileSize')), tileSelect), el('div', { className: 'tile-walk' }, prev, progress, next)),
    el('p', { className: 'explain' }, t('flash.explain')),
    el('pre', { className: 'formula' }, t('flash.formula')),
    el('section', { className: 'card' }, el('h3', {}, t('flash.rowHeading')), rowMap.node),
    el('section', { className: 'card' }, el('h3', {}, t('flash.walkHeading')), table, el('h4', {}, t('flash.oHeading')), oMap.node),
    result,
  );
  const updates = latest();
  let shown = 1; // tiles revealed
  let walkKey = null;
  let total = 1;

  const onKey = (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    if (e.target.closest('input, textarea, select, canvas, svg, [contenteditable]')) return;
    if (e.key === 'ArrowRight') walk(1);
    else if (e.key === 'ArrowLeft') walk(-1);
    else return;
    e.preventDefault();
  };
  document.addEventListener('keydown', onKey);

  function walk(delta) {
    shown = Math.max(1, Math.min(total, shown + delta));
    app.redraw();
  }

  async function update() {
    const signal = updates.start();
    controls.forEach((c) => c.update());
    const tile = state.tile ?? DEFAULT_TILE;
    tileSelect.value = String(tile);
    const l = state.layer;
    const h = state.head;
    const row = tokenAt(app, 'query');
    const names = [`layers.${l}.attn.masked_scores`, `layers.${l}.attn.context`];
    const [found, report] = await Promise.all([app.tensors(names), app.call('flash', { args: app.args(), layer: l, head: h, row, tile })]);
    if (signal.aborted) return;
    const key = JSON.stringify({ l, h, row, tile, ids: state.tokens.ids, mask: state.mask });
    const { steps, output } = report.record;
    total = steps.length;
    if (key !== walkKey) {
      walkKey = key;
      shown = 1;
    }
    shown = Math.min(shown, total);
    prev.disabled = shown <= 1;
    next.disabled = shown >= total;
    progress.textContent = t('flash.progress', { k: shown, n: total });

    const masked = found.get(names[0]);
    const context = found.get(names[1]);
    const [, T, S] = masked.shape;
    const d = context.shape[2];
    const nH = context.shape[1];
    const pieces = state.tokens.pieces;
    const labels = pieces.map((p) => axisLabel(p, 6));
    const scoresRow = masked.data.subarray((h * T + row) * S, (h * T + row + 1) * S);
    const current = steps[shown - 1];
    rowMap.update({
      cells: { data: scoresRow, rows: 1, cols: S, maxCell: 40 },
      scale: diverging(extent([scoresRow]).maxAbs),
      labels: {
        rows: [`${row} ${axisLabel(pieces[row], 6)}`],
        cols: labels.slice(0, S),
        groups: { size: tile, label: (g) => (g === shown - 1 ? `▸ ${t('flash.tileN', { k: g + 1 })}` : t('flash.tileN', { k: g + 1 })), short: (g) => (g === shown - 1 ? `▸${g + 1}` : String(g + 1)) },
      },
      interaction: {
        name: t('flash.rowHeading'),
        describe: (_, j) => [
          ['masked_scores', indexLabel(h, row, j)],
          [t('tip.key'), `${j} ${tokenText(pieces[j])}`],
          [t('flash.tile'), Math.floor(j / tile) + 1],
        ],
      },
    });

    const revealed = steps.slice(0, shown);
    table.replaceChildren(
      el(
        'table',
        { className: 'data-table flash-table' },
        el('thead', {}, el('tr', {}, [t('flash.colTile'), t('flash.colKeys'), t('flash.colTileMax'), 'm', 'ℓ'].map((c) => el('th', { attrs: { scope: 'col' } }, c)))),
        el(
          'tbody',
          {},
          revealed.map((s, k) =>
            el(
              'tr',
              { className: k === shown - 1 ? 'current' : '', dataset: { tile: k } },
              el('th', { attrs: { scope: 'row' } }, k + 1),
              el('td', {}, `${s.key_start}–${s.key_end - 1}`),
              el('td', {}, value(Math.max(...s.scores), 4)),
              el('td', {}, value(s.m, 4)),
              el('td', {}, value(s.l, 4)),
            ),
          ),
        ),
      ),
    );
    const oData = Float32Array.from(revealed.flatMap((s) => s.o));
    oMap.update({
      cells: { data: oData, rows: revealed.length, cols: d, maxCell: 14 },
      scale: diverging(extent([oData]).maxAbs),
      labels: { rows: revealed.map((_, k) => t('flash.tileN', { k: k + 1 })) },
      interaction: {
        name: t('flash.oHeading'),
        describe: (k, c) => [
          ['o', `[${c}]`],
          [t('flash.tile'), k + 1],
        ],
      },
    });

    const naive = context.data.subarray((row * nH + h) * d, (row * nH + h + 1) * d);
    const done = shown === total;
    const both = Float32Array.from([...output, ...naive]);
    finalMap.update({
      cells: { data: both, rows: 2, cols: d, maxCell: 14 },
      scale: diverging(extent([both]).maxAbs),
      labels: { rows: [t('flash.flashOut'), t('flash.naiveOut')] },
      interaction: { name: t('flash.resultHeading'), describe: (r, c) => [[r ? `context[${row}, ${h}]` : 'o / l', `[${c}]`]] },
    });
    result.replaceChildren(
      el('h3', {}, t('flash.resultHeading')),
      done
        ? el(
            'div',
            {},
            el('p', { className: 'hint' }, t('flash.resultNote', { m: fixed(current.m, 4), l: fixed(current.l, 4) })),
            finalMap.node,
            el('p', { className: 'check', dataset: { check: 'flash' } }, spaced(t('flash.diff')), value(report.max_abs_diff, 7)),
          )
        : el('p', { className: 'hint' }, t('flash.notDone', { n: total - shown })),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
      document.removeEventListener('keydown', onKey);
      [rowMap, oMap, finalMap].forEach((m) => m.destroy());
    },
  };
}

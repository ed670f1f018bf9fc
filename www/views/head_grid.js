// The head grid: every layer x head attention pattern as a small multiple, all on one colour scale
// (BertViz's model view). Query heads that share a KV head under GQA are framed together and the
// frame is labelled "KV j", so repeat_kv is visible: the heads in a frame read the same keys.
// Clicking a thumbnail (or Enter on it) opens that head in the attention map.

import { el } from '../parts/dom.js';
import { heatmap } from '../parts/heatmap.js';
import { legend, marksOf } from '../parts/legend.js';
import { stageSelect, STAGES, range } from '../parts/controls.js';
import { scaleFor } from '../parts/color_scale.js';
import { tokenText } from '../parts/format.js';
import { t } from '../strings.js';

const THUMB_PX = 120;

export function mount(root, app) {
  const { state } = app;
  const stage = stageSelect(app);
  const grid = el('div', { className: 'head-grid' });
  const legendSlot = el('div', {});
  root.append(el('div', { className: 'toolbar' }, stage.node), el('p', { className: 'explain' }, t('grid.explain')), el('div', { className: 'grid-scroll' }, grid), legendSlot);
  let maps = [];
  let seq = 0;

  function open(layer, head) {
    app.set({ layer, head });
    app.go('attention');
  }

  async function update() {
    const my = ++seq;
    stage.update();
    const { num_hidden_layers: L, num_attention_heads: nH, num_key_value_heads: nKV } = app.model;
    const rep = nH / nKV;
    const names = range(L).map((l) => `layers.${l}.${STAGES[state.stage]}`);
    const found = await app.tensors(names);
    if (my !== seq) return;
    maps.forEach((m) => m.destroy());
    maps = [];

    const [, T, S] = found.get(names[0]).shape;
    const scale = scaleFor(names[0], names.map((n) => found.get(n).data));
    // Thumbnails shrink until a whole layer row fits the page, down to 2 px per cell.
    const perHead = Math.min(THUMB_PX, (root.clientWidth - 60) / nH - 18);
    const cell = Math.max(2, Math.min(12, Math.floor(perHead / S)));
    const items = [];
    grid.style.gridTemplateColumns = `auto repeat(${nH}, ${cell * S + 4}px)`;
    for (let g = 0; g < nKV; g++) {
      const column = 2 + g * rep;
      items.push(el('div', { className: 'kv-frame', style: { gridColumn: `${column} / span ${rep}`, gridRow: `1 / span ${L + 2}` } }));
      items.push(el('div', { className: 'kv-label', style: { gridColumn: `${column} / span ${rep}`, gridRow: '1' } }, t('grid.kv', { kv: g })));
    }
    for (let h = 0; h < nH; h++) items.push(el('div', { className: 'head-label', style: { gridColumn: String(2 + h), gridRow: '2' } }, `${t('tip.head')} ${h}`));
    for (let l = 0; l < L; l++) {
      const data = found.get(names[l]).data;
      items.push(el('div', { className: 'layer-label', style: { gridRow: String(3 + l), gridColumn: '1' } }, t('grid.layer', { l })));
      for (let h = 0; h < nH; h++) {
        const map = heatmap();
        maps.push(map);
        map.update({
          data: data.subarray(h * T * S, (h + 1) * T * S),
          rows: T,
          cols: S,
          scale,
          rowLabels: null,
          colLabels: null,
          rowMask: state.mask,
          square: true,
          maxCell: cell,
          legend: false,
          label: t('grid.open', { l, h }),
          describe: (i, j) => [
            [names[l], `[${h}, ${i}, ${j}]`],
            [t('tip.query'), `${i} ${tokenText(state.tokens.pieces[i])}`],
            [t('tip.key'), `${j} ${tokenText(state.tokens.pieces[j])}`],
          ],
          onCellClick: () => open(l, h),
        });
        const selected = l === state.layer && h === state.head;
        items.push(
          el('div', { className: selected ? 'thumb selected' : 'thumb', title: t('grid.open', { l, h }), dataset: { layer: l, head: h }, style: { gridRow: String(3 + l), gridColumn: String(2 + h), width: `${cell * S + 4}px` } }, map.node),
        );
      }
    }
    grid.replaceChildren(...items);
    legendSlot.replaceChildren(legend(scale, marksOf(found.get(names[0]).data, state.mask)));
  }

  return {
    update,
    destroy() {
      seq++;
      maps.forEach((m) => m.destroy());
    },
  };
}

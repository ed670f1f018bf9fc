// The masks: causal, padding and both together, as the core actually adds them to the scores
// (each read back as masked_scores − scores from a run with only that mask), with -∞ and -1e9
// cells hatched. Below, the same head with the causal mask on and off (BERT-style bidirectional)
// and their difference: the attention that "peeks at the future" once the mask is gone.

import { el } from '../parts/dom.js';
import { headCells, heatmap } from '../parts/heatmap.js';
import { legend, marksOf } from '../parts/legend.js';
import { layerSelect, headSelect } from '../parts/controls.js';
import { diverging, sequential, extent } from '../parts/color_scale.js';
import { axisLabel, spaced, tokenText } from '../parts/format.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

export function mount(root, app) {
  const { state } = app;
  const controls = [layerSelect(app), headSelect(app)];
  const explain = el('p', { className: 'explain' });
  const maskRow = el('div', { className: 'multiples wide' });
  const maskLegend = el('div', {});
  const leakNote = el('p', { className: 'leak-note' });
  const leakRow = el('div', { className: 'multiples wide' });
  root.append(
    el('div', { className: 'toolbar' }, controls.map((c) => c.node)),
    explain,
    maskRow,
    maskLegend,
    el('h3', {}, t('masks.leakHeading')),
    el('p', { className: 'explain' }, t('masks.leakExplain')),
    leakNote,
    leakRow,
  );
  let maps = [];
  const updates = latest();

  async function update() {
    const signal = updates.start();
    controls.forEach((c) => c.update());
    const l = state.layer;
    const h = state.head;
    const names = [`layers.${l}.attn.scores`, `layers.${l}.attn.masked_scores`, `layers.${l}.attn.probs`];
    const [causalOnly, paddingOnly, both] = await Promise.all([
      app.tensors(names, { causal: true, attention_mask: null }),
      app.tensors(names, { causal: false }),
      app.tensors(names, { causal: true }),
    ]);
    if (signal.aborted) return;
    const [, T, S] = both.get(names[0]).shape;
    const slice = (run, name) => run.get(name).data.subarray(h * T * S, (h + 1) * T * S);
    const added = (run) => {
      const scores = slice(run, names[0]);
      return slice(run, names[1]).map((v, i) => v - scores[i]);
    };
    const probsOn = slice(both, names[2]);
    const probsOff = slice(paddingOnly, names[2]);
    const leak = probsOff.map((v, i) => v - probsOn[i]);

    const rowLabels = state.tokens.pieces.map((p) => axisLabel(p, 8));
    const describe = (what) => (i, j) => [
      [what, `[${i}, ${j}]`],
      [t('tip.query'), `${i} ${tokenText(state.tokens.pieces[i])}`],
      [t('tip.key'), `${j} ${tokenText(state.tokens.pieces[j])}`],
    ];
    // scale null: a mask panel, white where the key is visible and hatched where it is masked.
    // weights: attention weights (rows padded or not by state.mask), whose padded keys' 0 is hatched as
    // the padding mask is; future: a causal run's, whose future keys are hatched too (weight 0).
    const panel = (title, note, data, scale, { weights = false, future = false } = {}) => {
      const map = heatmap();
      maps.push(map);
      const { cells, labels } = weights
        ? headCells({ data, T, S, pieces: state.tokens.pieces, mask: state.mask, maxCell: 30, input: true, future, weights: true })
        : { cells: { data, rows: T, cols: S, rowMask: null, square: true, maxCell: 30, tokens: true }, labels: { rows: rowLabels.slice(0, T), cols: rowLabels.slice(0, S) } };
      map.update({
        cells,
        scale: scale ?? diverging(1),
        legend: scale !== null,
        labels,
        interaction: { name: title, describe: describe(title) },
      });
      return el('figure', { className: 'panel-cell', dataset: { panel: title } }, el('figcaption', { className: 'panel-title' }, title), note && el('p', { className: 'hint' }, note), map.node);
    };

    // The token chips live under the text box, on a phone a long way below: a button takes the
    // reader there, to the first chip.
    const toChips = () =>
      el('button', { type: 'button', className: 'action secondary to-chips', on: { click: () => {
        const chip = document.querySelector('.sidebar .chips .chip');
        chip?.scrollIntoView({ block: 'center' });
        chip?.focus({ preventScroll: true });
      } } }, t('masks.toChips'));
    maps.forEach((m) => m.destroy());
    maps = [];
    explain.textContent = t('masks.explain', { l, h });
    const combined = added(both);
    maskRow.replaceChildren(
      panel(t('masks.causal'), t('masks.causalNote'), added(causalOnly), null),
      // With nothing padded this panel is blank: said so, with how to pad a token.
      panel(t('masks.padding'), state.mask.every((m) => m === 1) ? [t('masks.paddingNone'), ' ', toChips()] : t('masks.paddingNote'), added(paddingOnly), null),
      panel(t('masks.combined'), t('masks.combinedNote'), combined, null),
    );
    maskLegend.replaceChildren(legend(null, { visible: true, neginf: true, padding: marksOf(combined).padding }));
    // The mean, and the row that peeks most: one row (often the first, which has all the future
    // ahead of it) can carry most of the mean.
    const shares = futureShares(probsOff, T, S, state.mask);
    const top = shares.reduce((best, x) => (best === null || x.share > best.share ? x : best), null);
    const mean = shares.length ? shares.reduce((sum, x) => sum + x.share, 0) / shares.length : 0;
    const note = t('masks.leakNote', { pct: (100 * mean).toFixed(1) });
    // Every query row padded: there is no row to average, and "0.0 %" would say the mask changed nothing.
    if (!shares.length) leakNote.textContent = t('masks.leakNoRows');
    else leakNote.textContent = top && top.share > 0.001 ? `${spaced(note)}${t('masks.leakTop', { i: top.i, token: tokenText(state.tokens.pieces[top.i]), pct: (100 * top.share).toFixed(1) })}` : note;
    leakRow.replaceChildren(
      panel(t('masks.probsOn'), null, probsOn, sequential(0, 1), { weights: true, future: true }),
      panel(t('masks.probsOff'), null, probsOff, sequential(0, 1), { weights: true }),
      // The colours span the real query rows only: a padded row's weights are never used (the map
      // hatches it), yet theirs can differ by up to 1 and would leave the real rows' tints faint.
      panel(t('masks.leak'), null, leak, diverging(realRowsMaxAbs(leak, T, S, state.mask)), { weights: true }),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
      maps.forEach((m) => m.destroy());
    },
  };
}

// The largest |x| over the query rows not padded (all rows where every one is padded).
function realRowsMaxAbs(data, T, S, mask) {
  let max = 0;
  for (let i = 0; i < T; i++) {
    if (mask[i] === 0) continue;
    for (let j = 0; j < S; j++) max = Math.max(max, Math.abs(data[i * S + j]));
  }
  return mask.slice(0, T).some((m) => m !== 0) ? max : extent([data]).maxAbs;
}

// For each real query row i, the probability mass on keys after it (j > i): [{i, share}].
function futureShares(probs, T, S, mask) {
  const shares = [];
  for (let i = 0; i < T; i++) {
    if (mask[i] === 0) continue;
    let future = 0;
    for (let j = i + 1; j < S; j++) future += probs[i * S + j];
    shares.push({ i, share: future });
  }
  return shares;
}

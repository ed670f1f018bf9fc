// Head attribution (direct logit attribution): for a chosen position and target token, how much
// each head's own output pushes that token's logit straight through the final RMSNorm (taken at its
// value in this run) and lm_head. The core computes it (`layers.{l}.attn.head_logit`, [T, nH], asked
// for with the run's `headLogit` and `targetToken`); this view draws the chosen position's row of
// every layer as one layers × heads heatmap (parts/heatmap.js) on a diverging scale, so the heads
// that matter stand out. The target defaults to the model's top-1 next token there (`target` null).
// The strongest heads either way carry a knock-out toggle (parts/ablation.js), so the reader can test
// what the prediction loses without them.

import { el } from '../parts/dom.js';
import { heatmap } from '../parts/heatmap.js';
import { range, tokenSelect, tokenAt } from '../parts/controls.js';
import { diverging, extent, neutralWord } from '../parts/color_scale.js';
import { exact, fixed, percent, tokenText, spaced } from '../parts/format.js';
import { ablateToggle } from '../parts/ablation.js';
import { t } from '../strings.js';
import { headRoles, roleText } from '../parts/head_roles.js';
import { headPushes } from '../parts/head_push.js';
import { latest } from '../page/latest.js';

// The candidates the target picker offers: the model's most likely next tokens at the position.
const OFFERED = 10;

export function mount(root, app) {
  const { state } = app;
  const position = tokenSelect(app, 'query', 'control.position');
  const targetId = `target-${Math.random().toString(36).slice(2, 7)}`;
  const target = el('select', { id: targetId, name: 'target', on: { change: () => app.set({ target: target.value === '' ? null : Number(target.value) }) } });
  const caption = el('h3', {});
  const sign = el('p', { className: 'explain' }, t('attribution.sign', { neutral: neutralWord() }));
  const strongest = el('div', { className: 'hint attribution-strongest' });
  // With heads knocked out, the colours keep the intact run's scale: said under the map.
  const kept = el('p', { className: 'hint attribution-kept-scale', hidden: true });
  const map = heatmap();
  root.append(
    el('div', { className: 'toolbar' }, position.node, el('div', { className: 'picker' }, el('label', { htmlFor: targetId }, t('attribution.target')), target)),
    el('p', { className: 'explain' }, t('attribution.explain')),
    el('section', { className: 'card' }, caption, sign, map.node, kept, strongest),
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    position.update();
    const i = tokenAt(app, 'query');
    const logits = (await app.tensors(['logits'])).get('logits');
    if (signal.aborted) return;
    const V = logits.shape[1];
    const offered = await app.call('top', { logits: logits.data.slice(i * V, (i + 1) * V), k: OFFERED });
    if (signal.aborted) return;
    const chosen = state.target ?? offered[0].id;
    const [piece] = state.target === null || offered.some((c) => c.id === chosen) ? [offered.find((c) => c.id === chosen).piece] : await app.call('pieces', { ids: [chosen] });
    if (signal.aborted) return;
    target.replaceChildren(
      el('option', { value: '' }, t('attribution.topOne', { token: tokenText(offered[0].piece) })),
      ...offered.map((c) => el('option', { value: String(c.id) }, `${tokenText(c.piece)} · ${c.id} (${percent(c.p)})`)),
      ...(offered.some((c) => c.id === chosen) ? [] : [el('option', { value: String(chosen) }, `${tokenText(piece)} · ${chosen}`)]),
    );
    target.value = state.target === null ? '' : String(chosen);

    const { num_hidden_layers: L, num_attention_heads: nH } = app.model;
    // With heads knocked out, the run with every head on too: its pushes set the colour scale, so a
    // knock-out shows as what it changes, not as a rescaled board.
    const off = state.ablate.length > 0;
    const [data, roles, intact] = await Promise.all([
      headPushes(app, i, chosen),
      headRoles(app).catch(() => []),
      off ? headPushes(app, i, chosen, { ablate: [] }) : null,
    ]);
    if (signal.aborted) return;
    const maxAbs = extent([off ? intact : data]).maxAbs;
    kept.hidden = !off;
    kept.textContent = off ? t('attribution.keptScale', { max: fixed(maxAbs, 3) }) : '';
    const token = tokenText(piece);
    caption.textContent = t('attribution.title', { i, at: tokenText(state.tokens.pieces[i]), token, id: chosen });
    map.update({
      // A knocked-out head pushes exactly 0, like a head that does not touch the target: striped, so the two differ.
      // Each head's push written in its cell where the cells have room (a board of a few layers), to
      // two decimals: a small push is not written as 0, which would read as no effect.
      cells: { data, rows: L, cols: nH, rowMask: null, maxCell: 48, off: new Set(state.ablate.filter(([l, h]) => l < L && h < nH).map(([l, h]) => l * nH + h)), values: (v) => (Math.abs(v) < 0.005 ? '≈0' : fixed(v, Math.abs(v) >= 10 ? 1 : 2)) },
      scale: diverging(maxAbs),
      labels: { rows: range(L).map((l) => t('grid.layer', { l })), cols: range(nH).map((h) => t('ablate.headColumn', { h })) },
      interaction: {
        name: caption.textContent,
        // The tooltip's own value line is the push; the first line says what it is.
        // and what the head does on the input (its role, as the head grid names it).
        describe: (l, h) => [
          [t('attribution.push'), t('ablate.headName', { l, h })],
          ...(roles[l]?.[h]?.role ? [[t('tip.role'), roleText(roles[l][h], true)]] : []),
          [`layers.${l}.attn.head_logit`, `[${i}, ${h}]`],
        ],
        // The map opens on the row of the position attributed: what this head reads there, not
        // only its habit over the sentence.
        onCellClick: (l, h) => {
          app.set({ layer: l, head: h, query: i });
          app.go('attention');
        },
        // A tap shows the push; a second tap on the same head opens its map.
        confirmTap: true,
      },
    });
    // The head that raises the target most and the one that lowers it most, each with its knock-out
    // toggle; a side no head is on (every push positive, say) is said so, not filled with a weak one.
    const order = range(L * nH).sort((a, b) => data[b] - data[a]);
    const [up, down] = [order[0], order[order.length - 1]];
    const signed = (v) => `${v > 0 ? '+' : ''}${fixed(v, 3)}`;
    const named = (k) => {
      const [l, h] = [Math.floor(k / nH), k % nH];
      return [el('span', { className: 'attribution-head', dataset: { layer: l, head: h, value: String(data[k]) } }, t('attribution.headPush', { head: t('ablate.headName', { l, h }), push: signed(data[k]) })), ' ', ablateToggle(app, l, h)];
    };
    // For scale: the target's logit itself, and how much of it the heads make together. The final
    // RMSNorm is taken at its value in this run, so the logit is the sum of every part of the residual
    // stream read through it: the heads, and the rest (the embedding and the FFNs).
    const logit = logits.data[i * V + chosen];
    const heads = data.reduce((a, b) => a + b, 0);
    const scaleNote = el('span', { className: 'attribution-scale', dataset: { logit: exact(logit), heads: String(heads) } }, t('attribution.scale', { token, logit: fixed(logit, 3), heads: signed(heads), rest: signed(logit - heads) }));
    strongest.replaceChildren(
      scaleNote,
      el('span', { className: 'attribution-up' }, ...(data[up] > 0 ? [spaced(t('attribution.up', { token })), ...named(up)] : [t('attribution.noUp', { token })])),
      el('span', { className: 'attribution-down' }, ...(data[down] < 0 ? [spaced(t('attribution.down')), ...named(down)] : [t('attribution.noDown')])),
      // A push is one head's direct share of one logit; knocking the head out is a new run, in which
      // later layers respond and other tokens' logits move too. Said before the reader compares them.
      el('span', { className: 'attribution-versus' }, t('attribution.versusKnockout')),
      el('span', { className: 'how-to' }, t('attribution.clickHint')),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
      map.destroy();
    },
  };
}

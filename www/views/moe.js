// The FFN view of a mixture-of-experts model (MiniMind's MOEFeedForward, `use_moe`): token → expert
// routing for the sentence. Per token, the router's softmax over the experts (ffn.router_probs) as a
// row of bars, the expert(s) the token goes to (ffn.expert_index, most probable first) and their
// weights (ffn.expert_weight); how many tokens each expert got; and, for the chosen token, the FFN
// output as the weighted sum of its experts' outputs (ffn.expert_out → ffn.out), the sum redone here
// from the core's tensors and compared. Every number is the core's; only the sums and counts are the page's.

import { el } from '../parts/dom.js';
import { tensorFigure } from '../parts/tensor_figure.js';
import { bars } from '../parts/bars.js';
import { value } from '../parts/value.js';
import { layerSelect, tokenSelect, tokenAt, range } from '../parts/controls.js';
import { tokenText, spaced } from '../parts/format.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

const NAMES = ['router_logits', 'router_probs', 'expert_index', 'expert_weight', 'expert_out', 'out'];

export function mount(root, app) {
  const { state } = app;
  const controls = [layerSelect(app), tokenSelect(app, 'query', 'control.token')];
  const summary = el('p', { className: 'explain moe-summary' });
  const routing = el('div', { className: 'table-scroll' });
  const load = el('div', {});
  const detail = el('div', {});
  const figures = el('div', { className: 'figures' });
  root.append(
    el('div', { className: 'toolbar' }, controls.map((c) => c.node)),
    el('p', { className: 'explain' }, t('moe.explain')),
    el('pre', { className: 'formula formula-aligned' }, t('moe.formula')),
    summary,
    el('section', { className: 'card' }, el('h3', {}, t('moe.routingHeading')), el('p', { className: 'hint' }, t('moe.routingNote')), routing),
    el('section', { className: 'card' }, el('h3', {}, t('moe.loadHeading')), el('p', { className: 'hint' }, t('moe.loadNote')), load),
    el('section', { className: 'card' }, detail),
    el('section', { className: 'card' }, figures),
  );
  let shown = [];
  const updates = latest();

  async function update() {
    const signal = updates.start();
    controls.forEach((c) => c.update());
    const l = state.layer;
    const names = NAMES.map((n) => `layers.${l}.ffn.${n}`);
    const found = await app.tensors(names);
    if (signal.aborted) return;
    const [logits, probs, index, weight, expertOut, out] = names.map((n) => found.get(n));
    const [T, E] = probs.shape;
    const k = index.shape[1];
    const H = out.shape[1];
    const pieces = state.tokens.pieces;
    const sel = tokenAt(app, 'query');
    const chosen = (i) => range(k).map((s) => index.data[i * k + s]);
    const c = app.model;

    summary.textContent = t(c.norm_topk_prob ? 'moe.summaryNormed' : 'moe.summaryRaw', { e: E, k, i: c.moe_intermediate_size });

    const expertHead = range(E).map((e) => el('th', { attrs: { scope: 'col' } }, t('moe.expertN', { e })));
    routing.replaceChildren(
      el(
        'table',
        { className: 'data-table moe-routing' },
        el('thead', {}, el('tr', {}, el('th', { attrs: { scope: 'col' } }, t('tip.token')), expertHead, el('th', { attrs: { scope: 'col' } }, t('moe.chosen')))),
        el(
          'tbody',
          {},
          range(T).map((i) => {
            const picks = chosen(i);
            return el(
              'tr',
              { className: i === sel ? 'current' : '', dataset: { token: i } },
              el('th', { attrs: { scope: 'row' } }, el('button', { type: 'button', className: 'link', on: { click: () => app.set({ query: i }) } }, `${i} ${tokenText(pieces[i])}`)),
              range(E).map((e) => {
                const p = probs.data[i * E + e];
                return el(
                  'td',
                  { className: picks.includes(e) ? 'moe-cell chosen' : 'moe-cell', dataset: { expert: e } },
                  el('span', { className: 'moe-bar', attrs: { 'aria-hidden': 'true' } }, el('span', { className: 'moe-fill', style: { width: `${Math.max(0, Math.min(1, p)) * 100}%` } })),
                  value(p, 3),
                );
              }),
              el(
                'td',
                { className: 'moe-picks' },
                picks.flatMap((e, s) => [s > 0 ? ' + ' : '', el('span', { className: 'moe-pick', dataset: { expert: e, slot: s } }, t('moe.expertN', { e }), ' × ', value(weight.data[i * k + s], 3))]),
              ),
            );
          }),
        ),
      ),
    );

    const counts = range(E).map((e) => range(T).filter((i) => chosen(i).includes(e)).length);
    load.replaceChildren(
      bars(
        counts.map((n, e) => ({ label: t('moe.expertN', { e }), value: n, highlight: chosen(sel).includes(e) })),
        { max: T, format: (n) => t('moe.tokenCount', { n, t: T }), label: t('moe.loadHeading') },
      ),
    );

    // ffn.out of the chosen token, redone from its experts' outputs and weights.
    let worst = 0;
    for (let j = 0; j < H; j++) {
      let sum = 0;
      for (let s = 0; s < k; s++) sum += weight.data[sel * k + s] * expertOut.data[(sel * k + s) * H + j];
      worst = Math.max(worst, Math.abs(sum - out.data[sel * H + j]));
    }
    const picks = chosen(sel);
    detail.replaceChildren(
      el('h3', {}, t('moe.detailHeading', { i: sel, token: tokenText(pieces[sel]) })),
      el(
        'table',
        { className: 'data-table moe-detail' },
        el('thead', {}, el('tr', {}, [t('moe.expert'), t('moe.logit'), t('moe.prob'), t('moe.weight')].map((h) => el('th', { attrs: { scope: 'col' } }, h)))),
        el(
          'tbody',
          {},
          range(E).map((e) => {
            const s = picks.indexOf(e);
            return el(
              'tr',
              { className: s >= 0 ? 'current' : '', dataset: { expert: e } },
              el('th', { attrs: { scope: 'row' } }, t('moe.expertN', { e })),
              el('td', {}, value(logits.data[sel * E + e], 4)),
              el('td', {}, value(probs.data[sel * E + e], 4)),
              el('td', {}, s >= 0 ? value(weight.data[sel * k + s], 4) : t('moe.notChosen')),
            );
          }),
        ),
      ),
      el('p', { className: 'explain moe-check' }, spaced(t('moe.check', { k })), value(worst, 8)),
    );

    shown.forEach((f) => f.destroy());
    const ctx = { pieces, mask: state.mask, nRep: 1, maxCell: 8 };
    shown = [tensorFigure(names[1], probs, ctx), tensorFigure(names[5], out, ctx)];
    figures.replaceChildren(...shown.map((f) => f.node));
  }

  return {
    update,
    destroy() {
      updates.abort();
      shown.forEach((f) => f.destroy());
    },
  };
}

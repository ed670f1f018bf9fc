// One token followed as the query (Q) through the heads: the attention map's picked row (`query` in
// the link, a row clicked, a lesson's door). Under the map it says where that row's weights go in
// the head shown, and which heads give most weight to some other token: not the first token (where
// many heads park weight they do not need, the attention sink) and not the token itself, so that a
// head which links it to an earlier word (她 → 小红) can be found among all layers and heads. Every
// number is read from the run's own `layers.{l}.attn.probs`.

import { el } from './dom.js';
import { fixed, tokenText, spaced } from './format.js';
import { t } from '../strings.js';

// How many keys the row's own line lists, and how many keys the search over heads names.
const TOP_KEYS = 4;
const TOP_HEADS = 5;

// The query row a view shows: state.query when it names a row of T, else null.
export function queryOf(state, T) {
  const q = state.query;
  return Number.isInteger(q) && q >= 0 && q < T ? q : null;
}

// The row's weights in head h of a probs tensor [nH, T, S], as [{j, w}] from largest, at most `n`.
export function topKeys(probs, h, row, n = TOP_KEYS) {
  const [, T, S] = probs.shape;
  const data = probs.data.subarray((h * T + row) * S, (h * T + row + 1) * S);
  return Array.from(data, (w, j) => ({ j, w }))
    .filter(({ w }) => w >= 0.005) // what would print as 0.00 says nothing
    .sort((a, b) => b.w - a.w)
    .slice(0, n);
}

// Over every layer's probs ([nH, T, S] each), for each key other than position 0 and the row
// itself, the head that gives it most of the row's weight: [{l, h, j, w}], the keys ordered by that
// weight, largest first, at most `n`. One entry per key, so that a word found by one strong head
// (她 → 红) is not crowded out by the many heads that look at the token just before.
export function headsLookingAway(layers, row, n = TOP_HEADS) {
  const best = new Map(); // j → {l, h, j, w}
  layers.forEach((probs, l) => {
    const [nH, T, S] = probs.shape;
    for (let h = 0; h < nH; h++) {
      const base = (h * T + row) * S;
      for (let j = 1; j < S; j++) {
        if (j === row) continue;
        const w = probs.data[base + j];
        if (Number.isFinite(w) && w > 0 && !(best.get(j)?.w >= w)) best.set(j, { l, h, j, w });
      }
    }
  });
  return [...best.values()].sort((a, b) => b.w - a.w).slice(0, n);
}

// The box under the attention map. pick(l, h) opens a head; clear() lets the row go.
export function queryRowBox({ pick, clear }) {
  const node = el('section', { className: 'query-row', attrs: { 'aria-live': 'polite' } });
  return {
    node,
    // row: the query row or null; probs: this layer's probs; layers: every layer's; at: {layer, head}.
    // off(l, h): whether a head is knocked out (its weights still look; its output is dropped).
    update({ row, pieces, probs, layers, at, off = () => false }) {
      if (row === null) {
        node.replaceChildren(el('p', { className: 'hint how-to' }, t('queryRow.pick')));
        return;
      }
      const token = tokenText(pieces[row]);
      const item = ({ j, w }) => el('span', { className: 'query-row-key' }, el('span', { className: 'query-row-token' }, tokenText(pieces[j])), ' ', fixed(w, 2));
      const here = topKeys(probs, at.head, row);
      const away = headsLookingAway(layers, row);
      node.replaceChildren(
        el(
          'p',
          { className: 'query-row-title' },
          el('strong', {}, t('queryRow.title', { token, i: row })),
          ' ',
          el('button', { type: 'button', className: 'action secondary query-row-clear', on: { click: clear } }, t('queryRow.clear')),
        ),
        el('p', {}, spaced(t('queryRow.here', { l: at.layer, h: at.head })), ...here.flatMap((k, n) => (n ? [' · ', item(k)] : [item(k)]))),
        ...(away.length === 0
          ? []
          : [
          el(
            'div',
            { className: 'query-row-away' },
            el('p', {}, t('queryRow.away', { token, n: away.length })),
            el(
              'ul',
              { className: 'query-row-heads' },
              away.map((a) =>
                el(
                  'li',
                  {},
                  el(
                    'button',
                    {
                      type: 'button',
                      className: 'query-row-head',
                      dataset: { layer: a.l, head: a.h, figure: '' },
                      attrs: a.l === at.layer && a.h === at.head ? { 'aria-current': 'true' } : {},
                      on: { click: () => pick(a.l, a.h) },
                    },
                    t(a.j === row - 1 ? 'queryRow.headBefore' : 'queryRow.head', { l: a.l, h: a.h, token: tokenText(pieces[a.j]), w: fixed(a.w, 2) }),
                    off(a.l, a.h) ? el('span', { className: 'query-row-off' }, t('queryRow.off')) : null,
                  ),
                ),
              ),
            ),
          ),
            ]),
      );
    },
  };
}

// Q·K explained: one attention score taken apart on the real tensors, as the first seed does by hand
// (scores[2][0] = 0.9×0.8 + 0.1×0.2 + 0.8×0.9 + 0.0×0.1 = 1.46). For query i, key j and head h: the
// rotated query q_rope[i, h] and key k_rope[j, h / n_rep], their element-wise products and sum (the
// core's dotTerms), then what the model does with it: ÷ √d (attn.scores), + the masks
// (attn.masked_scores), softmax over the row (attn.probs). Clicking the map picks the pair; without
// a key picked, it is the query's strongest.

import { el } from '../parts/dom.js';
import { headCells, headTip, heatmap } from '../parts/heatmap.js';
import { bars } from '../parts/bars.js';
import { value } from '../parts/value.js';
import { layerSelect, headSelect, tokenSelect, tokenAt } from '../parts/controls.js';
import { sequential } from '../parts/color_scale.js';
import { axisLabel, indexLabel, tokenText, fixed, factor } from '../parts/format.js';
import { t } from '../strings.js';
import { openTutorialPair } from '../parts/pair_head.js';
import { DOOR, SENTENCE } from '../lessons/qk_match.js';
import { latest } from '../page/latest.js';

const SHOWN_TERMS = 4;

export function mount(root, app) {
  const { state } = app;
  // Without a key chosen, the pair is the query's strongest: the key its row gives most weight to,
  // so the worked example ends on a weight worth explaining, not on a 0.
  let strongest = 0;
  const keyOf = () => strongest;
  const controls = [layerSelect(app), headSelect(app), tokenSelect(app, 'query', 'control.query'), tokenSelect(app, 'key', 'control.key', keyOf)];
  const map = heatmap();
  // The tutorial's own pair, 她 and 小红, one click away: its sentence on the built-in model, Q = 她,
  // K = 红, in the head where 她 looks at 红 the most. Hidden while they are what is shown.
  const tutorialPair = el('p', { className: 'qk-tutorial-pair' }, el('button', { type: 'button', className: 'action secondary', on: { click: openPair } }, t('qk.tutorialPair')));
  function openPair() {
    return openTutorialPair(app, { key: true });
  }
  const walk = el('section', { className: 'card qk-walk', attrs: { 'aria-live': 'polite' } });
  // The head picker names the head by its habit over the whole sentence ("always looks at 苹果"),
  // which may not be what the chosen query does in it: said beside it, from the query's own row.
  const rowNote = el('p', { className: 'hint qk-row-note' });
  root.append(
    el('div', { className: 'toolbar' }, controls.map((c) => c.node)),
    el('p', { className: 'explain' }, t('qk.explain')),
    rowNote,
    tutorialPair,
    el('div', { className: 'split' }, el('figure', { className: 'card tensor-figure' }, el('figcaption', {}, t('qk.pick')), map.node), walk),
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    const l = state.layer;
    const h = state.head;
    const names = ['q_rope', 'k_rope', 'scores', 'masked_scores', 'probs'].map((n) => `layers.${l}.attn.${n}`);
    const found = await app.tensors(names);
    if (signal.aborted) return;
    const [q, k, scores, masked, probs] = names.map((n) => found.get(n));
    const [T, nH, d] = q.shape;
    const nKV = k.shape[1];
    const kv = Math.floor(h / (nH / nKV));
    const S = probs.shape[2];
    const i = tokenAt(app, 'query');
    const row = probs.data.subarray((h * T + i) * S, (h * T + i + 1) * S);
    strongest = row.reduce((best, w, n) => (w > row[best] ? n : best), 0);
    controls.forEach((c) => c.update());
    const j = tokenAt(app, 'key', keyOf);
    rowNote.textContent = t('qk.rowNote', { token: tokenText(state.tokens.pieces[i]), i, top: tokenText(state.tokens.pieces[strongest]), w: fixed(row[strongest], 2) });
    tutorialPair.hidden = state.text === SENTENCE && state.tokens.pieces[i] === DOOR.focus && state.tokens.pieces[j] === DOOR.target;
    const qv = q.data.slice((i * nH + h) * d, (i * nH + h + 1) * d);
    const kvec = k.data.slice((j * nKV + kv) * d, (j * nKV + kv + 1) * d);
    const { terms, sum } = await app.call('dot', { a: qv, b: kvec });
    if (signal.aborted) return;

    const at = (h * T + i) * S + j;
    const pieces = state.tokens.pieces;
    map.update({
      ...headCells({ data: probs.data.subarray(h * T * S, (h + 1) * T * S), T, S, pieces, mask: state.mask, maxCell: 26, input: true, future: state.causal }),
      scale: sequential(0, 1),
      mark: { r: i, c: j },
      interaction: {
        name: `${names[4]}, ${t('tip.head')} ${h}`,
        describe: headTip(names[4], h, pieces),
        onCellClick: (r, c) => app.set({ query: r, key: c }),
      },
    });

    const maxTerm = Math.max(...terms.map(Math.abs), 1e-12);
    const bias = masked.data[at] - scores.data[at];
    const maskNote = masked.data[at] === -Infinity ? t('qk.maskCausal') : bias <= -1e8 ? t('qk.maskPadding') : t('qk.maskNone');
    const equation = [...terms.slice(0, SHOWN_TERMS)].map((_, n) => `${factor(fixed(qv[n], 2), qv[n])}×${factor(fixed(kvec[n], 2), kvec[n])}`).join(' + ');
    walk.replaceChildren(
      el('h3', {}, t('qk.pair', { i, qi: tokenText(pieces[i]), j, kj: tokenText(pieces[j]), h, kv })),
      el('p', { className: 'formula' }, equation, d > SHOWN_TERMS ? ` + … ${t('qk.moreTerms', { n: d - SHOWN_TERMS })}` : '', ' = ', value(sum, 4)),
      el(
        'div',
        { className: 'terms-scroll', tabIndex: 0, attrs: { role: 'region', 'aria-label': t('qk.termsLabel') } },
        el(
          'table',
          { className: 'terms' },
          el('thead', {}, el('tr', {}, [t('tip.dim'), 'q′', 'k′', 'q′×k′', ''].map((c) => el('th', { attrs: { scope: 'col' } }, c)))),
          el(
            'tbody',
            {},
            Array.from(terms, (p, n) =>
              el(
                'tr',
                {},
                el('th', { attrs: { scope: 'row' } }, n),
                el('td', {}, value(qv[n], 3)),
                el('td', {}, value(kvec[n], 3)),
                el('td', {}, value(p, 4)),
                el('td', { className: 'term-bar', attrs: { 'aria-hidden': 'true' } }, el('span', { className: p < 0 ? 'neg' : 'pos', style: { width: `${(Math.abs(p) / maxTerm) * 100}%` } })),
              ),
            ),
          ),
        ),
      ),
      // The box shows a dozen of the d rows at once: said, with what the bars' two colours mean.
      el('p', { className: 'hint terms-note' }, el('span', { className: 'term-key pos', attrs: { 'aria-hidden': 'true' } }), ` ${t('qk.termsPos')} `, el('span', { className: 'term-key neg', attrs: { 'aria-hidden': 'true' } }), ` ${t('qk.termsNeg', { d })}`),
      el(
        'ol',
        { className: 'qk-steps' },
        el('li', { dataset: { step: 'sum' } }, el('span', { className: 'step-name' }, t('qk.stepSum', { d })), value(sum, 4)),
        el('li', { dataset: { step: 'scaled' } }, el('span', { className: 'step-name' }, t('qk.stepScale', { d, root: fixed(Math.sqrt(d), 3) })), el('code', {}, `scores${indexLabel(h, i, j)}`), ' = ', value(scores.data[at], 4)),
        el('li', { dataset: { step: 'masked' } }, el('span', { className: 'step-name' }, t('qk.stepMask')), el('code', {}, `masked_scores${indexLabel(h, i, j)}`), ' = ', value(masked.data[at], 4), el('span', { className: 'hint' }, ` ${maskNote}`)),
        el('li', { dataset: { step: 'prob' } }, el('span', { className: 'step-name' }, t('qk.stepSoftmax')), el('code', {}, `probs${indexLabel(h, i, j)}`), ' = ', value(probs.data[at], 4)),
      ),
      el('p', { className: 'hint' }, t('qk.index')),
      el('h4', {}, t('qk.rowHeading', { i, qi: tokenText(pieces[i]) })),
      bars(
        Array.from(row, (p, c) => ({ label: `${c} ${axisLabel(pieces[c], 10)}`, value: p, highlight: c === j })),
        { label: t('qk.rowHeading', { i, qi: tokenText(pieces[i]) }), digits: 4 },
      ),
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

// Scale and temperature: what the divisor in softmax(q·k / τ) does (shared/seeds/000, "why divide by
// √d"). First one row under a divisor slider, preset to the seed's [1, 2, 3] or [10, 20, 30] (÷ 10
// turns the second into the first); then a real head, its q_rope against its cached keys run through the
// core's attention with 1/τ as the scale (τ = √d is the model), with the entropy of every row and the
// mean entropy as τ sweeps. All softmaxes are the core's (maskedSoftmax, attend).

import { el } from '../parts/dom.js';
import { headCells, headTip, heatmap } from '../parts/heatmap.js';
import { bars } from '../parts/bars.js';
import { lineChart } from '../parts/line_chart.js';
import { value } from '../parts/value.js';
import { layerSelect, headSelect, range } from '../parts/controls.js';
import { sequential } from '../parts/color_scale.js';
import { axisLabel, fixed, gap, numberList, tokenText } from '../parts/format.js';
import { entropy } from '../parts/entropy.js';
import { queryOf } from '../parts/query_row.js';
import { MAX_EDIT_VALUE, MAX_SCORES_TEXT } from '../state.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

const SEED_ROWS = ['1, 2, 3', '10, 20, 30'];
const SWEEP = 25; // divisors on the entropy curve, log-spaced from √d/8 to 8√d
// The most scores the reader's own row takes: enough for any row worth reading as bars.
const MAX_OWN = 32;
const SLIDER_STEPS = 96; // the slider's stops across the same range

// Keys a row may attend to: those the masks leave alone. log2 of it is the row's largest entropy.
function visible(maskedRow) {
  return maskedRow.filter((v) => v > -1e8).length;
}

export function mount(root, app) {
  const { state } = app;
  const controls = [layerSelect(app), headSelect(app)];
  // The own row and its divisor live in the state, so that a link shows them (null: the seed's).
  // A row longer than a link keeps is cut as the field's maxlength cuts a paste.
  const setRow = (text) => app.set({ scores: text === SEED_ROWS[1] ? null : Array.from(text).slice(0, MAX_SCORES_TEXT).join('') });
  const ownInput = el('input', { type: 'text', id: 'scale-row', value: state.scores ?? SEED_ROWS[1], attrs: { inputmode: 'decimal', maxlength: MAX_SCORES_TEXT }, on: { change: () => setRow(ownInput.value) } });
  const presets = SEED_ROWS.map((text) => el('button', { type: 'button', className: 'action secondary', on: { click: () => { ownInput.value = text; setRow(text); } } }, `[${text}]`));
  // The divisor opens at the seed's τ = 10, so [10, 20, 30] / 10 = [1, 2, 3] is there at once. The
  // slider moves in steps of log10 τ; the state keeps τ.
  const ownTau = el('input', { type: 'range', id: 'scale-own-tau', min: -1, max: 2, step: 0.05, value: 1, on: { input: () => app.set({ scoresTau: Number(ownTau.value) === 1 ? null : 10 ** Number(ownTau.value) }) } });
  const ownTauLabel = el('output', { className: 'slider-value', htmlFor: 'scale-own-tau' });
  const ownOut = el('div', {});
  const headTau = el('input', { type: 'range', id: 'scale-tau', min: 0, max: SLIDER_STEPS, step: 1, on: { input: () => app.set({ divisor: tauOf(Number(headTau.value)) }) } });
  const tauLabel = el('span', { className: 'slider-value' });
  const map = heatmap();
  const entropyOut = el('div', {});
  const curve = el('div', {});
  let d = 1;
  const root2 = () => Math.sqrt(d);
  const tauOf = (stop) => root2() * 8 ** ((2 * stop) / SLIDER_STEPS - 1);
  const stopOf = (tau) => Math.round(((Math.log(tau / root2()) / Math.log(8) + 1) * SLIDER_STEPS) / 2);

  root.append(
    el('p', { className: 'explain' }, t('scale.explain')),
    el(
      'section',
      { className: 'card' },
      el('h3', {}, t('scale.ownHeading')),
      el('p', { className: 'hint' }, t('scale.seedNote')),
      el('div', { className: 'toolbar' }, el('label', { htmlFor: 'scale-row' }, t('scale.ownRow')), ownInput, presets, el('label', { htmlFor: 'scale-own-tau' }, t('scale.divisor')), ownTau, ownTauLabel),
      ownOut,
    ),
    el(
      'section',
      { className: 'card' },
      el('h3', {}, t('scale.headHeading')),
      el('div', { className: 'toolbar' }, controls.map((c) => c.node), el('label', { htmlFor: 'scale-tau' }, t('scale.divisor')), headTau, tauLabel),
      el('div', { className: 'split' }, el('div', {}, map.node), entropyOut),
      curve,
    ),
  );
  const updates = latest();

  // softmax(row / τ) by the core, one row.
  const softmax = (row, tau) => app.call('softmax', { scores: Float32Array.from(row), spec: { t: 1, s: row.length, causal: false, scale: 1 / tau } });

  async function update() {
    const signal = updates.start();
    controls.forEach((c) => c.update());
    // From the state (a link, back and forward), unless the reader is typing in the field.
    const row = state.scores ?? SEED_ROWS[1];
    if (document.activeElement !== ownInput) ownInput.value = row;
    const own = numberList(row);
    // Scores beyond ±MAX_EDIT_VALUE are refused: divided by the smallest τ (0.1) larger ones would
    // leave f32's range (3e38 / 0.1 is ∞, and softmax of ∞ − ∞ is NaN).
    // 1e400 is a number, only too large (Number gives ∞): it is told the range, not "type numbers".
    const ownNumbers = own.length > 0 && !own.some(Number.isNaN);
    const ownFits = own.length <= MAX_OWN;
    const ownValid = ownNumbers && ownFits && own.every((x) => Math.abs(x) <= MAX_EDIT_VALUE);
    ownInput.setAttribute('aria-invalid', String(!ownValid));
    const ownDivisor = state.scoresTau ?? 10;
    ownTau.value = String(Math.log10(ownDivisor));
    ownTauLabel.textContent = `τ = ${+ownDivisor.toPrecision(3)}`;

    const l = state.layer;
    const h = state.head;
    const names = [`layers.${l}.attn.q_rope`, `layers.${l}.attn.k_cache`];
    const [plain, divided, found] = await Promise.all([ownValid ? softmax(own, 1) : null, ownValid ? softmax(own, ownDivisor) : null, app.tensors(names)]);
    if (signal.aborted) return;
    const [q, k] = names.map((n) => found.get(n));
    const [T, nH] = q.shape;
    d = q.shape[2];
    const [S, nKV] = k.shape;
    const kv = Math.floor(h / (nH / nKV));
    const qh = Float32Array.from({ length: T * d }, (_, n) => q.data[(Math.floor(n / d) * nH + h) * d + (n % d)]);
    const kh = Float32Array.from({ length: S * d }, (_, n) => k.data[(Math.floor(n / d) * nKV + kv) * d + (n % d)]);
    const tau = state.divisor ?? root2();
    const padding = state.mask.every((m) => m === 1) ? null : state.mask;
    const spec = (divisor) => ({ t: T, s: S, d, causal: state.causal, padding, scale: 1 / divisor });
    const sweep = range(SWEEP).map((n) => root2() * 8 ** ((2 * n) / (SWEEP - 1) - 1));
    const [now, ...swept] = await Promise.all([tau, ...sweep].map((divisor) => app.call('attend', { q: qh, k: kh, spec: spec(divisor) })));
    if (signal.aborted) return;

    const panel = (title, probs) =>
      el(
        'figure',
        { className: 'panel-cell' },
        el('figcaption', { className: 'panel-title' }, title),
        bars(own.map((x, c) => ({ label: String(x), value: probs[c] })), { label: title }),
        el('p', { className: 'hint' }, t('scale.entropy'), gap(t('scale.entropy')), value(entropy(probs), 3), ` ${t('scale.bits')}`),
      );
    ownOut.replaceChildren(
      ownValid
        ? el('div', { className: 'multiples wide' }, panel(`softmax([${own.join(', ')}])`, plain.probs), panel(`softmax([${own.join(', ')}] / ${fixed(ownDivisor, 2)})`, divided.probs))
        : el('p', { className: 'field-error' }, t(!ownNumbers ? 'scale.ownInvalid' : !ownFits ? 'scale.ownTooMany' : 'scale.ownTooLarge', { max: MAX_EDIT_VALUE.toLocaleString('en'), most: MAX_OWN, n: own.length.toLocaleString('en') })),
    );

    headTau.value = String(stopOf(tau));
    tauLabel.replaceChildren('τ = ', value(tau, 3), t('scale.tauRoot', { root: fixed(root2(), 3) }));
    const pieces = state.tokens.pieces;
    // The followed query (a lesson's 她, a clicked row): outlined in the map, its entropy bar marked,
    // and its entropy at τ set beside the same row at √d.
    const query = queryOf(state, T);
    map.update({
      ...headCells({ data: now.probs, T, S, pieces, mask: state.mask, maxCell: 26, input: true, future: state.causal }),
      scale: sequential(0, 1),
      mark: query === null ? null : { r: query, c: null },
      interaction: {
        name: t('scale.headLabel', { l, h }),
        describe: (i, j) => [...headTip('probs', h, pieces)(i, j), ['τ', fixed(tau, 3)]],
        onCellClick: (r) => app.set({ query: r === query ? null : r }),
        start: query === null ? null : { r: query, c: 0 },
      },
    });
    const rows = range(T).filter((i) => state.mask[i] !== 0);
    // Every query row padding: no row to measure, said in place of two empty charts.
    if (rows.length === 0) {
      entropyOut.replaceChildren(el('h4', {}, t('scale.rowEntropy')), el('p', { className: 'hint scale-all-padded' }, t('scale.allPadded')));
      curve.replaceChildren();
      return;
    }
    const entropies = rows.map((i) => entropy(now.probs.subarray(i * S, (i + 1) * S)));
    const atRoot = swept[(SWEEP - 1) / 2].probs; // the sweep's middle divisor is √d itself
    const rowEntropy = (probs, i) => fixed(entropy(probs.subarray(i * S, (i + 1) * S)), 2);
    const followedNote =
      query !== null && rows.includes(query)
        ? [
            el(
              'p',
              { className: 'followed-entropy' },
              t(state.divisor === null ? 'scale.followedRoot' : 'scale.followed', {
                token: tokenText(pieces[query]),
                i: query,
                now: rowEntropy(now.probs, query),
                tau: fixed(tau, 2),
                root: rowEntropy(atRoot, query),
                max: fixed(Math.log2(visible(now.masked.subarray(query * S, (query + 1) * S))), 2),
              }),
            ),
          ]
        : [];
    entropyOut.replaceChildren(
      el('h4', {}, t('scale.rowEntropy')),
      bars(
        rows.map((i, n) => ({ label: `${i} ${axisLabel(pieces[i], 8)}`, value: entropies[n], note: `/ ${fixed(Math.log2(visible(now.masked.subarray(i * S, (i + 1) * S))), 2)}`, highlight: i === query })),
        { max: Math.log2(S), digits: 3, label: t('scale.rowEntropy') },
      ),
      ...followedNote,
      el('p', { className: 'hint' }, t('scale.entropyNote')),
    );
    const meanEntropy = (probs) => rows.reduce((sum, i) => sum + entropy(probs.subarray(i * S, (i + 1) * S)), 0) / rows.length;
    curve.replaceChildren(
      el('h4', {}, t('scale.curveHeading')),
      lineChart({
        xs: sweep,
        series: [{ name: t('scale.meanEntropy'), values: swept.map((r) => meanEntropy(r.probs)), className: 'series-a' }],
        markers: [
          { x: root2(), label: '√d' },
          { x: tau, label: 'τ' },
        ],
        xLabel: t('scale.divisor'),
        yLabel: t('scale.meanEntropy'),
        label: t('scale.curveHeading'),
        logX: true,
      }).node,
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

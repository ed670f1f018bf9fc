// Activation patching: where the information that decides the answer sits. The text is the clean
// run, Compare's second sentence (`compare`, views/compare.js) the corrupted one; the metric is
// m = logit[target] − logit[against] at the last position (`patchTarget`, `patchAgainst`; null: the
// clean run's top-1 next token and the corrupted run's). The core (`Session.patch`,
// src/analysis/patching.rs) puts back one activation of the clean run at a time: each layer's output
// at each position, and each head's context at every position. Both are drawn as the share of the
// clean metric restored, (m − m_corrupt) / (m_clean − m_corrupt), on one diverging scale, with the raw
// m on hover. It is L·(T + nH) partial runs (a minute on SmolLM2), so it runs only when asked, with its
// progress and Cancel, and its result is kept (for this model and these inputs) until they change.

import { el } from '../parts/dom.js';
import { heatmap, paintAll } from '../parts/heatmap.js';
import { range } from '../parts/controls.js';
import { diverging, neutralWord } from '../parts/color_scale.js';
import { axisLabel, fixed, tokenText } from '../parts/format.js';
import { ablateToggle } from '../parts/ablation.js';
import { t } from '../strings.js';
import { errorText } from '../page/error_text.js';
import { defaultSecond, tokenCache } from './compare.js';
import { latest } from '../page/latest.js';

// The candidates each token picker offers: the most likely next tokens of each run.
const OFFERED = 8;
// How many of the strongest cells and heads are named.
const NAMED = 3;

// Kept across views (a view left and opened again finds them): the last result, {model, key, result}
// (model: the app.model it was run on); the run under way, {key, done, total, started}; the key of
// the inputs whose run was cancelled or refused, {key, error}; and the mounted view's redraw.
let kept = null;
let running = null;
let stopped = null;
let mounted = null;

export function mount(root, app) {
  const { state } = app;
  const picker = (key, field) => {
    const id = `${field}-${Math.random().toString(36).slice(2, 7)}`;
    const select = el('select', { id, name: field, on: { change: () => app.set({ [field]: select.value === '' ? null : Number(select.value) }) } });
    return { select, node: el('div', { className: 'picker' }, el('label', { htmlFor: id }, t(key)), select) };
  };
  const target = picker('patch.target', 'patchTarget');
  const against = picker('patch.against', 'patchAgainst');
  const runButton = el('button', { type: 'button', className: 'action patch-run', on: { click: () => run() } }, t('patch.run'));
  const sentences = el('div', { className: 'patch-sentences' });
  const status = el('div', { className: 'patch-status', attrs: { 'aria-live': 'polite' } });
  const metrics = el('p', { className: 'hint patch-metrics' });
  const maps = { resid: heatmap(), heads: heatmap() };
  const titles = { resid: el('h4', {}, t('patch.residTitle')), heads: el('h4', {}, t('patch.headsTitle')) };
  const strongest = el('div', { className: 'hint patch-strongest' });
  const reading = el('div', { className: 'patch-reading' });
  const result = el(
    'section',
    { className: 'card patch-result', hidden: true },
    el('h3', {}, t('patch.resultTitle')),
    metrics,
    el('p', { className: 'explain' }, t('patch.howToRead', { neutral: neutralWord() })),
    el('div', { className: 'split patch-maps' }, el('div', { className: 'patch-resid' }, titles.resid, maps.resid.node), el('div', { className: 'patch-heads' }, titles.heads, maps.heads.node)),
    strongest,
    reading,
  );
  root.append(
    el('div', { className: 'toolbar' }, target.node, against.node, runButton),
    el('p', { className: 'explain' }, t('patch.explain')),
    sentences,
    status,
    result,
  );
  const updates = latest();
  let inputs = null; // {key, request, A, B, differ, pieces} of the inputs shown now

  const progress = {
    bar: el('progress', { className: 'patch-progress' }),
    text: el('span', { className: 'patch-progress-text' }),
    other: el('span', { className: 'hint' }, ' ', t('patch.runningOther')),
  };
  progress.node = el('div', { className: 'patch-running' }, progress.bar, ' ', progress.text, ' ', el('button', { type: 'button', className: 'action secondary patch-cancel', on: { click: () => app.cancel() } }, t('app.cancel')), progress.other);

  const tokensOf = tokenCache(app);

  const chips = (tokens, differ) => tokens.pieces.map((p, i) => el('span', { className: `compare-token${tokens.special?.[i] ? ' special' : ''}${differ.includes(i) ? ' changed' : ''}` }, tokenText(p)));
  const toCompare = () => el('a', { href: '#view=compare', className: 'patch-to-compare', on: { click: (e) => (e.preventDefault(), app.go('compare')) } }, t('patch.toCompare'));

  // The named token of a picker's choice; the options are both runs' most likely next tokens.
  function fill({ select }, chosen, fieldValue, topKey, top, offered, pieceOf) {
    select.replaceChildren(
      el('option', { value: '' }, t(topKey, { token: tokenText(top.piece) })),
      ...offered.map((c) => el('option', { value: String(c.id) }, `${tokenText(c.piece)} · ${c.id}`)),
      ...(offered.some((c) => c.id === chosen) ? [] : [el('option', { value: String(chosen) }, `${tokenText(pieceOf(chosen))} · ${chosen}`)]),
    );
    select.value = fieldValue === null ? '' : String(chosen);
  }

  async function update() {
    const signal = updates.start();
    const A = state.tokens;
    const textB = state.compare ?? (await defaultSecond(state.text, A.ids.length, tokensOf));
    if (signal.aborted) return;
    let B;
    try {
      B = await tokensOf(textB);
    } catch (err) {
      if (signal.aborted) return;
      inputs = null;
      sentences.replaceChildren(el('p', { className: 'message message-error', attrs: { role: 'alert' } }, t('compare.bFailed', { why: errorText(err) })), toCompare());
      return show();
    }
    if (signal.aborted) return;
    const TA = A.ids.length;
    const TB = B.ids.length;
    const differ = TA === TB ? range(TA).filter((i) => A.ids[i] !== B.ids[i]) : [];
    sentences.replaceChildren(
      el('p', { className: 'compare-sentence' }, el('strong', {}, t('patch.clean')), ' ', chips(A, differ)),
      el('p', { className: 'compare-sentence' }, el('strong', {}, t('patch.corrupt')), ' ', chips(B, differ), ' ', toCompare()),
    );
    if (TA !== TB || TA === 0 || differ.length === 0) {
      inputs = null;
      const why = TA === 0 || TB === 0 ? t('patch.empty') : TA !== TB ? t('patch.lengths', { a: TA, b: TB }) : t('patch.same');
      sentences.append(el('p', { className: 'message message-error patch-refused', attrs: { role: 'alert' } }, why));
      return show();
    }
    // The two runs' own predictions, of the model with every head on (patching runs it so).
    const intact = state.ablate.length ? { ablate: [] } : {};
    const [runA, runB] = await Promise.all([app.tensors(['logits'], intact), app.tensors(['logits'], { ...intact, ids: B.ids, attention_mask: null })]);
    if (signal.aborted) return;
    const V = runA.get('logits').shape[1];
    const last = (run) => run.get('logits').data.slice((TA - 1) * V, TA * V);
    const [topA, topB] = await Promise.all([app.call('top', { logits: last(runA), k: OFFERED }), app.call('top', { logits: last(runB), k: OFFERED })]);
    if (signal.aborted) return;
    const chosenTarget = state.patchTarget ?? topA[0].id;
    // Where both runs predict the same token, the corrupted run's next most likely one stands against it.
    const topAgainst = topB.find((c) => c.id !== chosenTarget) ?? topB[0];
    const chosenAgainst = state.patchAgainst ?? topAgainst.id;
    const offered = [...topA, ...topB.filter((c) => !topA.some((a) => a.id === c.id))];
    const missing = [chosenTarget, chosenAgainst].filter((id) => !offered.some((c) => c.id === id));
    const missingPieces = missing.length ? await app.call('pieces', { ids: missing }) : [];
    if (signal.aborted) return;
    const pieceOf = (id) => offered.find((c) => c.id === id)?.piece ?? missingPieces[missing.indexOf(id)];
    fill(target, chosenTarget, state.patchTarget, 'patch.cleanTop', topA[0], offered, pieceOf);
    fill(against, chosenAgainst, state.patchAgainst, topAgainst === topB[0] ? 'patch.corruptTop' : 'patch.corruptNext', topAgainst, offered, pieceOf);
    const request = { clean: A.ids.slice(), corrupt: B.ids.slice(), target: chosenTarget, against: chosenAgainst };
    inputs = { key: JSON.stringify(request), request, A, B, differ, pieces: { target: pieceOf(chosenTarget), against: pieceOf(chosenAgainst) } };
    if (chosenTarget === chosenAgainst) sentences.append(el('p', { className: 'message message-error patch-refused', attrs: { role: 'alert' } }, t('patch.sameTokens')));
    show();
  }

  // The run's state for the inputs shown: running, stopped, refused, a kept result, or ready to run.
  function show() {
    const key = inputs?.key;
    const ok = Boolean(inputs) && inputs.request.target !== inputs.request.against;
    runButton.disabled = !ok || running !== null;
    const mine = kept && kept.model === app.model && kept.key === key ? kept.result : null;
    if (running) {
      showProgress();
      if (!status.contains(progress.node)) status.replaceChildren(progress.node);
    } else if (stopped?.key === key && key) {
      status.replaceChildren(el('p', { className: stopped.error ? 'message message-error' : 'message message-empty', attrs: { role: stopped.error ? 'alert' : 'status' } }, stopped.error ? errorText(stopped.error) : t('patch.cancelled')));
    } else if (ok && !mine) {
      status.replaceChildren(el('p', { className: 'hint patch-cost' }, t('patch.cost', { runs: app.model.num_hidden_layers * (inputs.A.ids.length + app.model.num_attention_heads) })));
    } else status.replaceChildren();
    result.hidden = !mine;
    if (mine) draw(mine);
  }

  // Updated in place, so that Cancel stays the same button under the pointer as the run goes on.
  function showProgress() {
    const { done, total, started } = running;
    const seconds = (performance.now() - started) / 1000;
    Object.assign(progress.bar, { max: total || 1, value: done });
    progress.text.textContent = total ? t('patch.progress', { done, total, s: seconds.toFixed(0) }) : t('patch.starting');
    progress.other.hidden = running.key === inputs?.key;
  }

  async function run() {
    if (!inputs || running) return;
    const { key, request } = inputs;
    const model = app.model;
    running = { key, done: 0, total: 0, started: performance.now() };
    stopped = null;
    show();
    try {
      const found = await app.call('patch', request, {
        onProgress: ({ done, total }) => {
          if (!running) return;
          Object.assign(running, { done, total });
          mounted?.progress();
        },
      });
      kept = { model, key, result: found };
    } catch (err) {
      stopped = { key, error: err.cancelled ? null : err };
    }
    running = null;
    mounted?.show();
  }

  const share = (m, r) => (m - r.corrupt_metric) / (r.clean_metric - r.corrupt_metric);

  function draw(r) {
    const { layers: L, positions: T, heads: nH } = r;
    const { A, B, differ, pieces } = inputs;
    const tok = { target: tokenText(pieces.target), against: tokenText(pieces.against) };
    metrics.textContent = t('patch.metrics', { ...tok, clean: fixed(r.clean_metric, 3), corrupt: fixed(r.corrupt_metric, 3) });
    const gap = r.clean_metric - r.corrupt_metric;
    if (Math.abs(gap) < 1e-6) {
      strongest.replaceChildren(el('p', { className: 'message message-empty' }, t('patch.noGap')));
      reading.replaceChildren();
      maps.resid.node.hidden = maps.heads.node.hidden = true;
      return;
    }
    maps.resid.node.hidden = maps.heads.node.hidden = false;
    const resid = r.resid_out.map((m) => share(m, r));
    const heads = r.head_context.map((m) => share(m, r));
    let maxAbs = 1;
    for (const v of [...resid, ...heads]) if (Number.isFinite(v)) maxAbs = Math.max(maxAbs, Math.abs(v));
    const scale = diverging(maxAbs);
    const posLabel = (p) => (differ.includes(p) ? `${axisLabel(A.pieces[p], 6)}→${axisLabel(B.pieces[p], 6)}` : axisLabel(A.pieces[p]));
    const layerLabels = range(L).map((l) => t('grid.layer', { l }));
    const tip = (raw) => [t('patch.rawMetric', tok), fixed(raw, 3)];
    maps.resid.update({
      cells: { data: resid, rows: L, cols: T, rowMask: null, maxCell: 28 },
      scale,
      labels: { rows: layerLabels, cols: range(T).map(posLabel) },
      interaction: {
        name: titles.resid.textContent,
        describe: (l, p) => [
          [t('patch.share'), t('patch.residCell', { l, p, token: tokenText(A.pieces[p]) })],
          tip(r.resid_out[l * T + p]),
          ['patch.resid_out', `[${l}, ${p}]`],
        ],
      },
    });
    maps.heads.update({
      cells: { data: heads, rows: L, cols: nH, rowMask: null, maxCell: 28 },
      scale,
      labels: { rows: layerLabels, cols: range(nH).map((h) => t('ablate.headColumn', { h })) },
      interaction: {
        name: titles.heads.textContent,
        describe: (l, h) => [[t('patch.share'), t('ablate.headName', { l, h })], tip(r.head_context[l * nH + h]), ['patch.head_context', `[${l}, ${h}]`]],
        onCellClick: (l, h) => openHead(l, h, T),
        confirmTap: true,
      },
    });
    paintAll([maps.resid, maps.heads]);

    const pct = (v) => `${(v * 100).toFixed(0)}%`;
    const top = (values) => range(values.length).sort((a, b) => values[b] - values[a]).slice(0, NAMED).filter((k) => values[k] > 0);
    // Cells: the strongest layer at each of the best positions (one position's neighbouring layers
    // restore about as much, and would fill the list).
    const bestAt = range(T).map((p) => range(L).reduce((b, l) => (resid[l * T + p] > resid[b * T + p] ? l : b), 0) * T + p);
    const cellsNamed = bestAt
      .filter((k) => resid[k] > 0)
      .sort((a, b) => resid[b] - resid[a])
      .slice(0, NAMED)
      .map((k) => {
      const [l, p] = [Math.floor(k / T), k % T];
      return el('li', { className: 'patch-cell', dataset: { layer: l, position: p, share: String(resid[k]) } }, t('patch.cellNamed', { l, p, token: tokenText(A.pieces[p]), share: pct(resid[k]) }));
    });
    const headsNamed = top(heads).map((k) => {
      const [l, h] = [Math.floor(k / nH), k % nH];
      return el(
        'li',
        { className: 'patch-head', dataset: { layer: l, head: h, share: String(heads[k]) } },
        el('span', { className: 'patch-head-name' }, t('patch.headNamed', { head: t('ablate.headName', { l, h }), share: pct(heads[k]) })),
        ' ',
        el('button', { type: 'button', className: 'action secondary patch-open-head', on: { click: () => openHead(l, h, T) } }, t('patch.openMap')),
        ' ',
        ablateToggle(app, l, h),
      );
    });
    strongest.replaceChildren(
      el('p', {}, t('patch.strongestCells')),
      cellsNamed.length ? el('ul', {}, cellsNamed) : el('p', {}, t('patch.noneRestore')),
      el('p', {}, t('patch.strongestHeads')),
      headsNamed.length ? el('ul', {}, headsNamed) : el('p', {}, t('patch.noneRestore')),
    );
    reading.replaceChildren(...where(resid, heads, L, T, nH));
  }

  // What the heatmap shows, read off its numbers: layer by layer the position whose clean
  // activation restores most, consecutive layers with the same one said together, then the heads
  // that restore a tenth of the metric or more.
  function where(resid, heads, L, T, nH) {
    const { A, differ } = inputs;
    const spans = [];
    for (const l of range(L)) {
      const row = resid.subarray(l * T, (l + 1) * T);
      const p = range(T).reduce((b, q) => (row[q] > row[b] ? q : b), 0);
      const s = spans[spans.length - 1];
      if (s && s.p === p) {
        s.to = l;
        s.max = Math.max(s.max, row[p]);
        s.min = Math.min(s.min, row[p]);
      } else spans.push({ p, from: l, to: l, max: row[p], min: row[p] });
    }
    const what = (p) => (p === T - 1 ? t('patch.lastPosition') : differ.includes(p) ? t('patch.changedPosition') : '');
    const pct = (v) => `${(v * 100).toFixed(0)}%`;
    const items = spans.map(({ p, from, to, min, max }) =>
      el('li', { dataset: { from, to, position: p } }, t(from === to ? 'patch.spanOne' : 'patch.span', { from, to, p, token: tokenText(A.pieces[p]), what: what(p), range: min === max ? pct(max) : `${pct(min)}–${pct(max)}` })),
    );
    const carriers = range(L * nH)
      .filter((k) => heads[k] >= 0.1)
      .sort((a, b) => heads[b] - heads[a])
      .slice(0, 6)
      .map((k) => t('patch.carrier', { head: t('ablate.headName', { l: Math.floor(k / nH), h: k % nH }), share: pct(heads[k]) }));
    return [
      el('h4', {}, t('patch.readingTitle')),
      el('ul', { className: 'patch-spans' }, items),
      el('p', { className: 'patch-carriers' }, carriers.length ? t('patch.carriers', { heads: carriers.join(t('patch.listJoin')) }) : t('patch.noCarriers')),
    ];
  }

  // A head's attention map, at the last position (the row the metric is read at).
  function openHead(l, h, T) {
    app.set({ layer: l, head: h, query: T - 1 });
    app.go('attention');
  }

  mounted = { show, progress: showProgress };
  const me = mounted;
  return {
    update,
    destroy() {
      updates.abort();
      if (mounted === me) mounted = null;
      Object.values(maps).forEach((m) => m.destroy());
    },
  };
}

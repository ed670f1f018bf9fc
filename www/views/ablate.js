// Knock out heads: pick any set of (layer, head) and the model runs again with those heads' outputs
// set to zero (their slice of attn.context before o_proj, at every position; the core does it, asked
// by the run's `ablate`). Shown: a layers × heads board of toggles, the prediction at a position
// before and after side by side (parts/prediction_diff.js: top tokens, probabilities, the change, KL
// of the two full distributions), and which layers changed, measured on the two runs' tensors, so
// the reader knows which other views now look different.

import { el } from '../parts/dom.js';
import { range, tokenSelect, tokenAt } from '../parts/controls.js';
import { ablateToggle, headList, isAblated, toggleHead } from '../parts/ablation.js';
import { distribution, predictionDiff } from '../parts/prediction_diff.js';
import { klDivergence } from '../parts/entropy.js';
import { fixed, percent, tokenText, spaced } from '../parts/format.js';
import { pageHref } from '../link.js';
import { t } from '../strings.js';
import { headRoles, roleBadge, roleLegend } from '../parts/head_roles.js';
import { scrollFade } from '../parts/scroll_fade.js';
import { headPushes } from '../parts/head_push.js';
import { latest } from '../page/latest.js';

// Differences below this (relative to the tensor's largest magnitude) are float noise, not a change.
const UNCHANGED = 1e-6;

// The largest |a − b| over two tensors, relative to the largest |a| (`share`), and as it is (`diff`).
function change(a, b) {
  let diff = 0;
  let size = 0;
  for (let i = 0; i < a.length; i++) {
    if (!Number.isFinite(a[i]) || !Number.isFinite(b[i])) continue;
    diff = Math.max(diff, Math.abs(a[i] - b[i]));
    size = Math.max(size, Math.abs(a[i]));
  }
  return { share: size > 0 ? diff / size : diff, diff };
}

// KL(before ‖ after) of the next-token distribution at each position: where the knock-out moves the
// prediction. Softmax in f64 here (the prediction below uses the core's, to the same digits).
function klByPosition(before, after, T, V) {
  const p = new Float64Array(V);
  const q = new Float64Array(V);
  const softmax = (logits, i, out) => {
    let max = -Infinity;
    for (let v = 0; v < V; v++) max = Math.max(max, logits[i * V + v]);
    let z = 0;
    for (let v = 0; v < V; v++) z += out[v] = Math.exp(logits[i * V + v] - max);
    for (let v = 0; v < V; v++) out[v] /= z;
  };
  return Array.from({ length: T }, (_, i) => {
    softmax(before, i, p);
    softmax(after, i, q);
    return klDivergence(p, q);
  });
}

// The head whose own output pushes the top next token at position i up most (its direct logit
// attribution, as the head attribution view computes it): {l, h, token}, or null where none pushes it up.
async function strongestPush(app, i) {
  const logits = (await app.tensors(['logits'])).get('logits');
  const V = logits.shape[1];
  const [top] = await app.call('top', { logits: logits.data.slice(i * V, (i + 1) * V), k: 1 });
  const pushes = await headPushes(app, i, top.id);
  const k = pushes.indexOf(Math.max(...pushes));
  const nH = app.model.num_attention_heads;
  return pushes[k] > 0 ? { l: Math.floor(k / nH), h: k % nH, token: tokenText(top.piece) } : null;
}

export function mount(root, app) {
  const { state } = app;
  // Without a position picked: the last, whose next token the output, the logit lens and head
  // attribution read; where the knock-out changes the prediction most is one click away (below).
  const position = tokenSelect(app, 'query', 'control.position');
  const board = el('div', { className: 'ablate-board' });
  const chosen = el('p', { className: 'ablate-chosen' });
  const prediction = el('div', { attrs: { 'aria-live': 'polite' } });
  const changed = el('div', {});
  // The card a suggested knock-out brings into view (under the sticky bar), its heading focused.
  const predictionHeading = el('h3', { tabIndex: -1 }, t('ablate.predictionTitle'));
  const predictionCard = el('section', { className: 'card ablate-prediction' }, predictionHeading, prediction);
  let reveal = false;
  root.append(
    el('div', { className: 'toolbar' }, position.node),
    el('p', { className: 'explain' }, t('ablate.explain')),
    el('section', { className: 'card' }, el('h3', {}, t('ablate.boardTitle')), el('p', { className: 'hint' }, t('ablate.boardHint')), roleLegend(false, { weak: true }), board, chosen),
    predictionCard,
    el('section', { className: 'card ablate-changed' }, el('h3', {}, t('ablate.changedTitle')), changed),
  );
  // Wider than a phone: the board scrolls sideways, its edge fading where more heads lie beyond.
  const fade = scrollFade(board, undefined, { cue: true });
  const updates = latest();
  let rolesShown = null;

  // roles: what each head does on the input (parts/head_roles.js) once measured, under its toggle,
  // so a reader picks a head by what it does, not by its number alone.
  function drawBoard(roles = null) {
    const { num_hidden_layers: L, num_attention_heads: nH } = app.model;
    board.style.gridTemplateColumns = `auto repeat(${nH}, minmax(min-content, max-content))`;
    const cell = (l, h) => {
      const r = roles?.[l]?.[h];
      // One framed box per head, its toggle and its role together; a click anywhere in it toggles.
      const toggle = ablateToggle(app, l, h, { short: true });
      return el(
        'div',
        { className: `ablate-board-cell${isAblated(state, l, h) ? ' on' : ''}`, dataset: { layer: l, head: h }, on: { click: (e) => e.target !== toggle && toggle.click() } },
        toggle,
        r?.role ? roleBadge(r, state.tokens.pieces, { compact: true }) : null,
      );
    };
    board.replaceChildren(
      el('span', {}),
      ...range(nH).map((h) => el('span', { className: 'ablate-board-head' }, t('ablate.headColumn', { h }))),
      ...range(L).flatMap((l) => [el('span', { className: 'ablate-board-layer' }, t('grid.layer', { l })), ...range(nH).map((h) => cell(l, h))]),
    );
    chosen.textContent = state.ablate.length ? t('ablate.chosen', { heads: headList(state.ablate) }) : t('ablate.noneChosen');
    fade.mark();
  }

  async function update() {
    const signal = updates.start();
    position.update();
    drawBoard(rolesShown);
    headRoles(app)
      .then((roles) => {
        if (signal.aborted) return;
        rolesShown = roles;
        drawBoard(roles);
      })
      .catch(() => {}); // the board keeps its toggles without the labels
    if (state.ablate.length === 0) {
      prediction.replaceChildren(el('p', { className: 'hint' }, t('ablate.pickFirst')));
      changed.replaceChildren(el('p', { className: 'hint' }, t('ablate.pickFirstLayers')));
      // A first head to try: the one whose output pushes the model's top token here up most (head
      // attribution), so the first knock-out a newcomer makes shows a change.
      const suggestion = await strongestPush(app, tokenAt(app, 'query'));
      if (signal.aborted || !suggestion) return;
      const { l, h, token } = suggestion;
      prediction.append(
        el('p', { className: 'ablate-try' }, spaced(t('ablate.tryLead')), el('button', { type: 'button', className: 'action ablate-try-head', dataset: { layer: l, head: h }, on: { click: () => {
          // The board above grows a bar and the result replaces this line: once it is drawn, the
          // result is brought into view (the end of update).
          reveal = true;
          toggleHead(app, l, h);
        } } }, t('ablate.tryHead', { l, h })), t('ablate.tryWhy', { token })),
      );
      return;
    }
    const L = app.model.num_hidden_layers;
    const names = ['logits', ...range(L).flatMap((l) => [`layers.${l}.attn.probs`, `layers.${l}.out`])];
    const [before, after] = await Promise.all([app.tensors(names, { ablate: [] }), app.tensors(names)]);
    if (signal.aborted) return;
    const V = after.get('logits').shape[1];
    const T = state.tokens.ids.length;
    const kls = klByPosition(before.get('logits').data, after.get('logits').data, T, V);
    const most = kls.indexOf(Math.max(...kls));
    const i = tokenAt(app, 'query');
    const row = (run) => run.get('logits').data.slice(i * V, (i + 1) * V);
    const [dBefore, dAfter] = await Promise.all([distribution(app, row(before)), distribution(app, row(after))]);
    if (signal.aborted) return;
    const strip = el(
      'div',
      { className: 'ablate-kl-strip', attrs: { role: 'group', 'aria-label': t('ablate.klStrip') } },
      kls.map((kl, k) =>
        el(
          'button',
          {
            type: 'button',
            className: 'ablate-kl-token',
            title: t('ablate.klTip', { i: k, kl: kl.toFixed(4) }),
            dataset: { position: k, kl: String(kl) },
            attrs: { 'aria-pressed': String(k === i) },
            style: { background: `color-mix(in srgb, var(--danger) ${Math.round((kls[most] > 0 ? kl / kls[most] : 0) * 55)}%, var(--surface))` },
            on: { click: () => app.set({ query: k }) },
          },
          tokenText(state.tokens.pieces[k]),
        ),
      ),
    );
    // The last position often barely moves (which would read as "this head does nothing"): where the
    // change is largest elsewhere, it is a click away.
    const elsewhere = i !== most;
    prediction.replaceChildren(
      el('p', { className: 'ablate-kl-lead' }, t('ablate.klLead', { i: most, token: tokenText(state.tokens.pieces[most]), kl: kls[most].toFixed(4) })),
      strip,
      ...(elsewhere ? [el('p', { className: 'hint ablate-most' }, el('button', { type: 'button', className: 'action secondary', on: { click: () => app.set({ query: most }) } }, t('ablate.showMost', { i: most, token: tokenText(state.tokens.pieces[most]) })))] : []),
      el('p', { className: 'hint figure-caption' }, t('ablate.predictionNote', { i, token: tokenText(state.tokens.pieces[i]), v: V })),
      predictionDiff(dBefore, dAfter, { a: t('ablate.before'), b: t('ablate.after') }),
    );
    const first = Math.min(...state.ablate.map(([l]) => l));
    let widest = null; // the layer whose weights moved most, for the lead's example
    const rows = range(L).map((l) => {
      const probs = change(before.get(`layers.${l}.attn.probs`).data, after.get(`layers.${l}.attn.probs`).data);
      if (probs.share > UNCHANGED && (widest === null || probs.share > widest.share)) widest = { l, ...probs };
      const out = change(before.get(`layers.${l}.out`).data, after.get(`layers.${l}.out`).data);
      // A share of the tensor's largest value, as a percentage (changedLead says of what).
      const cell = ({ share: v }) => el('td', { className: 'num', dataset: { value: String(v) } }, v <= UNCHANGED ? t('ablate.unchanged') : percent(v));
      return el('tr', { dataset: { layer: l } }, el('th', { scope: 'row' }, t('grid.layer', { l })), cell(probs), cell(out));
    });
    const view = (id) => el('a', { href: pageHref({ view: id }), on: { click: (e) => { e.preventDefault(); app.go(id); } } }, t(`view.${id}`));
    changed.replaceChildren(
      // The example is the table's own largest weight change, with how much that weight moved; none
      // where no weight moved.
      el('p', { className: 'ablate-changed-lead' }, t('ablate.changedLead', { l: first, example: widest ? t('ablate.probsExample', { l: widest.l, pct: percent(widest.share), by: fixed(widest.diff, 2) }) : '' })),
      el('div', { className: 'table-scroll' }, el('table', { className: 'data-table ablate-changes' }, el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t('control.layer')), el('th', { scope: 'col' }, t('ablate.probsChange')), el('th', { scope: 'col' }, t('ablate.outChange')))), el('tbody', {}, rows))),
      el('p', { className: 'hint' }, spaced(t('ablate.changedViews')), ...['attention', 'grid', 'stepper', 'output', 'lens', 'attribution'].flatMap((id, n) => (n ? [', ', view(id)] : [view(id)]))),
    );
    if (reveal) {
      reveal = false;
      predictionCard.scrollIntoView({ block: 'start' });
      predictionHeading.focus({ preventScroll: true });
    }
  }

  return {
    update,
    destroy() {
      updates.abort();
      fade.destroy();
    },
  };
}

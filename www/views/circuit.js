// Find the circuit: a short guided card that walks the experiments' three moves on the current
// sentence and model, every number live from the core (src/analysis/circuit.rs, the worker's
// `circuit`): (1) the answer after the last token and its probability; (2) head attribution's three
// heads that push it most, each a link to its attention map and a ⊘ knock-out toggle; (3) the answer's
// probability with those three knocked out, beside a control (three heads that push it least knocked
// out); (4) the logit lens at the last position: from which layer the answer is the top prediction,
// with its probability by layer; (5) the induction probe (parts/induction_probe.js, the head grid's
// own) on a button. On SmolLM2 the indirect-object sample shows the textbook circuit; the built-in
// model's numbers are weak, said so, with a link to that sample.

import { el } from '../parts/dom.js';
import { percent, fixed, quoted, tokenText } from '../parts/format.js';
import { ablateToggle } from '../parts/ablation.js';
import { lineChart } from '../parts/line_chart.js';
import { probeHeads } from '../parts/induction_probe.js';
import { smollm2Counterpart } from '../parts/pair_head.js';
import { pageLink } from '../link.js';
import { errorText } from '../page/error_text.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

// One answer per model (a new model is a new app.model object) and input.
const found = new WeakMap(); // app.model → Map(ids joined → Promise of the circuit)

function circuitOf(app, ids) {
  if (!found.has(app.model)) found.set(app.model, new Map());
  const runs = found.get(app.model);
  const key = ids.join(',');
  if (!runs.has(key)) {
    const asked = app.call('circuit', { ids: Array.from(ids) });
    runs.set(key, asked);
    asked.catch(() => runs.get(key) === asked && runs.delete(key));
  }
  return runs.get(key);
}

// The chart's floor: a probability under it is drawn on it (said under the chart).
const FLOOR = 1e-6;

const signed = (v) => `${v > 0 ? '+' : ''}${fixed(v, 2)}`;

export function mount(root, app) {
  const { state } = app;
  // A <p class="message"> would show through [hidden]: the box is hidden, not the message.
  const weakText = el('p', { className: 'message circuit-weak' });
  const weak = el('div', { hidden: true }, weakText);
  const steps = el('ol', { className: 'circuit-steps' });
  const probeOut = el('p', { className: 'circuit-probe-result', attrs: { 'aria-live': 'polite' } });
  const probeButton = el('button', { type: 'button', className: 'action secondary circuit-probe', on: { click: probe } }, t('circuit.probeButton'));
  root.append(
    el('p', { className: 'explain' }, t('circuit.explain')),
    weak,
    el('section', { className: 'card circuit-card' }, el('h3', {}, t('circuit.title')), steps),
  );
  const updates = latest();

  // The probe runs once per model (probeHeads keeps it); the top induction head is named.
  async function probe() {
    const signal = updates.current();
    probeButton.disabled = true;
    probeOut.textContent = t('circuit.probeRunning');
    try {
      const found = await probeHeads(app);
      if (signal.aborted) return;
      let top = null;
      found.heads.forEach((heads, l) => heads.forEach((head) => (top === null || head.induction > top.score) && (top = { l, h: head.head, score: head.induction })));
      probeOut.replaceChildren(
        el('span', { className: 'circuit-probe-top', dataset: { layer: top.l, head: top.h, score: String(top.score) } }, t(top.score >= 0.3 ? 'circuit.probeTop' : 'circuit.probeWeak', { l: top.l, h: top.h, score: fixed(top.score, 2) })),
        ' ',
        pageLink(app.navigate, { view: 'grid', probe: true }, t('circuit.probeGrid')),
      );
    } catch (err) {
      if (!signal.aborted) probeOut.textContent = errorText(err);
    } finally {
      probeButton.disabled = false;
    }
  }

  async function update() {
    const signal = updates.start();
    const { ids, pieces } = state.tokens;
    const builtin = app.source?.kind === 'builtin';
    weak.hidden = !builtin;
    if (builtin) {
      weakText.replaceChildren(t('circuit.builtinWeak'));
      smollm2Counterpart().then((sample) => {
        if (!signal.aborted && sample) weakText.append(' ', pageLink(app.navigate, { model: 'smollm2', text: sample.text, view: 'circuit' }, t('circuit.toSmollm2')));
      });
    }
    if (ids.length === 0) {
      steps.replaceChildren(el('li', {}, t('circuit.empty')));
      return;
    }
    steps.replaceChildren(el('li', { className: 'hint' }, t('circuit.running')));
    let c;
    try {
      c = await circuitOf(app, ids);
    } catch (err) {
      if (!signal.aborted) steps.replaceChildren(el('li', { className: 'message message-error' }, errorText(err)));
      return;
    }
    if (signal.aborted) return;
    const answer = quoted(tokenText(c.piece));
    const last = ids.length - 1;
    const headName = ({ layer: l, head: h }) => t('ablate.headName', { l, h });
    // Each head a link to its attention map (on the last position's row, where the push is read) and its ⊘.
    const head = (p) =>
      el(
        'span',
        { className: 'circuit-head', dataset: { layer: p.layer, head: p.head, push: String(p.push) } },
        el('button', { type: 'button', className: 'query-row-head', on: { click: () => (app.set({ layer: p.layer, head: p.head, query: last, stage: 'probs' }), app.go('attention')) } }, `${headName(p)} (${signed(p.push)})`),
        ' ',
        ablateToggle(app, p.layer, p.head, { short: true }),
      );
    const drop = c.probability - c.knocked_out;
    const knock =
      drop > 0
        ? t('circuit.knockDrop', { token: answer, p: percent(c.probability), q: percent(c.knocked_out), points: fixed(drop * 100, 1), share: Math.round((drop / c.probability) * 100) })
        : t('circuit.knockNoDrop', { token: answer, p: percent(c.probability), q: percent(c.knocked_out) });
    const control = t('circuit.control', { heads: c.control_heads.map(headName).join(t('overview.listSep')), r: percent(c.control_knocked_out) });
    const lens =
      c.answer_layer === null || c.answer_layer === undefined
        ? t('circuit.lensNever', { token: answer })
        : t('circuit.lensFrom', { token: answer, l: c.answer_layer, layers: c.lens.length });
    const chart = lineChart({
      xs: c.lens.map((s) => s.layer),
      // On a log scale: the answer's climb from one in thousands is the story, not only its last jump.
      series: [{ name: t('circuit.chartSeries', { token: answer }), values: c.lens.map((s) => Math.max(s.probability, FLOOR)), className: 'series-a' }],
      logY: true,
      xLabel: t('circuit.chartX'),
      yLabel: t('circuit.chartY', { token: answer }),
      label: t('circuit.chartLabel', { token: answer }),
      width: 520,
      height: 220,
    });
    steps.replaceChildren(
      el('li', { className: 'circuit-predict', dataset: { target: String(c.target), probability: String(c.probability) } }, t('circuit.predict', { at: quoted(tokenText(pieces[last])), token: answer, p: percent(c.probability) })),
      el(
        'li',
        { className: 'circuit-heads' },
        t('circuit.heads', { token: answer }),
        ' ',
        ...c.heads.flatMap((p, k) => (k ? [t('overview.listSep'), head(p)] : [head(p)])),
        ' ',
        pageLink(app.navigate, { view: 'attribution', query: last, target: c.target }, t('circuit.toAttribution')),
      ),
      el(
        'li',
        { className: 'circuit-knock', dataset: { knocked: String(c.knocked_out), control: String(c.control_knocked_out) } },
        knock,
        ' ',
        control,
        ' ',
        pageLink(app.navigate, { view: 'ablate', ablate: c.heads.map((p) => `${p.layer}.${p.head}`).join(',') }, t('circuit.toAblate')),
      ),
      el('li', { className: 'circuit-lens', dataset: { answerLayer: String(c.answer_layer ?? '') } }, lens, ' ', pageLink(app.navigate, { view: 'lens', query: last }, t('circuit.toLens')), el('div', { className: 'circuit-chart' }, chart.node, el('p', { className: 'hint' }, t('circuit.chartLabel', { token: answer })))),
      el('li', { className: 'circuit-probe-step' }, t('circuit.probe'), ' ', probeButton, probeOut),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
    },
  };
}

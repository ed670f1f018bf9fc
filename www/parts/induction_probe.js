// The induction probe in the head grid: the core (src/analysis/induction.rs, the worker's `probe`)
// feeds the model a sequence of random tokens twice and scores every head's induction (weight from
// each token of the second copy on the token after its earlier copy) and duplicate-token behaviour
// (weight on the earlier copy itself). This part asks for it, merges its roles into the grid's
// labels, and shows the button, the best heads and one head's attention map on the probe's sequence,
// where the induction stripe can be seen. The link keeps only "probe on/off": the scores are
// recomputed from the model, the length and the seed below.

import { el } from './dom.js';
import { fixed, marksNote, spaced } from './format.js';
import { headCells, headTip, heatmap } from './heatmap.js';
import { scaleFor } from './color_scale.js';
import { layerSelect, headSelect } from './controls.js';
import { ablateToggle } from './ablation.js';
import { t } from '../strings.js';
import { errorText } from '../page/error_text.js';
import { MAX_TOKENS } from '../limits.js';
import { latest } from '../page/latest.js';

// 32 random tokens, twice: long enough that a head cannot score by chance, short enough that the
// probe's map shows every token. A model with fewer positions gets a shorter probe.
const LENGTH = 32;
const SEED = 1;
// How many heads the probe's summary names for each score.
const BEST = 3;

// The probe's length for a model: LENGTH, or what its positions allow (two copies).
function lengthFor(model) {
  return Math.min(LENGTH, Math.floor(Math.min(model.max_position_embeddings, MAX_TOKENS) / 2));
}

// One probe per model (a new model is a new app.model object) and first token: the sequence starts
// with the model's BOS token when the page's input does, as MiniMind's training windows do.
const kept = new WeakMap(); // app.model → Map(first token id or null → probe)

// Resolves to {ids, pieces, length, heads[layer][head]: {induction, duplicate, rows, role, score,
// strong, positions}} for the loaded model.
export function probeHeads(app) {
  const first = app.withBos() ? app.model.bos_token_id : null;
  if (!kept.has(app.model)) kept.set(app.model, new Map());
  const probes = kept.get(app.model);
  let found = probes.get(first);
  if (!found) {
    found = app.call('probe', { length: lengthFor(app.model), seed: SEED, first }).then((p) => ({ ...p, heads: byLayer(p.layers) }));
    probes.set(first, found);
    found.catch(() => probes.get(first) === found && probes.delete(first));
  }
  return found;
}

function byLayer(layers) {
  const out = [];
  for (const { layer, heads } of layers) out[layer] = heads;
  return out;
}

// The arguments of the probe's own run, for its tensors (app.tensors merges them into the page's).
export function probeArgs(probe) {
  return { ids: probe.ids, attention_mask: null, prefix_len: 0, causal: true };
}

// The label a grid head shows with the probe on: induction or duplicate-token where the probe finds
// it (parts/head_roles.js names it as it names the others), otherwise the head's role on the
// reader's sentence (`live`); either way with the probe's scores (`probe`) and the live role kept.
export function withProbe(live, probed) {
  if (!probed) return live;
  const own = probed.role ? { role: probed.role, score: probed.score, strong: probed.strong } : live;
  return { ...(own ?? { role: null }), probe: probed, live };
}

// What a head that spread its weight evenly would score on the probe: the mean of 1 / (q + 1) over
// the second copy's query positions q (each sees q + 1 tokens, one of which each score counts).
function uniformScore(probe) {
  const start = probe.ids.length - probe.length;
  let sum = 0;
  for (let q = start; q < probe.ids.length; q++) sum += 1 / (q + 1);
  return sum / probe.length;
}

// The `BEST` heads by one score, highest first: [{l, h, score}].
function best(probe, key) {
  return probe.heads
    .flatMap((heads, l) => heads.map((head) => ({ l, h: head.head, score: head[key] })))
    .sort((a, b) => b.score - a.score)
    .slice(0, BEST);
}

// The probe's box in the head grid: what it does, the button, the best heads; and below the grid,
// one head's map on the probe's sequence with a layer and head picker.
export function probeSection(app) {
  const { state } = app;
  const button = el('button', { type: 'button', className: 'probe-toggle', on: { click: toggle } });
  const explain = el('p', { className: 'explain' });
  const summary = el('div', { className: 'probe-summary' });
  const node = el('section', { className: 'probe-box', attrs: { 'aria-label': t('probe.title') } }, el('div', { className: 'probe-head' }, el('strong', {}, t('probe.title')), button), explain, summary);
  const layer = layerSelect(app);
  const head = headSelect(app, { roles: false });
  const caption = el('p', { className: 'probe-caption' });
  const look = el('p', { className: 'explain' });
  const map = heatmap();
  const mapNode = el('section', { className: 'probe-map', hidden: true }, el('div', { className: 'toolbar' }, layer.node, head.node), caption, look, map.node);
  const updates = latest();

  // The button turns the probe on at the head it finds most induction-like, or off.
  async function toggle() {
    if (state.probe) return app.set({ probe: false });
    button.disabled = true;
    button.textContent = t('probe.running');
    try {
      const [top] = best(await probeHeads(app), 'induction');
      app.set({ probe: true, layer: top.l, head: top.h });
    } catch (err) {
      failed(errorText(err));
      button.disabled = false;
      button.textContent = t('probe.run');
    }
  }

  // The core refused the probe (a model with too few ordinary tokens, say): the box says why.
  function failed(why) {
    summary.replaceChildren(el('p', { className: 'message message-error', attrs: { role: 'alert' } }, t('probe.failed', { why })));
  }

  // Each head listed opens on the probe's map below (its layer and head picked) and has its knock-out
  // toggle, so the reader can go from a score to what the model loses without that head.
  const headList = (list) =>
    list.map((b) =>
      el(
        'span',
        { className: 'probe-head-item' },
        el('button', { type: 'button', className: 'probe-head-score', title: t('probe.showHead', { l: b.l, h: b.h }), dataset: { layer: b.l, head: b.h }, on: { click: () => showHead(b.l, b.h) } }, t('probe.headScore', { l: b.l, h: b.h, score: fixed(b.score, 3) })),
        ablateToggle(app, b.l, b.h, { short: true }),
      ),
    );

  // A score clicked opens that head on the probe's map, which lies below the whole grid: the map is
  // brought into sight, so the click is seen to do something.
  function showHead(l, h) {
    app.set({ layer: l, head: h });
    mapNode.scrollIntoView({ block: 'start' });
  }

  // The scores of the head on the map are marked as chosen.
  function markChosen(l, h) {
    for (const b of summary.querySelectorAll('.probe-head-score')) b.setAttribute('aria-pressed', String(Number(b.dataset.layer) === l && Number(b.dataset.head) === h));
  }

  // What the probe concluded, before the numbers: how many heads it names, or that it names none (the
  // highest scores of a model without such heads are listed all the same, and must not read as finds).
  function verdict(probe) {
    const named = (role) => probe.heads.flat().filter((x) => x.role === role).length;
    const [induction, duplicate] = [named('induction'), named('duplicate')];
    const text = induction + duplicate === 0 ? t('probe.noneFound') : t('probe.found', { induction, duplicate });
    // Only the finding itself is set bold; what follows the first semicolon is the explanation.
    const cut = text.search(/[;；]/) + 1;
    const [finding, rest] = cut > 0 ? [text.slice(0, cut), text.slice(cut)] : [text, ''];
    return el('p', { className: 'probe-verdict', dataset: { induction, duplicate } }, el('strong', {}, finding), rest);
  }

  // probe: the probe's result, or null with the probe off or failed (error: why). Resolves once the
  // map is drawn.
  async function update(probe, error = null) {
    const signal = updates.start();
    button.disabled = false;
    button.textContent = t(state.probe ? 'probe.hide' : 'probe.run');
    button.setAttribute('aria-pressed', String(state.probe));
    explain.textContent = t('probe.explain', { n: probe?.length ?? lengthFor(app.model) });
    mapNode.hidden = !probe;
    if (!probe) {
      if (error) failed(error);
      else summary.replaceChildren();
      return;
    }
    summary.replaceChildren(
      verdict(probe),
      el('p', {}, spaced(t('probe.bestInduction')), ...headList(best(probe, 'induction'))),
      el('p', {}, spaced(t('probe.bestDuplicate')), ...headList(best(probe, 'duplicate'))),
      el('p', { className: 'explain' }, t('probe.gridNote', { uniform: fixed(uniformScore(probe), 3) })),
    );
    layer.update();
    head.update();
    const l = Math.min(state.layer, probe.heads.length - 1);
    const scored = probe.heads[l].find((x) => x.head === state.head) ?? probe.heads[l][0];
    markChosen(l, scored.head);
    const name = `layers.${l}.attn.probs`;
    const found = (await app.tensors([name], probeArgs(probe))).get(name);
    if (signal.aborted) return;
    const [, T, S] = found.shape;
    const data = found.data.subarray(scored.head * T * S, (scored.head + 1) * T * S);
    caption.textContent = t('probe.mapTitle', { l, h: scored.head, induction: fixed(scored.induction, 3), duplicate: fixed(scored.duplicate, 3) });
    // The probe's random tokens are often pieces with a space before them: the mark is said.
    const marks = marksNote(probe.pieces);
    const said = t('probe.look', { back: probe.length - 1, dup: probe.length });
    // The marks' note on a line of its own: run on, its leading ␣ could end the line before it.
    look.replaceChildren(said, ...(marks ? [el('span', { className: 'marks-note' }, marks)] : []));
    // Twice as many columns as one copy: the keys are counted by index (their tokens are in the
    // tooltip and on the rows), the second copy's start is ruled, and the two stripes to look for
    // run between dashed guides: the induction stripe (back length − 1) and the duplicate one (back length).
    // The probe runs causal (probeArgs): its future keys are hatched, as in every other map of weights.
    const { cells, labels } = headCells({ data, T, S, pieces: probe.pieces, mask: null, maxCell: 14, labelChars: 6, future: true, weights: true });
    const second = T - probe.length;
    map.update({
      cells,
      labels: { rows: labels.rows },
      guides: { split: second, diagonals: [{ back: probe.length - 1, from: second, side: 'upper' }, { back: probe.length, from: second, side: 'lower' }] },
      scale: scaleFor(name, [data]),
      interaction: { name: caption.textContent, describe: headTip(name, scored.head, probe.pieces) },
    });
  }

  return {
    node,
    mapNode,
    update,
    destroy() {
      updates.abort();
      map.destroy();
    },
  };
}

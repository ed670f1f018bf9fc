// KV cache and decoding (docs/minimind-semantics.md, step 5): the prompt is prefilled once,
// then each step runs only the newest token against the cache (the core's generateStart/Step, greedy).
// The cache grows by one position per step; each step's single attention row is stacked under the
// prefill's rows, so the stack is the causal attention matrix built one row at a time. After every
// step the core recomputes the same ids from scratch without a cache and reports the largest
// difference between the two last logits rows (decodeCheck).

import { el } from '../parts/dom.js';
import { heatmap } from '../parts/heatmap.js';
import { candidateBars, candidateNotes, END_OF_MESSAGE } from '../parts/prediction.js';
import { value } from '../parts/value.js';
import { layerSelect, headSelect, range } from '../parts/controls.js';
import { sequential } from '../parts/color_scale.js';
import { axisLabel, bytes, marksNote, tokenText } from '../parts/format.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

const MAX_STEPS = 32;
// Agreement bound for the check: far above f32 rounding (cached and full runs differ in a few ulps),
// far below any real disagreement (a wrong position or a stale key moves logits by whole units).
const CHECK_LIMIT = 1e-3;

export function mount(root, app) {
  const { state } = app;
  const controls = [layerSelect(app), headSelect(app)];
  // Buttons ask for steps; the next update takes them, so the page's redraw (and settled()) covers them.
  let pending = 0;
  let restart = false;
  const ask = (n) => () => {
    pending += n;
    app.redraw();
  };
  const stepButton = el('button', { type: 'button', className: 'action', id: 'decode-step', on: { click: ask(1) } }, t('decode.step'));
  const runButton = el('button', { type: 'button', className: 'action', id: 'decode-run', on: { click: ask(8) } }, t('decode.steps', { n: 8 }));
  const resetButton = el('button', { type: 'button', className: 'action secondary', id: 'decode-reset', on: { click: () => { restart = true; app.redraw(); } } }, t('decode.reset'));
  const sequence = el('div', { className: 'decode-sequence', attrs: { 'aria-live': 'polite' } });
  // The generated tokens go into the text box, so every other view runs them too.
  let generated = '';
  const useButton = el('button', { type: 'button', className: 'action secondary', id: 'decode-use', on: { click: () => app.navigate({ text: state.text + generated }) } }, t('decode.useText'));
  const map = heatmap();
  const rowMap = heatmap();
  const table = el('div', { className: 'table-scroll' });
  const candidates = el('div', {});
  const rowQuery = el('p', { className: 'decode-query' });
  const stackNote = el('p', { className: 'hint' });
  const limitNote = el('p', { className: 'hint decode-limit', hidden: true });
  root.append(
    el('div', { className: 'toolbar' }, controls.map((c) => c.node), stepButton, runButton, resetButton),
    limitNote,
    el('p', { className: 'explain' }, t('decode.explain')),
    el('section', { className: 'card' }, el('h3', {}, t('decode.sequenceHeading')), sequence, useButton),
    el(
      'div',
      { className: 'split' },
      el('section', { className: 'card' }, el('h3', {}, t('decode.rowHeading')), el('p', { className: 'hint' }, t('decode.rowNote')), rowQuery, rowMap.node),
      el('section', { className: 'card' }, el('h3', {}, t('decode.candidatesHeading')), candidates),
    ),
    // The stack gets the page's width: after a few dozen calls it is a large square.
    el('section', { className: 'card decode-stack' }, el('h3', {}, t('decode.stackHeading')), stackNote, map.node),
    el('section', { className: 'card' }, el('h3', {}, t('decode.cacheHeading')), table),
  );

  // The decoding run: its prompt, then per step {token, piece, cache_len, cache_bytes, ms, probs: per layer [nH, T, S], check}.
  let run = null;
  const draws = latest();
  let work = Promise.resolve();

  const promptKey = () => JSON.stringify({ ids: state.tokens.ids, config: state.config, seed: state.seed });

  // Generation ends where the model chooses <|im_end|>, MiniMind's end of a message, as its
  // generate() stops at eos_token_id: no step is taken past it.
  const ended = () => run.steps.at(-1)?.piece === END_OF_MESSAGE;

  // One call of the model: the prefill the first time, then one token; then the cache check.
  async function step() {
    const names = range(app.model.num_hidden_layers).map((l) => `layers.${l}.attn.probs`);
    const result = await app.call('decodeStep', { request: {}, names });
    const check = await app.call('decodeCheck');
    run.steps.push({ ...result, probs: result.tensors, check });
  }

  async function advance() {
    controls.forEach((c) => c.update());
    // app.source is new whenever the worker builds a model (random, built in, a checkpoint): its
    // Session has no decoding under way, so it starts over.
    if (!run || run.key !== promptKey() || run.source !== app.source || restart) {
      restart = false;
      run = { key: promptKey(), source: app.source, ids: state.tokens.ids.slice(), steps: [] };
      await app.call('decodeStart', { ids: run.ids, sampling: { temperature: 0 } });
      pending = Math.max(pending, 1);
    }
    for (; pending > 0 && run.steps.length < MAX_STEPS && !ended(); pending--) await step();
    pending = 0;
    await draw();
  }

  // Updates run one after another: a decoding run is a sequence of calls on one cache.
  function update() {
    work = work.catch(() => {}).then(advance);
    return work;
  }

  async function draw() {
    const signal = draws.start();
    const l = state.layer;
    const h = state.head;
    const steps = run.steps;
    const last = steps[steps.length - 1];
    const P = run.ids.length;
    const allIds = last.ids;
    const pieces = await app.call('pieces', { ids: allIds });
    // The generated text, without a last token that only starts a character (its bytes alone are
    // no text): decoding drops nothing else.
    let tail = allIds.slice(P);
    let text = await app.call('decode', { ids: tail });
    while (text.endsWith('\uFFFD') && tail.length > 0) {
      tail = tail.slice(0, -1);
      text = await app.call('decode', { ids: tail });
    }
    if (signal.aborted) return;
    generated = text;
    useButton.disabled = text === '';
    const done = ended();
    stepButton.disabled = runButton.disabled = done || steps.length >= MAX_STEPS;
    limitNote.hidden = !done && steps.length < MAX_STEPS;
    limitNote.textContent = done ? t('decode.ended', { token: END_OF_MESSAGE }) : t('decode.limit', { n: MAX_STEPS });
    limitNote.dataset.reason = done ? 'end' : 'limit';

    // The stacked rows: the prefill's P rows, then one row per decoding step. A key after its query
    // is the future, masked: its weight is 0 whether the prefill computed it (a 0 in its rows) or it
    // was not generated yet; both are −∞ here, drawn hatched as a future token (cells.future).
    const S = allIds.length - 1;
    const stack = new Float32Array(S * S).fill(-Infinity);
    let r = 0;
    for (const s of steps) {
      const { data, shape } = s.probs[l];
      const [, rows, cols] = shape;
      for (let i = 0; i < rows; i++, r++) stack.set(data.subarray((h * rows + i) * cols, (h * rows + i) * cols + r + 1), r * S);
    }
    const labels = pieces.slice(0, S).map((p) => axisLabel(p, 6));
    const describe = (i, j) => [
      [t('tip.query'), `${i} ${tokenText(pieces[i])}`],
      [t('tip.key'), `${j} ${tokenText(pieces[j])}`],
      [t('decode.computedAt'), i < P ? t('decode.prefill') : t('decode.stepN', { n: i - P + 1 })],
    ];
    stackNote.textContent = t('decode.stackNote', { p: P });
    // After the prefill alone, the row shown is the last prompt token's, from a call that ran them all.
    rowQuery.textContent = t(steps.length === 1 ? 'decode.rowQueryPrefill' : 'decode.rowQuery', { token: tokenText(pieces[S - 1]), i: S - 1, next: tokenText(pieces[S]), p: P });
    map.update({ cells: { data: stack, rows: S, cols: S, square: true, maxCell: 22, future: true }, scale: sequential(0, 1), labels: { rows: labels, cols: labels }, interaction: { name: t('decode.stackHeading'), describe } });
    const { data, shape } = last.probs[l];
    const [, rows, cols] = shape;
    rowMap.update({
      // One row, drawn tall enough to read however many keys share its width.
      cells: { data: data.subarray((h * rows + rows - 1) * cols, (h * rows + rows) * cols), rows: 1, cols, maxCell: 22, rowHeight: 36 },
      scale: sequential(0, 1),
      labels: { rows: [labels[S - 1] ?? ''], cols: labels.slice(0, cols) },
      interaction: { name: t('decode.rowHeading'), describe: (_, j) => describe(S - 1, j) },
    });

    sequence.replaceChildren(
      el(
        'div',
        { className: 'chips' },
        allIds.map((id, i) => el('span', { className: i < P ? 'chip static' : 'chip static generated', dataset: { index: i } }, el('span', { className: 'chip-piece' }, tokenText(pieces[i])), el('span', { className: 'chip-id' }, id))),
      ),
      el('p', { className: 'hint' }, t('decode.sequenceNote', { p: P, n: allIds.length - P })),
      // A finished sentence's first guess is a line break or a space, and a small model has little to
      // say after it: said, with the way to a continuation worth reading.
      ...(/^\s+$/.test(steps[0].piece) ? [el('p', { className: 'hint', dataset: { note: 'finished' } }, t('decode.finishedPrompt', { token: tokenText(steps[0].piece), what: t(steps[0].piece.includes('\n') ? 'decode.aLineBreak' : 'decode.aSpace') }))] : []),
      // The marks a token's piece is drawn with, said once where they appear.
      // (replaceChildren is the DOM's own: a null would print "null", so absent parts are left out.)
      ...(marksNote(pieces) ? [el('p', { className: 'hint', dataset: { note: 'marks' } }, marksNote(pieces))] : []),
    );
    candidates.replaceChildren(
      el('p', { className: 'hint' }, t('decode.candidatesNote', { token: tokenText(last.piece), v: app.model.vocab_size })),
      candidateBars(last.top, { label: t('decode.candidatesHeading'), mark: last.token }),
      ...candidateNotes(last.top, 'p').filter(Boolean),
    );
    table.replaceChildren(
      el(
        'table',
        { className: 'data-table decode-table' },
        el('thead', {}, el('tr', {}, [t('decode.colStep'), t('decode.colToken'), t('decode.colCache'), t('decode.colBytes'), t('decode.colMs'), t('decode.colCheck')].map((c) => el('th', { attrs: { scope: 'col' } }, c)))),
        el(
          'tbody',
          {},
          steps.map((s, n) =>
            el(
              'tr',
              { dataset: { step: n } },
              el('th', { attrs: { scope: 'row' } }, n === 0 ? t('decode.prefill') : t('decode.stepN', { n })),
              // As the chips above write it (a character split over two tokens is 扇¹ 扇² in both), and as
              // the candidates write a token.
              el('td', {}, `${tokenText(pieces[P + n] ?? s.piece)} · id ${s.token}`),
              el('td', {}, s.cache_len),
              el('td', { dataset: { bytes: s.cache_bytes } }, bytes(s.cache_bytes)),
              el('td', {}, s.ms.toFixed(1)),
              el('td', { className: s.check.max_abs_diff <= CHECK_LIMIT ? 'check ok' : 'check bad' }, value(s.check.max_abs_diff, 7), s.check.max_abs_diff <= CHECK_LIMIT ? ' ✓' : ' ✗'),
            ),
          ),
        ),
      ),
      el('p', { className: 'hint' }, t('decode.bytesNote', { layers: app.model.num_hidden_layers, kv: app.model.num_key_value_heads, d: app.model.head_dim })),
      el('p', { className: 'hint' }, t('decode.checkNote')),
    );
  }

  return {
    update,
    destroy() {
      draws.abort();
      map.destroy();
      rowMap.destroy();
    },
  };
}

// Compare two inputs: the sentence in the text box (A) and a second one that differs in a word (B:
// 她 / 他, "cat" / "cats"), run through the same model in the same worker Session. Side by side: the
// attention weights of the chosen head for both, their difference cell by cell when the two have as
// many tokens, and the prediction after each sentence's last token with how it changed
// (parts/prediction_diff.js). B lives in the link (`compare`); null means A with its first word of a
// known pair swapped (parts/word_pairs.js), so a newcomer sees a real minimal pair at once.

import { el } from '../parts/dom.js';
import { headCells, headTip, heatmap, paintAll } from '../parts/heatmap.js';
import { layerSelect, headSelect } from '../parts/controls.js';
import { diverging, neutralWord, sequential } from '../parts/color_scale.js';
import { indexLabel, tokenText } from '../parts/format.js';
import { distribution, predictionDiff } from '../parts/prediction_diff.js';
import { swaps } from '../parts/word_pairs.js';
import { t } from '../strings.js';
import { errorText } from '../page/error_text.js';
import { longTextNote } from '../parts/long_text.js';
import { latest } from '../page/latest.js';

const TYPING_PAUSE_MS = 300;

// The default B: the first one-word swap whose tokens line up with A's (love → hate would not:
// "hate" is two tokens), so that the difference map exists; else the first swap, else A itself.
// The patching view (views/patch.js) takes the same second sentence. tokensOf(text): its tokens.
export async function defaultSecond(text, T, tokensOf) {
  const options = swaps(text).slice(0, 8);
  for (const b of options) {
    const tokens = await tokensOf(b).catch(() => null);
    if (tokens?.ids.length === T) return b;
  }
  return options[0] ?? text;
}

export function mount(root, app) {
  const { state } = app;
  const controls = [layerSelect(app), headSelect(app)];
  const inputId = `compare-${Math.random().toString(36).slice(2, 7)}`;
  const input = el('input', { id: inputId, type: 'text', className: 'compare-input', attrs: { spellcheck: 'false', autocomplete: 'off' } });
  let timer = 0;
  let shownDefault = null; // the default second sentence last shown (compare null)
  // As the Text box does: a second sentence longer than a link carries is said while it is typed.
  const longText = longTextNote(input);
  const sayIfLong = longText.say;
  // The second sentence the state held when the typing began: a newer one arriving during the pause
  // (a link, setState, Back) wins over the keystrokes before it (update() drops the pause).
  let typedOver;
  input.addEventListener('input', () => {
    sayIfLong();
    if (!timer) typedOver = state.compare;
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = 0;
      app.set({ compare: input.value === shownDefault ? null : input.value });
    }, TYPING_PAUSE_MS);
  });
  const sentences = el('div', { className: 'compare-sentences' });
  const maps = { a: heatmap(), b: heatmap(), diff: heatmap() };
  const titles = { a: el('h4', {}), b: el('h4', {}), diff: el('h4', {}) };
  const diffNote = el('p', { className: 'hint' });
  const prediction = el('div', { attrs: { 'aria-live': 'polite' } });
  const sideB = el('div', { className: 'compare-side-b' }, titles.b, maps.b.node);
  const diffBox = el('div', { className: 'compare-diff' }, titles.diff, diffNote, maps.diff.node);
  const cards = [
    el('section', { className: 'card' }, el('h3', {}, t('compare.attention')), el('div', { className: 'split compare-maps' }, el('div', {}, titles.a, maps.a.node), sideB), diffBox),
    el('section', { className: 'card' }, el('h3', {}, t('compare.prediction')), prediction),
  ];
  root.append(
    el('div', { className: 'toolbar' }, el('div', { className: 'picker compare-picker' }, el('label', { htmlFor: inputId }, t('compare.second')), input), controls.map((c) => c.node)),
    longText.node,
    el('p', { className: 'explain' }, t('compare.explain')),
    sentences,
    ...cards,
  );
  const updates = latest();
  // B is tokenized as the input A is: with the model's BOS token first when A has it.
  const tokensOf = tokenCache(app);

  const line = (key, tokens) => el('p', { className: 'compare-sentence' }, el('strong', {}, t(key)), ' ', tokens.pieces.map((p, i) => el('span', { className: tokens.special?.[i] ? 'compare-token special' : 'compare-token', dataset: { i } }, tokenText(p))));

  async function update() {
    const signal = updates.start();
    if (timer && state.compare !== typedOver) {
      clearTimeout(timer);
      timer = 0;
      input.blur();
    }
    controls.forEach((c) => c.update());
    const textB = state.compare ?? (await defaultSecond(state.text, state.tokens.ids.length, tokensOf));
    if (signal.aborted) return;
    if (state.compare === null) shownDefault = textB;
    if (document.activeElement !== input) input.value = textB;
    sayIfLong();
    const A = state.tokens;
    const name = `layers.${state.layer}.attn.probs`;
    const h = state.head;
    const slice = (run, T) => run.get(name).data.subarray(h * T * T, (h + 1) * T * T);
    const scale = sequential(0, 1);
    const draw = (map, data, T, tokens, label, mask) => {
      const { cells, labels } = headCells({ data, T, S: T, pieces: tokens.pieces, mask, maxCell: 36, labelChars: 10, future: state.causal, weights: true });
      map.update({ cells, scale, labels: { ...labels, sums: true }, interaction: { name: `${label}: ${name}[${h}]`, describe: headTip(name, h, tokens.pieces) } });
    };
    // The second sentence's own refusal (over the token limit, say) is said under its field, which
    // stays to fix it; the first sentence's run is not at fault, so its map stays beside the reason.
    // The second's side, the difference and the predictions go (nothing of an earlier second
    // sentence is left on screen).
    let failedB = null;
    const refusedB = (err) => {
      if (signal.aborted || err.cancelled) throw err;
      failedB = err;
      return null;
    };
    const showRefusal = (runA) => {
      cards[1].hidden = true;
      sideB.hidden = true;
      diffBox.hidden = true;
      cards[0].hidden = !runA;
      sentences.replaceChildren(line('compare.a', A), el('p', { className: 'message message-error', attrs: { role: 'alert' } }, t('compare.bFailed', { why: errorText(failedB) })));
      if (!runA) return;
      titles.a.textContent = t('compare.mapTitle', { which: t('compare.a'), l: state.layer, h: state.head });
      draw(maps.a, slice(runA, A.ids.length), A.ids.length, A, t('compare.a'), state.mask);
      paintAll([maps.a]);
    };
    const B = await tokensOf(textB).catch(refusedB);
    if (signal.aborted) return;
    if (!B) {
      const runA = await app.tensors([name, 'logits']).catch(() => null);
      if (!signal.aborted) showRefusal(runA);
      return;
    }
    sideB.hidden = false;
    diffBox.hidden = false;
    // Nothing to compare with: no maps or predictions of an earlier second sentence stay on screen.
    // An empty sentence is empty even where BOS alone would make it one token.
    const empty = textB === '';
    cards.forEach((card) => (card.hidden = empty));
    if (empty) {
      sentences.replaceChildren(el('p', { className: 'message message-empty' }, t('compare.emptyB')));
      return;
    }
    const [runA, runB] = await Promise.all([app.tensors([name, 'logits']), app.tensors([name, 'logits'], { ids: B.ids, attention_mask: null }).catch(refusedB)]);
    if (signal.aborted) return;
    if (!runB) {
      showRefusal(runA);
      return;
    }
    const TA = A.ids.length;
    const TB = B.ids.length;
    const probsA = slice(runA, TA);
    const probsB = slice(runB, TB);
    const differ = TA === TB ? A.ids.flatMap((id, i) => (id === B.ids[i] ? [] : [i])) : null;
    sentences.replaceChildren(line('compare.a', A), line('compare.b', B), el('p', { className: 'hint' }, differ === null ? t('compare.lengths', { a: TA, b: TB }) : differ.length === 0 ? t('compare.same') : t('compare.differAt', { where: differ.map((i) => `${i} “${tokenText(A.pieces[i])}” → “${tokenText(B.pieces[i])}”`).join(', ') })));
    for (const [i, chip] of sentences.querySelectorAll('.compare-sentence:nth-child(2) .compare-token').entries()) chip.classList.toggle('changed', differ?.includes(i) ?? false);
    titles.a.textContent = t('compare.mapTitle', { which: t('compare.a'), l: state.layer, h });
    titles.b.textContent = t('compare.mapTitle', { which: t('compare.b'), l: state.layer, h });
    draw(maps.a, probsA, TA, A, t('compare.a'), state.mask);
    draw(maps.b, probsB, TB, B, t('compare.b'), null);
    maps.diff.node.hidden = differ === null;
    titles.diff.textContent = t('compare.diffTitle');
    diffNote.textContent = differ === null ? t('compare.noDiff', { a: TA, b: TB }) : t('compare.diffExplain', { neutral: neutralWord() });
    if (differ !== null) {
      const delta = probsB.map((v, i) => v - probsA[i]);
      const maxAbs = delta.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      const { cells, labels } = headCells({ data: delta, T: TA, S: TA, pieces: A.pieces.map((p, i) => (differ.includes(i) ? `${tokenText(p)}→${tokenText(B.pieces[i])}` : p)), mask: state.mask, maxCell: 24, labelChars: 12, future: state.causal });
      maps.diff.update({ cells, scale: diverging(maxAbs), labels, interaction: { name: t('compare.diffTitle'), describe: (i, j) => [[t('compare.diffTitle'), indexLabel(h, i, j)], [t('tip.query'), String(i)], [t('tip.key'), String(j)]] } });
    }
    paintAll([maps.a, maps.b, maps.diff]);
    const V = runA.get('logits').shape[1];
    const lastRow = (run, T) => run.get('logits').data.slice((T - 1) * V, T * V);
    const [dA, dB] = await Promise.all([distribution(app, lastRow(runA, TA)), distribution(app, lastRow(runB, TB))]);
    if (signal.aborted) return;
    prediction.replaceChildren(
      el('p', { className: 'hint' }, t('compare.predictionNote', { a: tokenText(A.pieces[TA - 1]), b: tokenText(B.pieces[TB - 1]), v: V })),
      predictionDiff(dA, dB, { a: t('compare.a'), b: t('compare.b') }),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
      clearTimeout(timer);
      Object.values(maps).forEach((m) => m.destroy());
    },
  };
}

/**
 * A second sentence's tokens, asked of the worker once per text and BOS setting (a failed request is
 * asked again next time): `tokensOf(text)` → Promise of the tokenizer's reading. Compare and Patching
 * tokenize their second sentence through it.
 */
export function tokenCache(app) {
  const tokenized = new Map();
  return (text) => {
    const key = JSON.stringify([app.withBos(), text]);
    if (!tokenized.has(key)) {
      const request = app.tokenize(text);
      request.catch(() => tokenized.delete(key));
      tokenized.set(key, request);
    }
    return tokenized.get(key);
  };
}

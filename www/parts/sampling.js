// From probabilities to the next token, as MiniMind's generate chooses it: the logits divided by the
// temperature, the top-k most likely kept, then the fewest whose probabilities reach top-p, and one
// token drawn from what is left (the core's sampleTokens: model::generate's candidates and pick, the
// same code the KV cache view decodes with). The settings live in the link (temperature, topK, topP,
// draw: the draw's seed). The top candidates of the model's own softmax are drawn with their
// probability after the settings, the softmax's beside it; the drawn token is marked, and at the
// last position one click writes it into the text, so every view runs one token further.

import { el } from './dom.js';
import { bars } from './bars.js';
import { grouped, partOfCharacter, percent, spaced, tokenText } from './format.js';
import { t } from '../strings.js';

const TEMPERATURE_MAX = 2; // the slider's end; a link may hold more (state.js allows up to 10)

/** The sampling settings of a state, as the core reads them. */
export function samplingOf(state) {
  return { temperature: state.temperature, top_k: state.topK, top_p: state.topP, seed: state.draw };
}

/**
 * The card: mount once, then update(logits [T, V], i, top) with the position and its top candidates
 * by the model's softmax ([{id, p, piece}], most likely first).
 */
export function samplingCard(app) {
  const { state } = app;
  const temperature = el('input', { type: 'range', id: 'sampling-temperature', min: 0, max: TEMPERATURE_MAX, step: 0.05, on: { input: () => app.set({ temperature: Number(temperature.value) }) } });
  const temperatureOut = el('output', { className: 'slider-value', htmlFor: 'sampling-temperature' });
  const topK = el('input', { type: 'number', id: 'sampling-top-k', min: 0, step: 1, on: { change: () => app.set({ topK: Math.max(0, Math.round(Number(topK.value) || 0)) }) } });
  const topP = el('input', { type: 'range', id: 'sampling-top-p', min: 0.05, max: 1, step: 0.05, on: { input: () => app.set({ topP: Number(topP.value) }) } });
  const topPOut = el('output', { className: 'slider-value', htmlFor: 'sampling-top-p' });
  const reset = el('button', { type: 'button', className: 'action secondary', id: 'sampling-reset', on: { click: () => app.set({ temperature: 1, topK: 0, topP: 1 }) } }, t('sampling.reset'));
  // MiniMind's own chat settings (its eval_llm.py: temperature 0.85, top_p 0.85), one click away: at
  // 1 / 1 a draw can land anywhere in the vocabulary's long tail.
  const minimind = el('button', { type: 'button', className: 'action secondary', id: 'sampling-minimind', on: { click: () => app.set({ temperature: 0.85, topK: 0, topP: 0.85 }) } }, t('sampling.minimind'));
  const summary = el('p', { className: 'sampling-summary' });
  const chart = el('div', {});
  const drawn = el('div', { className: 'sampling-drawn', attrs: { 'aria-live': 'polite' } });
  const node = el(
    'section',
    { className: 'card sampling' },
    el('h3', {}, t('sampling.heading')),
    el('p', { className: 'explain' }, t('sampling.explain')),
    el(
      'div',
      { className: 'toolbar' },
      // Each label with its control and value, never split over two lines (on a phone the top-k
      // label sat on the temperature's line, top-p's value on a line of its own).
      el('span', { className: 'sampling-control' }, el('label', { htmlFor: 'sampling-temperature' }, t('sampling.temperature')), temperature, temperatureOut),
      el('span', { className: 'sampling-control' }, el('label', { htmlFor: 'sampling-top-k' }, t('sampling.topK')), topK),
      el('span', { className: 'sampling-control' }, el('label', { htmlFor: 'sampling-top-p' }, t('sampling.topP')), topP, topPOut),
      minimind,
      reset,
    ),
    summary,
    chart,
    drawn,
  );

  async function update(logits, i, top) {
    const [T, V] = logits.shape;
    const sampling = samplingOf(state);
    temperature.value = String(Math.min(sampling.temperature, TEMPERATURE_MAX));
    temperatureOut.textContent = sampling.temperature === 0 ? t('sampling.greedy') : String(sampling.temperature);
    topK.value = String(sampling.top_k);
    topP.value = String(sampling.top_p);
    topPOut.textContent = sampling.top_p === 1 ? t('sampling.off') : String(sampling.top_p);
    const result = await app.call('sample', { logits: logits.data.slice(i * V, (i + 1) * V), sampling, ids: top.map((c) => c.id) });
    const last = i === T - 1;
    // The drawn token as text, to write into the box; a piece of a character's bytes has none.
    const text = last ? await app.call('decode', { ids: [result.drawn.id] }) : null;
    return () => draw(result, top, V, last, text);
  }

  function draw({ kept, probs, drawn: pick }, top, V, last, text) {
    const sampling = samplingOf(state);
    // The drawn token's bar is marked; where it is among the bars, the summary says what the mark is.
    const lead = sampling.temperature === 0 ? t('sampling.summaryGreedy') : t(kept === V ? 'sampling.summaryAll' : 'sampling.summary', { kept: grouped(kept), v: grouped(V) });
    summary.textContent = top.some((c) => c.id === pick.id) ? spaced(lead) + t('sampling.marked') : lead;
    chart.replaceChildren(
      bars(
        top.map((c, n) => ({
          label: tokenText(c.piece),
          value: probs[n],
          highlight: c.id === pick.id,
          note: probs[n] === 0 ? t('sampling.cut', { p: percent(c.p) }) : t('sampling.before', { p: percent(c.p) }),
        })),
        { label: t('sampling.heading'), format: percent },
      ),
    );
    const whole = text !== null && !text.includes('\uFFFD') && !partOfCharacter(pick.piece);
    const token = tokenText(pick.piece);
    // A draw from outside the list: at a temperature above 1 that is the temperature's doing; at 1 or
    // below, it is the model's own distribution, whose top few may hold little of it.
    const said = t(sampling.temperature === 0 ? 'sampling.drawnGreedy' : 'sampling.drawn', { token, p: percent(pick.p), seed: sampling.seed });
    const share = top.reduce((sum, c, n) => sum + probs[n], 0);
    const outside = top.some((c) => c.id === pick.id)
      ? ''
      : sampling.temperature > 1
        ? t('sampling.outsideTop', { k: top.length })
        : t('sampling.outsideTopSpread', { k: top.length, share: percent(share), rest: percent(Math.max(0, 1 - share)) });
    const why = !last ? t('sampling.notLast') : !whole ? t('sampling.partial') : null;
    drawn.replaceChildren(
      el(
        'p',
        {},
        outside ? spaced(said) : said,
        outside,
      ),
      el(
        'div',
        { className: 'toolbar' },
        sampling.temperature > 0 && el('button', { type: 'button', className: 'action secondary', id: 'sampling-again', on: { click: () => app.set({ draw: (state.draw + 1) % 1e9 }) } }, t('sampling.again')),
        last && whole && el('button', { type: 'button', className: 'action', id: 'sampling-append', on: { click: () => app.navigate({ text: state.text + text }) } }, t(/^\s+$/.test(text ?? '') ? 'sampling.appendSpace' : 'sampling.append', { token })),
      ),
      ...(why ? [el('p', { className: 'hint' }, why)] : []),
    );
  }

  return { node, update };
}

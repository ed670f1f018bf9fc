// "Continue the text" under the overview's prediction: the model writes 1, 10 or 30 tokens after the
// reader's sentence, as text, the way the KV cache view decodes (the core's generateStart/Step: the
// prompt prefilled once, then one token per step against the cache), greedy or sampled with the
// Output view's settings (parts/sampling.js samplingOf: temperature, top-k, top-p, the draw's seed).
// Each token is written as the tokenizer decodes it, a button: a click opens the attention map on
// the sentence with the text written so far, following that token as the query. A step is one
// worker call, so Stop takes effect after the step under way; a new sentence or model, or leaving the
// view, stops it too. Writing ends early where the model ends its message (<|im_end|>), as
// MiniMind's generate stops at eos_token_id.

import { el } from './dom.js';
import { samplingOf } from './sampling.js';
import { END_OF_MESSAGE } from './prediction.js';
import { tokenText } from './format.js';
import { errorText } from '../page/error_text.js';
import { t } from '../strings.js';

export const COUNTS = [1, 10, 30];
const PROMPT_SHOWN = 160; // characters of the reader's own text shown before what the model wrote

export function continueText(app) {
  const { state } = app;
  const buttons = COUNTS.map((n) => el('button', { type: 'button', className: 'action secondary ov-write-n', dataset: { n, key: `write-${n}` }, on: { click: () => write(n) } }, t(n === 1 ? 'write.one' : 'write.n', { n })));
  const stop = el('button', { type: 'button', className: 'action ov-write-stop', hidden: true, dataset: { key: 'write-stop' }, on: { click: () => halt() } }, t('write.stop'));
  const mode = el('p', { className: 'hint ov-write-mode' });
  const status = el('p', { className: 'hint ov-write-status', attrs: { role: 'status' } });
  const output = el('p', { className: 'ov-written', hidden: true, attrs: { 'aria-label': t('write.label') } });
  const use = el('button', { type: 'button', className: 'action secondary ov-write-use', hidden: true, on: { click: () => job && app.navigate({ text: state.text + job.text }) } }, t('write.use'));
  const node = el(
    'section',
    { className: 'ov-write', attrs: { 'aria-labelledby': 'ov-write-heading' } },
    el('div', { className: 'ov-write-bar' }, el('h3', { id: 'ov-write-heading' }, t('write.heading')), ...buttons, stop),
    mode,
    output,
    el('div', { className: 'ov-write-after' }, status, use),
  );

  // The writing under way or last done: {key, prompt: ids, n, ids: written, text, texts: each token's
  // part of the text, running, stopped, ended, error}.
  let job = null;
  let ready = false;
  // What a writing is of: the prompt's ids, on the model then loaded (app.source is new for every model built).
  const keyNow = () => JSON.stringify(state.tokens.ids);

  function halt() {
    if (job?.running) job.stopped = true;
  }

  async function write(n) {
    if (!ready) return;
    halt();
    const mine = { key: keyNow(), source: app.source, prompt: state.tokens.ids.slice(), n, ids: [], text: '', texts: [], running: true, stopped: false, ended: false, error: null };
    job = mine;
    draw();
    try {
      await app.call('decodeStart', { ids: mine.prompt, sampling: samplingOf(state) });
      // Only the logits are needed: no layer's tensors are recorded on the way. Knocked-out heads stay
      // out, as in the prediction above.
      const request = { layers: [], ablate: state.ablate };
      while (mine.ids.length < n && !mine.stopped && job === mine) {
        const step = await app.call('decodeStep', { request, names: [] });
        if (job !== mine) return;
        if (step.piece === END_OF_MESSAGE) {
          mine.ended = true;
          break;
        }
        mine.ids.push(step.token);
        await spell(mine);
        if (job === mine) draw();
      }
    } catch (err) {
      if (job !== mine) return;
      mine.error = err;
    }
    if (job !== mine) return;
    mine.running = false;
    draw();
  }

  // Each token's part of the text: the decoded text of all the tokens so far, less a last character
  // still cut short (its bytes end in a later token), minus the text before this token.
  async function spell(mine) {
    let text = await app.call('decode', { ids: mine.ids });
    text = text.replace(/\uFFFD+$/, '');
    const before = mine.texts.join('');
    mine.texts.push(text.startsWith(before) ? text.slice(before.length) : '');
    mine.text = mine.texts.join('');
  }

  // A click on a written token: the sentence with the text written, in the attention map, that token
  // followed. Its position is the prompt's length plus its own where the tokenizer cuts the new text
  // the same way; otherwise the token whose text ends where this one's does.
  async function open(k) {
    const mine = job;
    halt();
    const text = state.text + mine.text;
    const cut = await app.tokenize(text);
    const written = [...mine.prompt, ...mine.ids.slice(0, k + 1)];
    let query = written.length - 1;
    if (!written.every((id, i) => cut.ids[i] === id)) {
      const end = state.text.length + mine.texts.slice(0, k + 1).join('').length;
      const first = cut.special.findIndex((s) => !s);
      query = cut.ids.length - 1;
      for (let i = Math.max(first, 0); i < cut.ids.length; i++) {
        const upTo = (await app.call('decode', { ids: cut.ids.slice(first, i + 1) })).replace(/\uFFFD+$/, '');
        if (upTo.length >= end) {
          query = i;
          break;
        }
      }
    }
    app.navigate({ text, view: 'attention', query });
  }

  function draw() {
    const running = job?.running ?? false;
    buttons.forEach((b) => (b.disabled = !ready || running));
    stop.hidden = !running;
    const sampling = samplingOf(state);
    const greedy = sampling.temperature === 0;
    mode.replaceChildren(
      ...[
        greedy ? t('write.greedy') : t('write.sampled', { temperature: sampling.temperature, k: sampling.top_k || t('write.noCut'), p: sampling.top_p === 1 ? t('write.noCut') : sampling.top_p, seed: sampling.seed }),
        ' ',
        el('a', { href: `#${new URLSearchParams({ view: 'output', query: state.tokens.ids.length - 1 })}`, className: 'ov-write-settings' }, t('write.settings')),
        !greedy && ' ',
        !greedy && el('button', { type: 'button', className: 'link ov-write-greedy', on: { click: () => app.set({ temperature: 0 }) } }, t('write.toGreedy')),
      ].filter((x) => x !== false),
    );
    output.hidden = !job;
    use.hidden = !job || running || job.text === '';
    if (!ready) {
      status.textContent = t('write.loading');
      status.dataset.state = 'loading';
      return;
    }
    if (!job) {
      status.textContent = '';
      delete status.dataset.state;
      return;
    }
    const said = { done: job.ids.length, n: job.n };
    status.textContent = job.error
      ? t('write.failed', { why: job.error.cancelled ? t('app.cancelled') : errorText(job.error) })
      : running
        ? t('write.running', said)
        : job.ended
          ? t('write.ended', { ...said, token: END_OF_MESSAGE })
          : job.stopped
            ? t('write.stopped', said)
            : t('write.done', said);
    status.dataset.state = job.error ? 'error' : running ? 'running' : job.ended ? 'ended' : job.stopped ? 'stopped' : 'done';
    const shown = state.text.length > PROMPT_SHOWN ? `…${state.text.slice(-PROMPT_SHOWN)}` : state.text;
    output.dataset.ids = job.ids.join(' ');
    output.replaceChildren(
      el('span', { className: 'ov-written-prompt' }, shown),
      ...job.ids.flatMap((id, k) => {
        const part = job.texts[k] ?? '';
        // The text as written (data-text); a line break is its mark ↵ on the button, the break itself after it.
        const token = el(
          'button',
          { type: 'button', className: `ov-gen${part === '' ? ' partial' : ''}`, dataset: { index: k, id, text: part }, title: t('write.tokenTip', { i: job.prompt.length + k, token: tokenText(part) }), on: { click: () => open(k) } },
          part.replace(/\n/g, '↵'),
        );
        return part.includes('\n') ? [token, '\n'.repeat(part.split('\n').length - 1)] : [token];
      }),
    );
  }

  return {
    node,
    /** live: the model is in and the sentence has run (the overview draws its prediction). */
    update(live) {
      ready = live;
      // A new sentence or another model: what was written is of another prompt.
      if (job && (job.key !== keyNow() || job.source !== app.source || !live)) {
        halt();
        job = null;
      }
      draw();
    },
    destroy() {
      halt();
      job = null;
    },
  };
}

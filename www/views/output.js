// The output: what the model predicts after any position. The logits row of that position goes
// through the core's softmax over the whole vocabulary (topTokens), and the most likely next tokens
// are listed with their probabilities and pieces from MiniMind's tokenizer. Where the input goes on,
// its real next token is marked when it is among them.

import { el } from '../parts/dom.js';
import { bars } from '../parts/bars.js';
import { tokenSelect, tokenAt } from '../parts/controls.js';
import { tokenText } from '../parts/format.js';
import { t } from '../strings.js';

const TOP = 10;

export function mount(root, app) {
  const { state } = app;
  const position = tokenSelect(app, 'query', 'control.position');
  const list = el('div', { attrs: { 'aria-live': 'polite' } });
  root.append(
    el('div', { className: 'toolbar' }, position.node),
    el('p', { className: 'explain' }, t('output.explain')),
    el('section', { className: 'card' }, list),
  );
  let seq = 0;

  async function update() {
    const my = ++seq;
    position.update();
    const logits = (await app.tensors(['logits'])).get('logits');
    if (my !== seq) return;
    const [T, V] = logits.shape;
    const i = tokenAt(app, 'query');
    const top = await app.call('top', { logits: logits.data.slice(i * V, (i + 1) * V), k: TOP });
    if (my !== seq) return;
    const pieces = state.tokens.pieces;
    const actual = i + 1 < T ? state.tokens.ids[i + 1] : null;
    list.replaceChildren(
      el('h3', {}, t('output.heading', { i, token: tokenText(pieces[i]) })),
      el('p', { className: 'hint' }, t('output.note', { v: V })),
      bars(
        top.map((c) => ({ label: `${tokenText(c.piece)} · ${c.id}`, value: c.p, highlight: c.id === actual, note: c.id === actual ? t('output.actual') : null })),
        { label: t('output.heading', { i, token: tokenText(pieces[i]) }), digits: 4, max: top[0].p },
      ),
      // replaceChildren writes any non-node as text, so a missing hint is an empty list, not false.
      ...(actual !== null && !top.some((c) => c.id === actual) ? [el('p', { className: 'hint' }, t('output.actualMissing', { token: tokenText(pieces[i + 1]), k: TOP }))] : []),
    );
  }

  return {
    update,
    destroy() {
      seq++;
    },
  };
}

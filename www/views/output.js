// The output: what the model predicts after any position. The logits row of that position goes
// through the core's softmax over the whole vocabulary, and the most likely next tokens are listed
// with their probabilities and pieces from MiniMind's tokenizer (parts/prediction.js, shared with the
// pipeline's last step). Where the input goes on, its real next token is marked when it is among them.
// Under them, how MiniMind's generate turns those probabilities into one token (parts/sampling.js):
// temperature, top-k, top-p and a seeded draw, which at the last position can go into the text.

import { el } from '../parts/dom.js';
import { tokenSelect, tokenAt } from '../parts/controls.js';
import { predict, predictionList } from '../parts/prediction.js';
import { samplingCard } from '../parts/sampling.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

export function mount(root, app) {
  const position = tokenSelect(app, 'query', 'control.position');
  const list = el('div', { attrs: { 'aria-live': 'polite' } });
  const sampling = samplingCard(app);
  root.append(
    el('div', { className: 'toolbar' }, position.node),
    el('p', { className: 'explain' }, t('output.explain')),
    el('section', { className: 'card' }, list),
    sampling.node,
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    position.update();
    const logits = (await app.tensors(['logits'])).get('logits');
    if (signal.aborted) return;
    const i = tokenAt(app, 'query');
    const top = await predict(app, logits, i);
    const drawSampling = await sampling.update(logits, i, top);
    if (signal.aborted) return;
    list.replaceChildren(predictionList(app, top, i, logits.shape[1]));
    drawSampling();
  }

  return {
    update,
    destroy() {
      updates.abort();
    },
  };
}

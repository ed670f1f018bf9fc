// The switch under the text box that starts the input with the model's BOS token (<|im_start|>),
// as MiniMind's pretraining starts every text it trains on, with one line saying why it matters.
// Offered for a model whose config.json names a bos_token_id, on by default (state.js, `bos`); for
// any other model it stays in sight, greyed, saying why there is no BOS. Until the first model says
// which, it holds its place unseen (data-pending, style.css), so the samples and chips under it do
// not move down when it appears.

import { el } from '../parts/dom.js';
import { t } from '../strings.js';

// onChange(on) is called when the reader ticks or unticks the box.
export function bosOption(onChange) {
  const box = el('input', { type: 'checkbox', id: 'bos', on: { change: () => onChange(box.checked) } });
  const label = el('label', { htmlFor: 'bos' });
  const hint = el('p', { className: 'hint bos-hint', id: 'bos-hint' });
  box.setAttribute('aria-describedby', 'bos-hint');
  const node = el('div', { className: 'bos-option', dataset: { pending: '' }, attrs: { 'aria-hidden': 'true' } }, el('div', { className: 'bos-row' }, box, label), hint);
  box.disabled = true;

  let offered = true;
  let generated = false; // a random model: it has no config.json of its own to name a BOS
  let gguf = false; // a GGUF file: its metadata, not a config.json, says whether it was trained with one
  function relabel() {
    label.textContent = t('input.bos');
    const why = t(offered ? 'input.bosHint' : generated ? 'input.bosRandom' : gguf ? 'input.bosGguf' : 'input.bosNone');
    label.title = why;
    hint.textContent = why;
  }
  relabel();

  return {
    node,
    // offered: the model's config has a bos_token_id; on: the state's choice. A model without one
    // keeps the switch in sight, off and greyed, saying why its text starts without BOS (a token
    // count one less than the built-in model's is then not a mystery).
    show({ offered: has, on, random = false, gguf: fromGguf = false }) {
      offered = has;
      generated = random;
      gguf = fromGguf;
      delete node.dataset.pending;
      node.removeAttribute('aria-hidden');
      box.disabled = !has;
      box.checked = has && on;
      node.classList.toggle('unavailable', !has);
      relabel();
    },
    relabel,
  };
}

// The switch under the text box that starts the input with the model's BOS token (<|im_start|>),
// as MiniMind's pretraining starts every text it trains on, with one line saying why it matters.
// Offered only for a model whose config.json names a bos_token_id; on by default (state.js, `bos`).

import { el } from '../parts/dom.js';
import { t } from '../strings.js';

// onChange(on) is called when the reader ticks or unticks the box.
export function bosOption(onChange) {
  const box = el('input', { type: 'checkbox', id: 'bos', on: { change: () => onChange(box.checked) } });
  const label = el('label', { htmlFor: 'bos' });
  const hint = el('p', { className: 'hint bos-hint', id: 'bos-hint' });
  box.setAttribute('aria-describedby', 'bos-hint');
  const node = el('div', { className: 'bos-option', hidden: true }, el('div', { className: 'bos-row' }, box, label), hint);

  function relabel() {
    label.textContent = t('input.bos');
    label.title = t('input.bosHint');
    hint.textContent = t('input.bosHint');
  }
  relabel();

  return {
    node,
    // offered: the model's config has a bos_token_id; on: the state's choice.
    show({ offered, on }) {
      node.hidden = !offered;
      box.checked = on;
    },
    relabel,
  };
}

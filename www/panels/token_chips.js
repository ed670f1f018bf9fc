// The tokens of the input as chips: the piece as text, its id below, its bytes in the tooltip.
// A character the tokenizer cut over several tokens shows in each with its part (昨¹ 昨²,
// worked out by the core) and the chips are marked as one group. Clicking a chip toggles it as
// padding (attention_mask 0), which the masks and every attention view then show. A special token
// (the BOS token <|im_start|> the input may start with) is drawn apart: it stands for no text.

import { el } from '../parts/dom.js';
import { tokenText } from '../parts/format.js';
import { t } from '../strings.js';

export function tokenChips(onToggle) {
  const node = el('div', { className: 'chips', attrs: { role: 'group', 'aria-label': t('input.text') } });

  return {
    node,
    update({ ids, pieces, bytes, chars, split, special = [] }, mask) {
      node.setAttribute('aria-label', t('input.text'));
      if (ids.length === 0) {
        node.replaceChildren(el('span', { className: 'chips-empty' }, t('input.noTokens')));
        return;
      }
      node.replaceChildren(
        ...ids.map((id, i) => {
          const padded = mask[i] === 0;
          const part = split[i] ? t('input.chipPart', { chars: chars[i] }) : '';
          const title = special[i]
            ? t(padded ? 'input.chipSpecialPadding' : 'input.chipSpecial', { i, id, piece: pieces[i] })
            : t(padded ? 'input.chipPadding' : 'input.chipReal', { i, id, bytes: bytes[i], part });
          return el(
            'button',
            {
              type: 'button',
              className: ['chip', padded && 'padded', split[i] && 'split', special[i] && 'special'].filter(Boolean).join(' '),
              title,
              attrs: { 'aria-pressed': String(padded) },
              dataset: { index: i },
              on: { click: () => onToggle(i) },
            },
            el('span', { className: 'chip-piece' }, tokenText(pieces[i])),
            el('span', { className: 'chip-id' }, id),
          );
        }),
      );
    },
  };
}

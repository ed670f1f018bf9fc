// The tokens of the input as chips: the piece as text, its id below, its bytes in the tooltip.
// A character the tokenizer cut over several tokens shows in each with its part (昨¹ 昨²,
// worked out by the core) and the chips are marked as one group. Clicking a chip toggles it as
// padding (attention_mask 0), which the masks and every attention view then show. A special token
// (the BOS token <|im_start|> the input may start with) is drawn apart: it stands for no text.
// The cell under the pointer in a map of these tokens lights its query chip Q and key chip K
// (heatmap_interaction.js's TOKENS_EVENT), so the reader sees which words a cell pairs.

import { el } from '../parts/dom.js';
import { quoted, tokenText, visible } from '../parts/format.js';
import { TOKENS_EVENT } from '../parts/heatmap_interaction.js';
import { language, t } from '../strings.js';
import { MAX_TOKENS } from '../limits.js';


export function tokenChips(onToggle) {
  const group = el('div', { className: 'chips', attrs: { role: 'group', 'aria-label': t('input.text') } });
  // The marks ¹ ² of a character cut over several tokens, said under the chips where they appear
  // (in the chip's tooltip too, but a newcomer does not hover to find out what a mark means).
  const splitNote = el('p', { className: 'hint chips-split-note', hidden: true });
  // The ␣ a word's token starts with (the space before it, kept in the token), said once with an
  // example from the text: at a glance ␣I reads as a letter, not as a space.
  const marksNote = el('p', { className: 'hint chips-marks-note', hidden: true });
  const node = el('div', { className: 'chips-box' }, group, marksNote, splitNote);
  document.addEventListener(TOKENS_EVENT, ({ detail }) => {
    for (const chip of group.querySelectorAll('.chip[data-lit]')) delete chip.dataset.lit;
    if (!detail) return;
    const { query, key } = detail;
    const chips = group.querySelectorAll('.chip');
    if (query === key) {
      if (chips[query]) chips[query].dataset.lit = 'QK';
      return;
    }
    if (chips[query]) chips[query].dataset.lit = 'Q';
    if (chips[key]) chips[key].dataset.lit = 'K';
  });

  return {
    node,
    update({ ids, pieces, bytes, chars, split, special = [] }, mask) {
      group.setAttribute('aria-label', t('input.text'));
      const spaced = pieces.findIndex((p, i) => !special[i] && !split[i] && /^[ Ġ]\S/.test(p));
      marksNote.hidden = spaced < 0;
      // ↵ and ⇥ are said only where the text has them.
      const breaks = pieces.some((p, i) => !special[i] && /[\n\t]/.test(p));
      if (spaced >= 0) marksNote.textContent = t('input.marksNote', { example: quoted(tokenText(pieces[spaced])) }) + (breaks ? t('input.marksBreaks') : '');
      const first = split.findIndex(Boolean);
      splitNote.hidden = first < 0;
      if (first >= 0) {
        const parts = ids.map((_, i) => i).filter((i) => split[i] && chars[i] === chars[first]);
        const utf8 = new TextEncoder().encode(chars[first]).length;
        splitNote.textContent = t('input.splitNote', { example: parts.map((i) => tokenText(pieces[i])).join(' '), char: visible(chars[first]), n: parts.length, bytes: utf8 });
      }
      // The hint on padding a token is for tokens there are: with none, only "No tokens yet." stays.
      const hint = node.parentElement?.querySelector('.chips-hint');
      if (hint) hint.hidden = ids.length === 0;
      if (ids.length === 0) {
        group.replaceChildren(el('span', { className: 'chips-empty' }, t('input.noTokens')));
        return;
      }
      // A text past the core's limit on one run (which the page refuses to run) draws its first
      // MAX_TOKENS chips and says how many more there are: 160,000 chips would freeze the tab.
      const shown = ids.slice(0, MAX_TOKENS);
      const more = ids.length - shown.length;
      group.replaceChildren(
        ...shown.map((id, i) => {
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
        ...(more > 0 ? [el('span', { className: 'chips-more' }, t('input.chipsMore', { n: more.toLocaleString(language() === 'zh' ? 'zh-CN' : 'en-US') }))] : []),
      );
    },
  };
}

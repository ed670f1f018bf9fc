// The note under a text field whose text is longer than a link carries: the text runs whole, but a
// link, a reload or a shared copy keeps only its first MAX_TEXT characters, so the field says so
// while it holds more, and nothing is lost unawares. Used by the Text box and Compare's second sentence.

import { MAX_TEXT } from '../state.js';
import { t } from '../strings.js';
import { el } from './dom.js';

/** {node, say()}: say() shows or hides the note for the field's current text. */
export function longTextNote(field) {
  const node = el('p', { className: 'field-note long-text', hidden: true, attrs: { role: 'status' } });
  const say = () => {
    const n = Array.from(field.value).length;
    node.hidden = n <= MAX_TEXT;
    node.textContent = node.hidden ? '' : t('input.longText', { n: n.toLocaleString(), most: MAX_TEXT.toLocaleString() });
  };
  return { node, say };
}

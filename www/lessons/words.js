// A lesson's words in the reader's language. The lessons follow two Chinese tutorials (shared/seeds)
// and keep their hand-made numbers; only the words the numbers belong to are translated. Each lesson
// names its words as [the tutorial's word, its English twin] pairs, chosen so that what the lesson
// shows stays true of them (she attends to Mary, the female name, as 她 to 小红). A Chinese reader
// sees the tutorial's words; an English reader the English ones, or, after the lesson's switch, the
// tutorial's original ones (kept per lesson while the page is open). The lesson's door to the real
// model follows the switch too (views/lessons.js: a door's `en`).

import { el } from '../parts/dom.js';
import { language, t } from '../strings.js';

/**
 * The words of one lesson: `of(word)` is the tutorial's word as the reader sees it, `list(words)`
 * each of a list, `chinese` whether the tutorial's own words are shown, `original` the English
 * reader's switch. `bar(app)` is that switch with the lesson's words side by side, for an English
 * reader only (null in Chinese), put at the top of the lesson.
 */
export function lessonWords(pairs) {
  const english = new Map(pairs);
  const words = {
    original: false,
    get chinese() {
      return language() === 'zh' || words.original;
    },
    of: (word) => (words.chinese ? word : english.get(word) ?? word),
    list: (list) => list.map(words.of),
    bar(app) {
      if (language() === 'zh') return null;
      const box = el('input', {
        type: 'checkbox',
        id: 'lesson-original',
        checked: words.original,
        attrs: { 'aria-describedby': 'lesson-words-key' },
        on: {
          change: () => {
            words.original = box.checked;
            key.textContent = keyText();
            app.redraw();
          },
        },
      });
      const keyText = () => t(words.original ? 'lessons.words.keyOriginal' : 'lessons.words.key', { pairs: pairs.map(([zh, en]) => t('lessons.words.pair', { zh, en })).join(t('lessons.words.pairSep')) });
      const key = el('p', { className: 'hint', id: 'lesson-words-key', dataset: { note: 'words' } }, keyText());
      return el('div', { className: 'lesson-words' }, el('div', { className: 'toolbar' }, el('label', { className: 'switch' }, box, el('span', {}, t('lessons.words.switch')))), key);
    },
  };
  return words;
}

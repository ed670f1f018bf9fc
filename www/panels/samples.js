// Sample sentences of the built-in model (models/builtin/samples.json, chosen by
// tools/train/head_stats.py because its heads show their patterns on them), one click away under
// the text box: a row of English ones and a row of Chinese ones.

import { el } from '../parts/dom.js';
import { t } from '../strings.js';

const LANGUAGES = ['en', 'zh'];

// onPick(text) puts a sample in the text box.
export function sampleButtons(onPick) {
  const node = el('div', { className: 'samples', hidden: true });
  let samples = null;

  function update() {
    node.hidden = !samples;
    if (!samples) return;
    node.setAttribute('aria-label', t('samples.label'));
    node.replaceChildren(
      ...LANGUAGES.filter((lang) => samples[lang]?.length).map((lang) =>
        el(
          'div',
          { className: 'samples-row' },
          el('span', { className: 'samples-lang', lang: lang === 'zh' ? 'zh-CN' : 'en' }, t(`samples.${lang}`)),
          el(
            'div',
            { className: 'samples-list' },
            samples[lang].map((text) =>
              el('button', { type: 'button', className: 'sample', lang: lang === 'zh' ? 'zh-CN' : 'en', title: text, dataset: { lang }, on: { click: () => onPick(text) } }, text),
            ),
          ),
        ),
      ),
    );
  }

  return {
    node,
    // samples: {en: [...], zh: [...]} or null (no built-in model, or it has no samples).
    show(next) {
      samples = next;
      update();
    },
    relabel: update,
  };
}

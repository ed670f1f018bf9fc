// Sample sentences of the built-in model (models/builtin/samples.json, chosen by
// tools/train/head_stats.py because one of its heads shows a named pattern on them), one click away
// under the text box: a row of English ones and a row of Chinese ones, the page's language first. Each button carries its pattern
// and head ("previous-token · L3H6", the head grid's role names); a click runs the sentence and opens
// that head's attention map.

import { el } from '../parts/dom.js';
import { SAMPLE_PATTERNS } from '../model_source.js';
import { language, t } from '../strings.js';

const LANGUAGES = ['en', 'zh'];

// What to look for in the attention map, per role: the attention map's own words where it has them
// (parts/head_roles.js's lookFor), the two patterns only a repeated sentence shows in this panel's.
const LOOK = {
  previous: 'role.look.previous',
  first: 'role.look.first',
  current: 'role.look.current',
  induction: 'samples.look.induction',
  duplicate: 'samples.look.duplicate',
};

/** The sentences alone, {en: [text...], zh: [...]}, as state.js's textOf reads them. */
export function sampleTexts(samples) {
  return samples && Object.fromEntries(LANGUAGES.map((lang) => [lang, samples[lang].map((s) => s.text)]));
}

function button(sample, lang, onPick) {
  const role = SAMPLE_PATTERNS[sample.pattern];
  const where = { pattern: t(`role.${role}`), l: sample.layer, h: sample.head };
  const tag = el('span', { className: `sample-tag role-badge role-${role}` }, t('samples.tag', where));
  return el(
    'button',
    {
      type: 'button',
      className: 'sample',
      lang: lang === 'zh' ? 'zh-CN' : 'en',
      title: `${sample.text}\n${t('samples.tip', { ...where, look: t(LOOK[role]) })}`,
      dataset: { lang, pattern: sample.pattern, layer: sample.layer, head: sample.head },
      on: { click: () => onPick(sample) },
    },
    tag,
    el('span', { className: 'sample-text' }, sample.text),
  );
}

// onPick(sample) runs a sample ({text, pattern, layer, head}) and shows its head.
export function sampleButtons(onPick) {
  const node = el('div', { className: 'samples', hidden: true });
  let samples = null;
  let builtin = true; // whether the page runs the built-in model, whose heads the tags name

  function update() {
    node.hidden = !samples;
    if (!samples) return;
    node.setAttribute('aria-label', t('samples.label'));
    node.replaceChildren(
      // The page's own language first: a Chinese reader meets the Chinese sentences before the English ones.
      ...(language() === 'zh' ? ['zh', 'en'] : LANGUAGES).filter((lang) => samples[lang].length).map((lang) =>
        el(
          'div',
          { className: 'samples-row' },
          el('span', { className: 'samples-lang' }, t(`samples.${lang}`)),
          el('div', { className: 'samples-list' }, samples[lang].map((sample) => button(sample, lang, onPick))),
        ),
      ),
      el('p', { className: 'hint samples-hint' }, t(builtin ? 'samples.hint' : 'samples.hintOther')),
    );
    node.classList.toggle('other-model', !builtin);
  }

  return {
    node,
    // samples: model_source.js's builtinSamples(), or null (no built-in model, or no samples that fit it).
    show(next) {
      samples = next;
      update();
    },
    relabel: update,
    // With another model loaded the tags name the built-in model's heads: said so, and that a click
    // goes back to it.
    model(isBuiltin) {
      if (isBuiltin === builtin) return;
      builtin = isBuiltin;
      update();
    },
  };
}

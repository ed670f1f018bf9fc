// Sample sentences of the built-in model (models/builtin/samples.json, chosen by
// tools/train/head_stats.py because one of its heads shows a named pattern on them), one click away
// under the text box: a row of English ones and a row of Chinese ones, the page's language first. Each button carries its pattern
// and head ("previous-token · L3H6", the head grid's role names); a click runs the sentence and opens
// that head's attention map. With SmolLM2 loaded its own samples (models/smollm2/samples.json) stand
// there instead, English only (a Chinese reader is told why), a circuit sample ("indirect object ·
// L29H1") opening the Find-the-circuit view.

import { el } from '../parts/dom.js';
import { CIRCUIT_PATTERNS, SAMPLE_PATTERNS, checkSamples } from '../model_source.js';
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
  const circuit = CIRCUIT_PATTERNS[sample.pattern];
  const role = SAMPLE_PATTERNS[sample.pattern] ?? 'circuit';
  const where = { pattern: circuit ? t(`samples.pattern.${circuit}`) : t(`role.${role}`), l: sample.layer, h: sample.head };
  const tag = el('span', { className: `sample-tag role-badge role-${role}` }, t('samples.tag', where));
  const tip = circuit ? t('samples.tipCircuit', { ...where, target: sample.target ?? '' }) : t('samples.tip', { ...where, look: t(LOOK[role]) });
  return el(
    'button',
    {
      type: 'button',
      className: 'sample',
      lang: lang === 'zh' ? 'zh-CN' : 'en',
      title: `${sample.text}\n${tip}`,
      dataset: { lang, pattern: sample.pattern, layer: sample.layer, head: sample.head },
      on: { click: () => onPick(sample) },
    },
    tag,
    el('span', { className: 'sample-text' }, sample.text),
  );
}

// onPick(sample, smollm2) runs a sample ({text, pattern, layer, head, target?}) and shows its head,
// or its circuit; smollm2: the sample is SmolLM2's.
export function sampleButtons(onPick) {
  // Pending until the first show (style.css holds the list's place meanwhile).
  const node = el('div', { className: 'samples', hidden: true, dataset: { pending: '' } });
  let samples; // undefined until show(): not known yet
  let builtin = true; // whether the page runs the built-in model, whose heads the tags name
  let smollm2Raw = null; // SmolLM2's samples.json as served
  let smollm2 = null; // …checked against the loaded SmolLM2's config, while it is the model

  function update() {
    // SmolLM2's list arriving first says nothing yet of the built-in model's.
    if (smollm2 || samples !== undefined) delete node.dataset.pending;
    node.classList.toggle('smollm2-samples', Boolean(smollm2));
    if (smollm2) {
      node.hidden = false;
      node.setAttribute('aria-label', t('samples.label'));
      const row = (lang, ...list) => el('div', { className: 'samples-row' }, el('span', { className: 'samples-lang' }, t(`samples.${lang}`)), el('div', { className: 'samples-list' }, ...list));
      const english = row('en', smollm2.en.map((sample) => button(sample, 'en', (s) => onPick(s, true))));
      // SmolLM2 knows little Chinese and has no Chinese samples: said where they would stand.
      node.replaceChildren(...(language() === 'zh' ? [row('zh', el('p', { className: 'hint samples-none' }, t('samples.smollm2NoChinese'))), english] : [english]), el('p', { className: 'hint samples-hint' }, t('samples.hintSmollm2')));
      node.classList.remove('other-model');
      return;
    }
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
    // raw: SmolLM2's samples.json (model_source.js smollm2Samples), or null where the site lacks it.
    smollm2(raw) {
      smollm2Raw = raw;
      update();
    },
    // SmolLM2's checked samples while it is the model (config: its resolved config), else null.
    smollm2For(config) {
      return config && smollm2Raw ? checkSamples(smollm2Raw, config) : null;
    },
    relabel: update,
    // With another model loaded the tags name the built-in model's heads: said so, and that a click
    // goes back to it.
    // config: the loaded SmolLM2's config (its samples replace the built-in model's), else null.
    model(isBuiltin, config = null) {
      const next = this.smollm2For(config);
      if (isBuiltin === builtin && JSON.stringify(next) === JSON.stringify(smollm2)) return;
      builtin = isBuiltin;
      smollm2 = next;
      update();
    },
  };
}

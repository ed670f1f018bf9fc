// The page's start-up: the link it was opened with, read before anything is built (everything is
// built in its language), then the panels placed, the first state opened, and the page kept for
// offline use.

import { loadLanguage, setLanguage } from '../strings.js';
import { decode as decodeLink, readerLanguage } from '../state.js';
import { keepOffline } from '../offline.js';
import { sampleTexts } from '../panels/samples.js';
import * as source from '../model_source.js';
import { heldText } from './typed.js';

/**
 * The page opens what its link says. state.js decodes, validates and clamps every field (its
 * DEFAULTS list them: text, config, seed, view, step, layer, head, query, key, lang, lesson, the
 * views' own settings…); what could not be opened as written is explained once the page is up.
 * A link that does not say its language opens in the reader's (the browser's).
 * Resolves to {reader, opened, embed, embedTheme}; sets the page's language.
 */
export async function readOpeningLink(known) {
  const reader = readerLanguage(navigator.languages);
  const opened = await decodeLink(location.hash, { known, lang: reader });
  // Text typed over this address before a reload opens rather than the link's (typed.js).
  const held = heldText();
  if (held !== null) opened.state.text = held;
  // Text typed into the box before this module ran (index.html shows the box from the first paint,
  // empty) is the reader's: the page opens on it, not on the link's or the sample sentence.
  const early = document.getElementById('text')?.value ?? '';
  if (early !== '') opened.state.text = early.toWellFormed();
  const embed = opened.embed;
  const embedTheme = embed ? opened.theme ?? null : null;
  // Everything after this is built in the link's language from the start, the banner that explains a
  // damaged link included (it is written before the first open() applies the language). Chinese is
  // fetched first (strings.js); if it cannot be, the page starts in English and open() says why.
  await loadLanguage(opened.state.lang).catch(() => {});
  setLanguage(opened.state.lang);
  return { reader, opened, embed, embedTheme };
}

// A visit without a link opens the model kept in this browser; a link opens the model it names, and
// one that names none (format 2's default) the built-in one, or on a site without it the random one.
async function firstState(page) {
  const { app, opened, ui } = page;
  const [builtin, found, keptMeta, onSite, smollm2Kept] = await Promise.all([source.hasBuiltin(), source.builtinSamples(), source.kept.meta(), source.smollm2OnSite(), source.keptSmollm2.meta(), source.smollm2Samples().then((raw) => ui.samples.smollm2(raw))]);
  app.samples = sampleTexts(found);
  page.smollm2 = { onSite, kept: smollm2Kept };
  ui.models.set({ builtin, kept: keptMeta, smollm2: page.smollm2 });
  ui.samples.show(builtin ? found : null);
  if (location.hash.replace(/^#/, '') === '' && keptMeta) return { ...opened.state, model: source.keptModel(keptMeta) };
  if (!builtin && opened.state.model.kind === 'builtin') return { ...opened.state, model: { kind: 'random' } };
  return opened.state;
}

/** Starts the page: listens to the address, places the panels, and opens the first state. */
export function start(page) {
  page.address.listen();
  page.embedChrome.setUp();
  page.language.fillStaticText();
  page.ui.place();
  page.typed.listen();
  page.screen.refresh();
  const explained = page.opener.explain(page.opened.problems, { view: page.opened.state.view });
  firstState(page)
    .then((first) => {
      // Text typed while the page started (the box is there from the first paint) is the reader's:
      // the first state opens on it, not on the link's or the sample sentence.
      const typed = page.typed.takePending() ?? (page.typed.typedOnce() ? page.dom.text.value.toWellFormed() : null);
      return page.opener.open(typed === null ? first : { ...first, text: typed }, explained);
    })
    .then(() => keepOffline(() => page.worker.call('resources')).catch(() => {}));
}

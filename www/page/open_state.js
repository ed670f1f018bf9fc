// Opening a whole shareable state (the link at start, back and forward, an edited address, setState):
// the model rebuilt or reloaded and the text tokenized again only where what they depend on changed,
// and what could not be opened as written said in the banner. Also the other way: the shareable state
// of what is on screen (shared), which links, embeds and the scripting API are made of.

import { hasLanguage, loadLanguage, t } from '../strings.js';
import { DEFAULTS, fitToModel, textOf } from '../state.js';
import { explainLink } from '../link.js';
import { showBanner, addToBanner, hideBanner, isShowing } from '../panels/banner.js';
import { errorText } from './error_text.js';

export function opener(page) {
  const { state, app, dom } = page;

  // The shareable state (state.js's fields) of what is on screen. The first sample sentence in the
  // page's language is text null, so that the link follows a change of language with its sample.
  function shared() {
    const fields = Object.fromEntries(Object.keys(DEFAULTS).map((key) => [key, state[key]]));
    const text = state.text === textOf({ text: null, lang: state.lang }, app.samples) ? null : state.text;
    return structuredClone({ ...fields, text, pad: state.mask.flatMap((m, i) => (m === 0 ? [i] : [])) });
  }

  // The text a state shows (text null: the first sample sentence in its language). A sample sentence
  // left on screen while only the language changes becomes the same sample in the new language; text
  // the reader typed stays as it is.
  function shownText(next) {
    const index = app.samples?.[state.lang]?.indexOf(next.text) ?? -1;
    const sameSample = next.lang !== state.lang && next.text === state.text && index >= 0 ? app.samples[next.lang]?.[index] : undefined;
    return sameSample ?? textOf(next, app.samples);
  }

  // Says what in a link could not be opened as written; returns {told, asked}: whether a banner was
  // shown, and the layer, head and target token the link asked for where they were cut into range (open() says
  // those with the model's sizes, so they are not listed here too).
  // `kept`: the address changed on a live page without a whole state in it (plain fields over the
  // page's own), so a damaged part left the reader's settings as they were, not the defaults.
  // `view`: the view that opens.
  // The banner it raises is page.linkBanner: it goes when the reader changes the address to a link
  // that opens as written (address.js), since it no longer speaks of the address shown.
  function explain(problems, { kept = false, view = null } = {}) {
    const asked = {};
    for (const p of problems) if (p.asked !== undefined) asked[p.field] ??= p.asked;
    const rest = problems.filter((p) => p.asked === undefined && !(p.reason === 'clamped' && asked[p.field] !== undefined));
    const message = explainLink(rest, { kept, view });
    // In the page's language when shown, and again after a change of language (relabelBanner).
    if (message) page.linkBanner = showBanner(() => explainLink(rest, { kept, view }).title, () => explainLink(rest, { kept, view }).details);
    return { told: Boolean(message), asked };
  }


  // Shows a whole shareable state: rebuilds the model and re-tokenizes only when what they depend on
  // changed. A config the core refuses is explained; the page keeps its model, or takes the default
  // one if it has none yet.
  // `told`, `asked`: explain()'s, when the state comes from a link.
  async function open(next, { told = false, asked = {} } = {}) {
    // A language not shown yet is fetched before anything is drawn in it (strings.js); if it cannot
    // be, the page stays in English and says why, until a later try loads it.
    const fetched = !hasLanguage(next.lang);
    const unloaded = fetched ? await loadLanguage(next.lang).then(() => null, (err) => err) : null;
    if (unloaded) next = { ...next, lang: 'en' };
    else if (fetched && isShowing(page.languageNotice)) hideBanner();
    const { pad, config, seed, lang, model, ...fields } = next;
    const { ui } = page;
    // Lines for the banner: added to the link's explanation, or a new banner (not one left from before).
    const tell = (title, details) => {
      page.linkBanner = told ? addToBanner(title, details) : showBanner(title, details);
      told = true;
    };
    if (unloaded) {
      tell(() => t('lang.unavailable'), [unloaded.message]);
      page.languageNotice = page.linkBanner;
    }
    fields.text = shownText(next);
    const backendBefore = state.backend;
    const random = model.kind === 'random';
    // With no model yet, one is built or loaded, unless it is already on its way (page.lastAsked: a
    // tab clicked while the first model loads changes the view, not the model).
    const rebuild =
      (!app.model && page.lastAsked === null) || JSON.stringify(model) !== JSON.stringify(page.life.asked()) || (random && (JSON.stringify(config) !== JSON.stringify(state.config) || seed !== state.seed));
    const retokenize = rebuild || fields.text !== state.text || fields.bos !== state.bos;
    Object.assign(state, fields);
    // Asked for now, applied once the tokens are in (runs.js); meanwhile it tells page/ahead.js that
    // this state pads tokens.
    page.keeping = { pad, query: state.query, key: state.key };
    dom.text.value = state.text;
    ui.longText.say();
    page.language.apply(lang);
    if (rebuild) {
      try {
        if (random) await page.life.build(config, seed);
        else await page.life.load(model);
      } catch (err) {
        // An embed cannot take files (its model panel may be hidden): it says where they can be loaded.
        const why = () => (err.filesNeeded && page.embed ? t('link.modelFilesEmbed') : errorText(err));
        if (!err.superseded) tell(() => t(random ? 'link.refused' : 'model.linkFailed'), [why]);
        // Superseded, a newer choice is on its way: it, not the default model, takes the page.
        if (!app.model && !err.superseded) await page.life.build(DEFAULTS.config, DEFAULTS.seed).catch(() => {});
      }
    }
    // SmolLM2 opened with no text of the reader's (none, or one of the built-in model's samples) opens
    // on its own first sample.
    const builtinSample = Object.values(app.samples ?? {}).some((list) => list.includes(state.text));
    const smollm2First = rebuild && model.kind === 'smollm2' && app.model && (next.text === null || builtinSample) ? ui.samples.smollm2For(app.model)?.en[0] : null;
    if (smollm2First) {
      state.text = smollm2First.text;
      dom.text.value = state.text;
    }
    // A checkpoint's sizes are its own; the link's config and seed wait for a switch to Random.
    if (state.model.kind !== 'random') Object.assign(state, { config, seed });
    if (app.model) {
      Object.assign(state, fitToModel(state, app.model));
      // A layer or head past this model's (a link made for a bigger one, or edited by hand) is said,
      // not clamped in silence.
      const want = { layer: asked.layer ?? fields.layer, head: asked.head ?? fields.head };
      if (state.layer !== want.layer || state.head !== want.head) {
        const said = { ...want, layers: app.model.num_hidden_layers, heads: app.model.num_attention_heads, l: state.layer, h: state.head };
        // Only what was out of range is named (a link that gave no head does not "ask for head 0").
        const which = state.layer === want.layer ? 'link.fittedHead' : state.head === want.head ? 'link.fittedLayer' : 'link.fitted';
        tell(() => t(which, said));
      }
      // So is a target token past this vocabulary (as typed, not as cut into the largest vocabulary a
      // link can name): head attribution then explains the top-1 token.
      if (asked.target !== undefined) state.target = null;
      const target = asked.target ?? fields.target;
      if (target !== null && state.target === null) {
        const vocab = app.model.vocab_size;
        tell(() => t('link.targetFitted', { id: target, vocab, last: vocab - 1 }));
      }
    }
    ui.config.show(state);
    page.life.showBos();
    // No model yet, one on its way: the open that asked for it tokenizes and runs the state as it is
    // once the model is in.
    if (!app.model && page.lastAsked !== null) return page.screen.refresh();
    const keep = { pad, query: state.query, key: state.key };
    if (retokenize) return page.runs.tokenize(keep);
    const before = JSON.stringify(page.runs.args());
    page.runs.fitTokens(keep);
    if (JSON.stringify(page.runs.args()) !== before || state.backend !== backendBefore) return page.runs.run();
    page.screen.refresh();
  }

  return { shared, explain, open };
}

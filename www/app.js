// attnscope's page: holds the state (text, tokens, padding mask, model config, layer, head, step…),
// talks to the worker that owns the model, and shows one view at a time, chosen by #view=… in the
// URL. Views are modules with mount(root, app) → {update(), destroy()}; they read app.state and
// ask app.tensors(names) for the current run's tensors, which arrive as Float32Arrays.

import { workerClient } from './worker_client.js';
import { clearestHeads, headRoles } from './parts/head_roles.js';
import { el } from './parts/dom.js';
import { tokenChips } from './panels/token_chips.js';
import { configPanel } from './panels/config_panel.js';
import { t, setLanguage, language, hasLanguage, loadLanguage } from './strings.js';
import * as overview from './views/overview.js';
import * as stepper from './views/stepper.js';
import * as attentionMap from './views/attention_map.js';
import * as headGrid from './views/head_grid.js';
import * as masks from './views/masks.js';
import * as tokenLines from './views/token_lines.js';
import * as qkExplained from './views/qk_explained.js';
import * as rope from './views/rope.js';
import * as scale from './views/scale.js';
import * as gqa from './views/gqa.js';
import * as decode from './views/decode.js';
import * as flash from './views/flash.js';
import * as ffn from './views/ffn.js';
import * as output from './views/output.js';
import * as lessons from './views/lessons.js';
import * as compare from './views/compare.js';
import * as ablate from './views/ablate.js';
import * as lens from './views/lens.js';
import * as attribution from './views/attribution.js';
import * as circuit from './views/circuit.js';
import * as patch from './views/patch.js';
import { ablationBar } from './parts/ablation.js';
import { themeToggle } from './panels/theme.js';
import { STAGES } from './parts/controls.js';
import { DEFAULTS, decode as decodeLink, validate, fitToModel, fitToTokens, HIDE_FLAGS, hubModelOf, readerLanguage, textOf } from './state.js';
import { linkWriter, linkTo, explainLink } from './link.js';
import { scriptingApi, reportHeight } from './api.js';
import { showBanner, addToBanner, relabelBanner, hideBanner, isShowing } from './panels/banner.js';
import { tabBar } from './panels/tabs.js';
import { backendControls } from './panels/backend.js';
import { latest } from './page/latest.js';
import { tensorCache } from './page/tensor_cache.js';
import { sharePanel } from './panels/share_panel.js';
import { keepOffline } from './offline.js';
import { modelPanel, sourceOf } from './panels/model_panel.js';
import { sampleButtons, sampleTexts } from './panels/samples.js';
import { bosOption } from './panels/bos_option.js';
import * as source from './model_source.js';
import { errorText } from './page/error_text.js';
import { longTextNote } from './parts/long_text.js';
import { keepFocus } from './page/focus_keeper.js';

const VIEWS = { overview, stepper, attention: attentionMap, grid: headGrid, masks, lines: tokenLines, qk: qkExplained, rope, scale, gqa, decode, flash, ffn, output, lessons, compare, ablate, lens, attribution, circuit, patch };

const TYPING_PAUSE_MS = 200;
let typing = 0; // the timer of text typed and not yet in the state, or 0

// A trap in the core is told in the reader's language; the panic's own message stays the core's.
// `?wasm=simd128` in the page's address (a debug switch, outside the link format) makes the worker
// load the plain simd128 core even where relaxed-simd runs (worker.js).
const workerUrl = new URL('./worker.js', import.meta.url);
const wasmBuild = new URLSearchParams(location.search).get('wasm');
if (wasmBuild) workerUrl.searchParams.set('wasm', wasmBuild);
const worker = workerClient(workerUrl, {
  trapped: ({ panic, error }) => (panic ? t('app.trappedPanic', { why: panic }) : t('app.trappedTrap', { why: error })),
});

// The ids a link may name; state.js checks every field of a link against them.
const known = { views: Object.keys(VIEWS), steps: stepper.STEP_IDS, stages: Object.keys(STAGES), lessons: Object.keys(lessons.LESSONS) };

// The page opens what its link says. state.js decodes, validates and clamps every field (its
// DEFAULTS list them: text, config, seed, view, step, layer, head, query, key, lang, lesson, the
// views' own settings…); what could not be opened as written is explained once the page is up.
// A link that does not say its language opens in the reader's (the browser's).
// Embed mode ("&embed=1") lasts as long as the page.
const reader = readerLanguage(navigator.languages);
const opened = await decodeLink(location.hash, { known, lang: reader });
// Text typed and not yet in the address when the page was reloaded (within the typing pause, or while
// a run was in flight, which publish() waits for) is held in this tab's sessionStorage with the
// address it was typed over: the reload of that same address opens it rather than the link's text.
const TYPED_KEY = 'attnscope.typed';
function holdTyped(text) {
  try {
    sessionStorage.setItem(TYPED_KEY, JSON.stringify({ hash: location.hash, text }));
  } catch {
    // No storage (a sandboxed embed): the link's text is what a reload opens.
  }
}
try {
  const typed = JSON.parse(sessionStorage.getItem(TYPED_KEY) ?? 'null');
  sessionStorage.removeItem(TYPED_KEY);
  if (typed && typed.hash === location.hash && typeof typed.text === 'string') opened.state.text = typed.text.toWellFormed();
} catch {
  // Nothing held, or no storage.
}
const embed = opened.embed;
// An embed's link may fix its theme (the post's page is light or dark); the reader's own pick is left alone.
const embedTheme = embed ? opened.theme ?? null : null;
// Everything below is built in the link's language from the start, the banner that explains a
// damaged link included (it is written before the first open() applies the language). Chinese is
// fetched first (strings.js); if it cannot be, the page starts in English and open() says why.
await loadLanguage(opened.state.lang).catch(() => {});
setLanguage(opened.state.lang);

// The shareable fields, plus what the page derives from them: the tokens and the padding mask
// (a link carries the padded positions, `pad`, which open() turns into the mask).
const state = {
  ...Object.fromEntries(Object.entries(opened.state).filter(([key]) => key !== 'pad')),
  tokens: { ids: [], pieces: [], bytes: [], chars: [], split: [], special: [] },
  mask: [],
};

// phase: 'loading' | 'building' | 'ready' | 'empty' | 'error'
const app = {
  state,
  phase: 'loading',
  busy: false, // a run is in flight
  error: null,
  model: null, // the resolved config from the core
  preview: null, // {config, model}: the first checkpoint's resolved config while its weights still arrive
  source: null, // what the model is: name, kind, size, dtype (model_source.js's meta)
  samples: null, // the built-in model's sample sentences, {en: [...], zh: [...]}, once fetched
  loading: false, // a checkpoint is being read or built
  run: null, // {entries, backend, ms} of the current run
  set,
  go,
  navigate,
  tensors,
  call: (type, body, options) => worker.call(type, body, options),
  // A text as the page's input is tokenized (BOS first or not; `bos` false: as a link turning it off would).
  tokenize: (text, bos = withBos()) => worker.call('tokenize', { text, bos }),
  withBos,
  args: () => runArgs(),
  // Stops what the worker is doing (a view's own long request, as the status's Cancel does).
  cancel: () => cancelWork(),
  redraw: () => refresh(), // a view's own change (a lesson's edited cell): redrawn as any other, so settled() waits for it
};

const dom = {
  nav: document.getElementById('nav'),
  status: document.getElementById('status'),
  text: document.getElementById('text'),
  chips: document.getElementById('chips'),
  config: document.getElementById('config'),
  view: document.getElementById('view'),
  openFull: document.getElementById('open-full'),
  sentence: document.getElementById('embed-sentence'),
  caption: document.getElementById('embed-caption'),
  phoneSentence: document.getElementById('phone-sentence'),
};

// Text longer than a link carries runs whole; the box says a link keeps only its start (long_text.js).
const longText = longTextNote(dom.text);
const sayIfLong = longText.say;

let current = null; // {id, instance}
let rendered = Promise.resolve(); // the active view's latest update
// Superseded work is dropped: a newer run, tokenization or model load aborts the one before.
const runs = latest();
const tokenizations = latest();
const loads = latest();
const cache = tensorCache(worker, onProgress);

// Whether the input starts with the model's BOS token: the reader's choice (state.bos, on by
// default), for a model whose config names a bos_token_id. BOS is then simply position 0 of the ids
// every run sees; padding marks tokens of the input, BOS included (MiniMind's batch inference puts
// left padding before BOS).
function withBos() {
  return state.bos && app.model?.bos_token_id != null;
}

// Knocked-out heads go into every run (parts/ablation.js), so every view shows the ablated model.
function runArgs(override = {}) {
  const mask = state.mask.every((m) => m === 1) ? null : state.mask;
  const ablated = state.ablate.length ? { ablate: state.ablate } : {};
  return { ids: state.tokens.ids, attention_mask: mask, prefix_len: 0, causal: state.causal, layers: null, backend: state.backend, ...ablated, ...override };
}

// Tensors of the current run (or of a variant of it: override merges into the run's arguments).
// Resolves to a Map name → {data: Float32Array, shape}.
function tensors(names, override = {}) {
  return cache.get(runArgs(override), names);
}

// Where the opening link names no head (no link, or a bare "#view=attention"), the page opens the
// per-head views on the built-in model's clearest head of the first run (head_roles.js), the one the
// overview's route names, rather than on layer 0, head 0, which in the trained model rests on the
// first token. Any layer or head chosen (a control, a link, a lesson's door) ends this.
const NAMES_HEAD = /(^|[#&])(s\d+\.|layer=|head=)/;
let headOpen = !NAMES_HEAD.test(location.hash);

// The reader's checkpoint, loaded and not yet kept: it is kept after its first run that succeeds.
let unkept = null;

async function openClearestHead() {
  headOpen = false;
  if (!['builtin', 'smollm2'].includes(app.source?.kind)) return;
  try {
    const [best] = clearestHeads(await headRoles(app), 1);
    if (best) Object.assign(state, { layer: best.l, head: best.h });
  } catch {
    // No roles, no choice: the page stays on layer 0, head 0.
  }
}

function set(patch) {
  if ('layer' in patch || 'head' in patch) headOpen = false;
  Object.assign(state, patch);
  refresh();
}

// Changes fields of the state through the address: plain fields ("view=grid&lesson=qk") change
// the current state (openFromHash), and the address is then rewritten as a whole link.
function navigate(patch) {
  location.hash = new URLSearchParams(patch).toString();
  navigatedTo = location.hash;
}
// The address navigate() last set: a change the page made (a tab, the language button), after which
// a link's banner stays, unlike after an address the reader typed or went back to.
let navigatedTo = null;

// settled() waits for a navigation (navigate(), a tab's link, an edited address) until its
// hashchange has arrived and been opened: the address is then one the page has seen (the
// hashchange's, or the link it wrote back).
let seenHash = location.hash;
const HASHCHANGE_WAIT_MS = 2000;
let opening = 0;

function go(view) {
  navigate({ view });
}

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

// The banner an earlier link raised ("this link is damaged…"): it goes when the reader changes the
// address to a link that opens as written (openFromHash), since it no longer speaks of the address shown.
let linkBanner = null;

// Says what in a link could not be opened as written; returns {told, asked}: whether a banner was
// shown, and the layer, head and target token the link asked for where they were cut into range (open() says
// those with the model's sizes, so they are not listed here too).
// `kept`: the address changed on a live page without a whole state in it (plain fields over the
// page's own), so a damaged part left the reader's settings as they were, not the defaults.
// `view`: the view that opens.
function explain(problems, { kept = false, view = null } = {}) {
  const asked = {};
  for (const p of problems) if (p.asked !== undefined) asked[p.field] ??= p.asked;
  const rest = problems.filter((p) => p.asked === undefined && !(p.reason === 'clamped' && asked[p.field] !== undefined));
  const message = explainLink(rest, { kept, view });
  // In the page's language when shown, and again after a change of language (relabelBanner).
  if (message) linkBanner = showBanner(() => explainLink(rest, { kept, view }).title, () => explainLink(rest, { kept, view }).details);
  return { told: Boolean(message), asked };
}

// The banner that said a language could not be loaded (open()), taken down once it is.
let languageNotice = null;

// Shows a whole shareable state (the link at start, back and forward, an edited address, setState):
// rebuilds the model and re-tokenizes only when what they depend on changed. A config the core
// refuses is explained; the page keeps its model, or takes the default one if it has none yet.
// `told`, `asked`: explain()'s, when the state comes from a link.
async function open(next, { told = false, asked = {} } = {}) {
  // A language not shown yet is fetched before anything is drawn in it (strings.js); if it cannot
  // be, the page stays in English and says why, until a later try loads it.
  const fetched = !hasLanguage(next.lang);
  const unloaded = fetched ? await loadLanguage(next.lang).then(() => null, (err) => err) : null;
  if (unloaded) next = { ...next, lang: 'en' };
  else if (fetched && isShowing(languageNotice)) hideBanner();
  const { pad, config, seed, lang, model, ...fields } = next;
  // Lines for the banner: added to the link's explanation, or a new banner (not one left from before).
  const tell = (title, details) => {
    linkBanner = told ? addToBanner(title, details) : showBanner(title, details);
    told = true;
  };
  if (unloaded) {
    tell(() => t('lang.unavailable'), [unloaded.message]);
    languageNotice = linkBanner;
  }
  fields.text = shownText(next);
  const backendBefore = state.backend;
  const random = model.kind === 'random';
  const rebuild =
    !app.model || JSON.stringify(model) !== JSON.stringify(askedModel()) || (random && (JSON.stringify(config) !== JSON.stringify(state.config) || seed !== state.seed));
  const retokenize = rebuild || fields.text !== state.text || fields.bos !== state.bos;
  Object.assign(state, fields);
  dom.text.value = state.text;
  sayIfLong();
  applyLanguage(lang);
  if (rebuild) {
    try {
      if (random) await buildModel(config, seed);
      else await loadCheckpoint(model);
    } catch (err) {
      // An embed cannot take files (its model panel may be hidden): it says where they can be loaded.
      const why = () => (err.filesNeeded && embed ? t('link.modelFilesEmbed') : errorText(err));
      if (!err.superseded) tell(() => t(random ? 'link.refused' : 'model.linkFailed'), [why]);
      if (!app.model) await buildModel(DEFAULTS.config, DEFAULTS.seed).catch(() => {});
    }
  }
  // SmolLM2 opened with no text of the reader's (none, or one of the built-in model's samples) opens
  // on its own first sample.
  const builtinSample = Object.values(app.samples ?? {}).some((list) => list.includes(state.text));
  const smollm2First = rebuild && model.kind === 'smollm2' && app.model && (next.text === null || builtinSample) ? samples.smollm2For(app.model)?.en[0] : null;
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
  panel.show(state);
  showBos();
  const keep = { pad, query: state.query, key: state.key };
  if (retokenize) return tokenize(keep);
  const before = JSON.stringify(runArgs());
  fitTokens(keep);
  if (JSON.stringify(runArgs()) !== before || state.backend !== backendBefore) return runModel();
  refresh();
}

// A changed address (back, forward, an edited link, a tab, navigate()) opens what it says: plain
// fields ("view=grid") change the current state, a whole link ("s3.…") replaces it.
async function openFromHash(hash) {
  if (NAMES_HEAD.test(hash)) headOpen = false;
  writer.cancel();
  // The address now says what was asked, which may differ from what opens (a layer past the
  // model's, plain fields over the state): the whole link is written back even if nothing changed.
  rewrite = true;
  // Text typed in the last TYPING_PAUSE_MS is not in the state yet: a tab or the language button
  // clicked now keeps it (the view opens on it), rather than putting the old text back in the box.
  const base = shared();
  if (typing) {
    clearTimeout(typing);
    typing = 0;
    base.text = dom.text.value.toWellFormed();
  }
  const { state: next, problems, keptBase } = await decodeLink(hash, { base, known, lang: reader });
  if (problems.length === 0 && hash !== navigatedTo && isShowing(linkBanner)) hideBanner();
  // A text longer than a link carries comes back whole from its history entry (link.js linkWriter).
  const whole = history.state?.text;
  if (typeof whole === 'string' && typeof next.text === 'string' && whole.length > next.text.length && whole.startsWith(next.text)) next.text = whole;
  // Plain fields over the page's state, or a whole link too damaged to read (decode kept the
  // page's state then: keptBase): the reader's settings were kept.
  await open(next, explain(problems, { kept: Boolean(keptBase) || !/(^|&)s\d+\./.test(hash.replace(/^#/, '')), view: next.view }));
}

// setState(partial) of the scripting API: fields are validated as a link's are; config merges.
async function update(partial) {
  const current = shared();
  const merged = partial?.config && typeof partial.config === 'object' ? { ...partial, config: { ...current.config, ...partial.config } } : partial;
  const { state: next, problems } = validate(merged, current, known);
  if (problems.length) console.warn('attnscope.setState:', problems);
  await open(next);
  await settled();
  return shared();
}

// After each change: the address, the embed's chrome, the share panel and the scripting API follow.
let published = '';
let rewrite = false; // openFromHash: the address must be written back whatever the state
function publish() {
  for (const flag of HIDE_FLAGS) document.documentElement.classList.toggle(`hide-${flag}`, state.hide.includes(flag));
  if (app.busy || app.phase === 'loading' || app.phase === 'building') return;
  const now = shared();
  const json = JSON.stringify(now);
  if (json === published) {
    if (rewrite) writer.write(now);
    rewrite = false;
    return;
  }
  rewrite = false;
  published = json;
  writer.write(now);
  share.update();
  linkTo(now).then((href) => {
    dom.openFull.href = href;
  });
  announce(now);
}

// How far the worker's current run has come ({done, total} layers), shown with a Cancel button.
function onProgress(progress) {
  app.progress = progress;
  renderStatus();
}

// Stops a long run: the worker is replaced and the model rebuilt in the new one (worker_client.js).
async function cancelWork() {
  app.progress = null;
  try {
    await worker.cancel();
    // The new worker's Session is a rebuilt model with nothing under way: views keyed on app.source
    // (the KV cache view's decoding) start over.
    if (app.source) app.source = { ...app.source };
  } catch (err) {
    app.phase = 'error';
    app.error = err;
  }
  app.busy = false;
  refresh();
}

// How many of the input's tokens are padding (attention_mask 0): said in the status, beside the run.
const padded = () => state.mask.filter((m) => m === 0).length;

// An embed whose author hid the input still says what sentence its figure is of, on one line
// (share.css shows it only there; the whole text is its tooltip).
function renderSentence() {
  // The reader's text in a <bdi>: a right-to-left override in it cannot turn the quote marks around
  // it, or what follows, backwards.
  const [before, after] = t('embed.sentence', { text: '\u0000' }).split('\u0000');
  const line = () => [before, el('bdi', {}, state.text), after];
  const said = embed && state.hide.includes('input') && state.text;
  dom.sentence.replaceChildren(...(said ? line() : []));
  dom.sentence.title = said ? t('embed.sentence', { text: state.text }) : '';
  // On a phone the input panel comes after the view: the sentence is said at the top, with a
  // button to the text box (style.css shows this line only on a narrow page, never in an embed).
  dom.phoneSentence.firstElementChild.replaceChildren(...line());
  // An embed whose author hid the view's controls still says which head (and the attention map's
  // stage) its figure shows, where the view shows one head (it has a head picker).
  const oneHead = embed && state.hide.includes('toolbar') && dom.view.querySelector(':scope > * > .toolbar select[name="head"]');
  dom.caption.textContent = oneHead ? [t('embed.head', { l: state.layer, h: state.head }), state.view === 'attention' ? t(`stage.${state.stage}`) : null].filter(Boolean).join(' · ') : '';
}

dom.phoneSentence.querySelector('button').addEventListener('click', () => {
  dom.text.scrollIntoView({ block: 'center' });
  dom.text.focus({ preventScroll: true });
});

function renderStatus() {
  backend.show(state.backend);
  renderSentence();
  if (app.busy || app.progress) {
    const p = app.progress;
    dom.status.replaceChildren(
      p ? t('app.runningLayers', { done: p.done, total: p.total }) : t('app.running'),
      ' ',
      el('button', { type: 'button', className: 'status-cancel', on: { click: cancelWork } }, t('app.cancel')),
    );
    return;
  }
  dom.status.textContent = app.phase === 'ready' && app.run
      ? t('app.status', { backend: t(app.run.backend === 'webgpu' ? 'backend.gpu' : 'backend.cpu'), ms: app.run.ms.toFixed(1), tokens: state.tokens.ids.length }) + (state.ablate.length ? t('ablate.status', { n: state.ablate.length }) : '') + (padded() ? t('app.statusPadded', { n: padded() }) : '') + (state.causal ? '' : t('app.statusNoCausal'))
      : app.phase === 'building'
        ? t('app.building')
        : (models.loadingText() ?? '');
}

function message(kind, text, detail = null) {
  return el('div', { className: `message message-${kind}`, attrs: { role: kind === 'error' ? 'alert' : 'status' } }, kind === 'loading' && el('span', { className: 'spinner', attrs: { 'aria-hidden': 'true' } }), el('div', {}, text, detail && el('pre', {}, detail)));
}

// A stopped run says so, and runs again in one click (as any change of the text or model would).
function stopped() {
  const box = message('empty', t('app.cancelled'));
  box.lastElementChild.append(' ', el('button', { type: 'button', className: 'action secondary run-again', on: { click: () => runModel() } }, t('app.runAgain')));
  return box;
}

// Shows the active view, or the loading / empty / error state in its place.
function refresh() {
  publish();
  samples.model(state.model.kind === 'builtin', state.model.kind === 'smollm2' ? app.model : null);
  tabs.render(state.view);
  ablated.update();
  // A run without the causal mask is not how MiniMind runs: said above every view but the lessons
  // (their own examples), and in the status, so a shared link cannot pass for the model's own maps.
  causalNote.hidden = state.causal || state.view === 'lessons';
  renderStatus();
  // A view that can draw from a config alone (the overview) is shown while the first model loads.
  const previewing = app.phase === 'loading' && Boolean(app.model ?? app.preview) && VIEWS[state.view].previews === true;
  // A view that never reads the run (the lessons: their own numbers, through the core) is shown when
  // the reader's sentence has nothing to run or its run failed, with what went wrong said above it.
  const runless = ['empty', 'error', 'cancelled'].includes(app.phase) && Boolean(app.model) && VIEWS[state.view].runless === true;
  if (app.phase !== 'ready' && !previewing && !runless) {
    if (current) current.instance.destroy();
    current = null;
    const box =
      app.phase === 'error'
        ? message('error', t(app.error?.code ? 'app.refusedTitle' : 'app.errorTitle'), errorText(app.error))
        : app.phase === 'empty'
          ? message('empty', t(state.text.trim() === '' ? 'app.empty' : 'app.noTokens'))
          : app.phase === 'cancelled'
            ? stopped()
          : message('loading', t(app.phase === 'building' ? 'app.building' : 'app.loading'));
    dom.view.replaceChildren(ablated.node, causalNote, box);
    dom.view.setAttribute('aria-busy', String(app.phase === 'loading' || app.phase === 'building'));
    return;
  }
  dom.view.setAttribute('aria-busy', String(previewing));
  dom.view.querySelector(':scope > .runless-note')?.remove();
  if (current?.id !== state.view) {
    const switched = current !== null;
    if (current) current.instance.destroy();
    dom.view.replaceChildren(ablated.node, causalNote);
    const root = el('div', { className: `view-root view-${state.view}` });
    dom.view.append(root);
    current = { id: state.view, root, instance: VIEWS[state.view].mount(root, app) };
    if (switched) showViewTop();
    // The control that opened this view (an overview block, a chip, a button of the old view) is
    // gone with it: focus goes to the view, so the next Tab continues there and not at the page's top.
    if (switched && (document.activeElement === document.body || !document.activeElement)) dom.view.focus({ preventScroll: true });
  }
  if (runless) {
    const said = app.phase === 'error' ? errorText(app.error) : app.phase === 'cancelled' ? t('app.cancelled') : t(state.text.trim() === '' ? 'app.empty' : 'app.noTokens');
    current.root.before(el('p', { className: 'hint runless-note', dataset: { phase: app.phase } }, t('app.runlessNote', { said })));
  }
  // The window's title names the view, so a tab, a bookmark and a screen reader tell them apart.
  document.title = `${t(`view.${state.view}`)} · ${t('app.pageTitle')}`;
  const shown = current;
  shown.root.querySelector(':scope > .view-error')?.remove();
  rendered = shown.instance.update().catch((err) => {
    if (err.cancelled) {
      app.phase = 'cancelled';
      app.error = err;
      refresh();
      return;
    }
    // A request of this view alone failed (a second sentence over the token limit, say): it is said
    // at the view's top, whose controls stay to fix it, and the other views still draw the run.
    if (current !== shown) return;
    shown.root.querySelector(':scope > .view-error')?.remove();
    shown.root.prepend(el('div', { className: 'view-error' }, message('error', t('app.viewErrorTitle'), errorText(err))));
  });
}

// A view opened from another (a tab, a block of the overview, a token chip, a link) starts at its top:
// the page would otherwise keep the old view's scroll and put the reader mid-page. The sticky top bar
// stays clear of it; an embed's view scrolls in its own box (share.css).
function showViewTop() {
  dom.view.scrollTop = 0;
  const above = dom.view.getBoundingClientRect().top - (document.querySelector('.topbar')?.offsetHeight ?? 0);
  if (above < 0) scrollBy(0, above);
}

let cannotRun = false; // the model panel says a model just loaded cannot run the text

async function runModel() {
  const signal = runs.start();
  if (state.tokens.ids.length === 0) {
    app.phase = 'empty';
    app.run = null;
    app.busy = false;
    refresh();
    return;
  }
  app.busy = true;
  renderStatus();
  try {
    const result = await worker.call('run', { args: runArgs() }, { onProgress });
    if (signal.aborted) return;
    cache.clear();
    if (headOpen) await openClearestHead();
    if (signal.aborted) return;
    if (unkept) {
      keep(unkept);
      unkept = null;
    }
    app.run = result;
    backend.ran(result);
    app.phase = 'ready';
    app.error = null;
    if (cannotRun) {
      cannotRun = false; // the model panel's "cannot run this text" is over once a text runs
      models.set({ note: null });
    }
  } catch (err) {
    if (signal.aborted) return;
    app.phase = err.cancelled ? 'cancelled' : 'error';
    app.error = err;
  }
  app.busy = false;
  app.progress = null;
  refresh();
}

// The padded positions and selected tokens of a state, fitted to the current tokens.
function fitTokens(keep) {
  const fit = fitToTokens(keep, state.tokens.ids.length);
  state.mask = state.tokens.ids.map((_, i) => (fit.pad.includes(i) ? 0 : 1));
  state.query = fit.query;
  state.key = fit.key;
  chips.update(state.tokens, state.mask);
}

// New tokens for state.text; keep: the padded positions and selected tokens to carry over.
async function tokenize(keep = { pad: [], query: null, key: null }) {
  const signal = tokenizations.start();
  app.busy = true;
  renderStatus();
  try {
    const tokens = await app.tokenize(state.text);
    if (signal.aborted) return;
    state.tokens = tokens;
    fitTokens(keep);
    await runModel();
  } catch (err) {
    if (signal.aborted) return;
    app.phase = 'error';
    app.busy = false;
    app.error = err;
    refresh();
  }
}

// Builds a random model in the worker; rejects (leaving the old model in place) if the core refuses.
// A checkpoint still being read is dropped.
// The model most recently asked for: a build or a load still in flight has not made it state.model
// yet, and a second choice made meanwhile (Random, then Built-in at once) is compared with it, not
// dropped as the model already there. null once the one asked for failed.
let lastAsked = null;
const askedModel = () => lastAsked ?? state.model;

async function buildModel(config, seed) {
  const previous = app.phase;
  const asked = (lastAsked = { kind: 'random' });
  loads.abort();
  app.loading = false;
  app.phase = 'building';
  models.set({ progress: null, error: null });
  refresh();
  try {
    const { config: resolved } = await worker.call('session', { config, seed });
    Object.assign(state, { config, seed });
    adopt(resolved, { kind: 'random' }, { kind: 'random', seed, bytes: resolved.weight_count * 4, dtype: 'F32', weight_count: resolved.weight_count });
  } catch (err) {
    if (lastAsked === asked) lastAsked = null;
    app.phase = app.model ? previous : 'error';
    app.error = app.model ? app.error : err;
    refresh();
    throw err;
  }
}

// Reads a checkpoint (built in, a folder URL, the reader's files, or the one kept in this browser;
// model_source.js) with its progress in the model panel, and makes it the model once the core has
// loaded it; until then, and if it fails, the previous model stays. The reader's own checkpoint is
// kept in this browser for the next visit.
async function loadCheckpoint(model, files = null) {
  const signal = loads.start(); // a checkpoint still being read for an older choice is dropped
  const wanted = () => !signal.aborted;
  lastAsked = model;
  app.loading = true;
  models.set({ source: sourceOf(model), loading: model, progress: { loaded: 0, total: null }, error: null, note: null });
  renderStatus();
  try {
    const progress = (loaded, total, file) => {
      models.set({ progress: { loaded, total, file } });
      renderStatus();
    };
    // With no model yet, the views that can draw the model's shape from its config do so meanwhile.
    const described = (config) => {
      if (app.model) return;
      app.preview = { config, model };
      refresh();
    };
    const { config: resolved, checkpoint, restored } = await source.load(model, { call: app.call, files, progress, wanted, described, kept: worker.kept });
    adopt(resolved, model, { ...checkpoint.meta, restored });
    // Kept once it has run: a checkpoint that loads but cannot run (weights that overflow f32)
    // would otherwise come back broken on every visit.
    unkept = !restored && model.kind !== 'builtin' ? checkpoint : null;
    if (restored && model.kind === 'smollm2') models.set({ smollm2: (smollm2 = { ...smollm2, kept: checkpoint.meta }) });
  } catch (err) {
    if (lastAsked === model) lastAsked = null;
    if (wanted()) models.set({ progress: null, error: err });
    throw err;
  } finally {
    if (wanted()) {
      app.loading = false;
      app.preview = null;
      renderStatus(); // the top bar's "Your own · 6.29 MiB / 6.29 MiB" goes with the load, refused or not
    }
  }
}

// The worker now runs `model` (its resolved config, and what it is for the model panel): the state,
// the sizes the views clamp to and the panels follow.
function adopt(resolved, model, meta) {
  // A dense FFN and a mixture of experts have different views and steps: draw the view anew.
  const ffnChanged = Boolean(app.model?.use_moe) !== Boolean(resolved.use_moe);
  state.model = model;
  app.model = resolved;
  app.source = meta;
  Object.assign(state, fitToModel(state, resolved));
  panel.showResolved(resolved);
  showBos();
  models.set({ loaded: meta, progress: null, source: sourceOf(model) });
  cache.clear();
  if (ffnChanged && current) {
    current.instance.destroy();
    current = null;
  }
}

// The BOS switch for the model now loaded: offered where its config names a BOS token; greyed
// otherwise, saying why (a random model, a GGUF file that names none it was trained with, a config.json).
function showBos() {
  bos.show({ offered: app.model?.bos_token_id != null, on: state.bos, random: state.model.kind === 'random', gguf: app.source?.format === 'gguf' });
}

// SmolLM2: {onSite: whether this site has it (null: cannot tell), kept: its meta where this browser keeps it}.
let smollm2 = { onSite: null, kept: null };

// Keeps the reader's checkpoint (or SmolLM2) in this browser for the next visit; a refusal (no space) is noted.
function keep(checkpoint) {
  source.keep(checkpoint).then(
    (slot) => {
      if (slot === 'smollm2') models.set({ smollm2: (smollm2 = { ...smollm2, kept: checkpoint.meta }) });
      else models.set({ kept: checkpoint.meta });
    },
    (err) => models.set({ note: t('model.notKept', { reason: err?.message ?? String(err) }) }),
  );
}

// A model chosen in the model panel; the text is tokenized again, since its tokenizer may differ.
async function useModel(model, files = null) {
  if (!files && JSON.stringify(model) === JSON.stringify(askedModel())) return;
  try {
    if (model.kind === 'random') await buildModel(state.config, state.seed);
    else await loadCheckpoint(model, files);
    await tokenize();
    // A model that loads but cannot run this text (too short a context, weights that overflow f32):
    // the panel where the reader chose it says so, and the view's message is brought into sight.
    if (app.phase === 'error' && state.model === model) {
      cannotRun = true;
      models.set({ note: t('model.loadedCannotRun') });
      dom.view.querySelector('.message-error')?.scrollIntoView({ block: 'center' });
    }
  } catch (err) {
    if (model.kind === 'random' && !err.superseded) models.set({ error: err });
    if (!err.superseded) models.revealError();
  }
}

const models = modelPanel({
  onSource: (kind) => useModel({ kind }),
  onFiles: (files) => useModel({ kind: 'files' }, files),
  onUrl: (url) => useModel({ kind: 'url', url }),
  onHub: (text) => useModel(hubModelOf(text)),
  onKept: async () => {
    const meta = await source.kept.meta();
    if (meta) useModel(source.keptModel(meta));
  },
  onForget: async () => {
    await source.kept.forget();
    models.set({ kept: null, note: t('model.forgotten') });
  },
  onForgetSmollm2: async () => {
    await source.keptSmollm2.forget();
    models.set({ smollm2: (smollm2 = { ...smollm2, kept: null }), note: t('model.smollm2Forgotten') });
  },
});
const bos = bosOption((on) => navigate({ bos: on }));
// A sample runs on the built-in model (its head is that model's) and opens the attention map of the
// head that shows its pattern, through the link's fields, BOS first as head_stats.py scored it; the last
// sentence's padding and picked cell go.
// SmolLM2's samples run on it (it has no BOS); a circuit sample opens the Find-the-circuit view.
const samples = sampleButtons(({ text, layer, head, pattern }, smollm2) =>
  smollm2
    ? navigate({ model: 'smollm2', text, view: pattern in source.CIRCUIT_PATTERNS ? 'circuit' : 'attention', layer, head, stage: 'probs', pad: '', query: null, key: null })
    : navigate({ model: 'builtin', text, bos: true, view: 'attention', layer, head, stage: 'probs', pad: '', query: null, key: null }),
);

// Drops the mounted view so that refresh() builds it again: its strings or colours changed.
function remount() {
  if (current) current.instance.destroy();
  current = null;
  refresh();
}

// Switches every string on the page: static text, tabs, chips, the model panel and the view.
function applyLanguage(lang) {
  const next = lang === 'zh' ? 'zh' : 'en';
  if (next === state.lang && next === language()) return;
  state.lang = next;
  setLanguage(next);
  fillStaticText();
  tabs.relabel();
  chips.update(state.tokens, state.mask);
  const relabelled = configPanel(state, panelHandlers);
  panel.node.replaceWith(relabelled.node);
  panel = relabelled;
  const reshared = sharing();
  share.node.replaceWith(reshared.node);
  share = reshared;
  if (app.model) panel.showResolved(app.model);
  models.relabel();
  samples.relabel();
  bos.relabel();
  theme.relabel();
  relabelBanner();
  causalNote.textContent = t('app.causalOff');
  remount();
}

const chips = tokenChips((i) => {
  state.mask = state.mask.map((m, j) => (j === i ? 1 - m : m));
  chips.update(state.tokens, state.mask);
  runModel();
});

const panelHandlers = {
  onApply: async (config, seed) => {
    await buildModel(config, seed);
    await tokenize();
  },
  onCausal: (causal) => {
    state.causal = causal;
    runModel();
  },
};
let panel = configPanel(state, panelHandlers);
const sharing = () => sharePanel(app, { getState: shared, view: () => dom.view.querySelector('.view-root') });
let share = sharing();
const writer = linkWriter({ embed, theme: embedTheme, wrote: () => (seenHash = location.hash) });
const theme = themeToggle(remount, { fixed: embedTheme });
const tabs = tabBar(dom.nav, go);
const ablated = ablationBar(app); // the first thing in the view's column while heads are knocked out
const causalNote = el('p', { className: 'causal-off-note', attrs: { role: 'note' }, hidden: true }, t('app.causalOff'));
const backend = backendControls({ call: app.call, args: () => runArgs(), choose: (value) => navigate({ backend: value }) });

// Static text in index.html is marked data-i18n (text), data-i18n-label (aria-label) or data-i18n-title (a tooltip).
function fillStaticText() {
  for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  document.title = `${t(`view.${state.view}`)} · ${t('app.pageTitle')}`;
  document.getElementById('lang-switch').lang = state.lang === 'zh' ? 'en' : 'zh';
  for (const node of document.querySelectorAll('[data-i18n-label]')) node.setAttribute('aria-label', t(node.dataset.i18nLabel));
  for (const node of document.querySelectorAll('[data-i18n-title]')) node.title = t(node.dataset.i18nTitle);
}

function wireInput() {
  keepFocus(() => dom.view);
  document.getElementById('lang-switch').addEventListener('click', () => navigate({ lang: state.lang === 'zh' ? 'en' : 'zh' }));
  // The skip link jumps over the top bar and the input panels to the view (without touching the
  // address, which holds the link's state).
  document.getElementById('skip-link').addEventListener('click', (e) => {
    e.preventDefault();
    dom.view.focus();
  });
  // Whatever is focused or scrolled to stays clear of the sticky top bar, however tall it wraps.
  const topbar = document.querySelector('.topbar');
  // Its height is also where the knocked-out heads' bar sticks (interp.css .ablation-bar).
  // On a phone the bar scrolls away with the page (style.css): then nothing sits under it.
  // So does the knocked-out heads' bar while it shows, sticking under it (on a phone it wraps to
  // a few lines, and hid the heading a link or button had scrolled to).
  const stuck = new ResizeObserver(() => {
    const over = getComputedStyle(topbar).position === 'sticky' ? topbar.offsetHeight : 0;
    const bar = ablated.node.hidden || getComputedStyle(ablated.node).position !== 'sticky' ? 0 : ablated.node.offsetHeight + 4;
    document.documentElement.style.scrollPaddingTop = `${over + bar + 8}px`;
    document.documentElement.style.setProperty('--topbar-height', `${over}px`);
  });
  stuck.observe(topbar);
  stuck.observe(ablated.node);
  document.getElementById('theme-toggle').replaceWith(theme.node);
  dom.text.value = state.text;
  dom.chips.replaceWith(chips.node);
  dom.config.replaceWith(models.node, panel.node);
  dom.text.after(longText.node, bos.node, samples.node);
  document.getElementById('share').replaceWith(share.node);
  dom.text.addEventListener('input', () => {
    sayIfLong();
    holdTyped(dom.text.value);
    clearTimeout(typing);
    typing = setTimeout(() => {
      typing = 0;
      // A lone surrogate (half an emoji) becomes U+FFFD in the state, the box and the link alike.
      state.text = dom.text.value.toWellFormed();
      if (dom.text.value !== state.text) dom.text.value = state.text;
      tokenize();
    }, TYPING_PAUSE_MS);
  });
}

// Resolves once no run is in flight, the address says what is on screen (link.js writes it at most
// every 250 ms) and the active view has drawn, including the redraws it asked for while drawing (a
// lesson restoring edited cells from the link).
async function settled() {
  // An address the page has not seen is waited for until its hashchange has had ample time to
  // arrive (it comes within a task or two); after that it is taken as seen, so settled() can never
  // hang on an address nothing will open.
  const since = Date.now();
  const unseen = () => location.hash !== seenHash && Date.now() - since < HASHCHANGE_WAIT_MS;
  for (;;) {
    while (unseen() || opening || writer.pending() || app.busy || app.loading || app.phase === 'loading' || app.phase === 'building') await new Promise((r) => setTimeout(r, 20));
    for (let drawn = null; drawn !== rendered; ) {
      drawn = rendered;
      await drawn;
      await null; // a redraw asked for in a microtask after the drawing
    }
    // The drawing may have changed the state, and the address follows it.
    if (!unseen() && !writer.pending()) return;
  }
}

// The height an embedded page's content needs (share.css fits the view and the input panel into the
// iframe, each scrolling in its own box): the page as laid out now, with those two at their content's
// height. <attn-scope> without a height sizes its iframe to it.
function naturalHeight() {
  const sidebar = document.querySelector('.sidebar');
  const content = [...dom.view.children].reduce((sum, child) => sum + child.offsetHeight, 0);
  return document.documentElement.scrollHeight + (content - dom.view.clientHeight) + (sidebar.scrollHeight - sidebar.clientHeight);
}

// The scripting API (api.js: getState, setState, link, 'statechange'), and hooks for tests and the
// curious: the views' ids, the worker's tensors of the current run, and settled().
const { api, announce } = scriptingApi({ getState: shared, setState: update, link: () => linkTo(shared()) });
window.attnscope = Object.assign(api, {
  app,
  views: Object.keys(VIEWS),
  tensor: async (name, override = {}) => (await tensors([name], override)).get(name).data, // override: another run's arguments (the induction probe's)
  call: app.call,
  settled,
});

addEventListener('hashchange', async (event) => {
  seenHash = new URL(event.newURL).hash;
  opening++;
  try {
    await openFromHash(new URL(event.newURL).hash);
  } finally {
    opening--;
  }
});
document.documentElement.classList.toggle('embed', embed);
if (embed) {
  reportHeight(naturalHeight);
  foldModelPanel();
}

// An embed is a figure: its model panel (when the author left it in) is folded to its heading, which
// opens it, so that the view and the text box keep the iframe's height (share.css).
// The heading stays a heading (the panel's label); a disclosure button inside it holds its words.
function foldModelPanel() {
  const panel = document.querySelector('[data-hideable="config"]');
  const heading = panel?.querySelector('.panel-heading');
  if (!heading) return;
  const button = el('button', { type: 'button', className: 'panel-fold', attrs: { 'aria-expanded': 'false' } }, ...heading.childNodes);
  button.addEventListener('click', () => button.setAttribute('aria-expanded', String(panel.classList.toggle('open'))));
  heading.replaceChildren(button);
}
fillStaticText();
wireInput();
refresh();
const explained = explain(opened.problems, { view: opened.state.view });

// A visit without a link opens the model kept in this browser; a link opens the model it names, and
// one that names none (format 2's default) the built-in one, or on a site without it the random one.
async function firstState() {
  const [builtin, found, keptMeta, onSite, smollm2Kept] = await Promise.all([source.hasBuiltin(), source.builtinSamples(), source.kept.meta(), source.smollm2OnSite(), source.keptSmollm2.meta(), source.smollm2Samples().then((raw) => samples.smollm2(raw))]);
  app.samples = sampleTexts(found);
  smollm2 = { onSite, kept: smollm2Kept };
  models.set({ builtin, kept: keptMeta, smollm2 });
  samples.show(builtin ? found : null);
  if (location.hash.replace(/^#/, '') === '' && keptMeta) return { ...opened.state, model: source.keptModel(keptMeta) };
  if (!builtin && opened.state.model.kind === 'builtin') return { ...opened.state, model: { kind: 'random' } };
  return opened.state;
}
firstState()
  .then((first) => open(first, explained))
  .then(() => keepOffline(() => worker.call('resources')).catch(() => {}));

// attnscope's page: holds the state (text, tokens, padding mask, model config, layer, head, step…),
// talks to the worker that owns the model, and shows one view at a time, chosen by #view=… in the
// URL. Views are modules with mount(root, app) → {update(), destroy()}; they read app.state and
// ask app.tensors(names) for the current run's tensors, which arrive as Float32Arrays.
//
// This file wires the page's controller together; each job is a module of page/:
//   start.js       the link the page opens with, and the start-up
//   model_life.js  the worker and the model in it: building, loading, replacing, keeping
//   runs.js        the run of the current state: tokenizing, running, its tensors
//   open_state.js  opening a whole shareable state (a link, setState), and what could not be opened
//   address.js     the address both ways: navigation, the address written back, settled()
//   screen.js      the view on screen, or the loading / empty / error state, and the status line
//   typed.js       the text box: the typing pause, and typed text kept across a reload
//   panels.js      the panels around the view, built and placed
//   language.js    switching every string on the page
//   embed.js       an embedded page: its height, its folded model panel, its sentence and caption
// They share one object, `page` below: what is fixed at start, the panels, the modules, and the few
// values that change while the page is open.

import { workerClient } from './worker_client.js';
import { t } from './strings.js';
import { scriptingApi } from './api.js';
import { linkTo } from './link.js';
import { tensorCache } from './page/tensor_cache.js';
import { readOpeningLink, start } from './page/start.js';
import { modelLife } from './page/model_life.js';
import { runs, NAMES_HEAD } from './page/runs.js';
import { opener } from './page/open_state.js';
import { address } from './page/address.js';
import { screen, VIEWS, KNOWN } from './page/screen.js';
import { typed } from './page/typed.js';
import { buildPanels } from './page/panels.js';
import { languageSwitch } from './page/language.js';
import { embedChrome } from './page/embed.js';

// A trap in the core is told in the reader's language; the panic's own message stays the core's.
// `?wasm=simd128` in the page's address (a debug switch, outside the link format) makes the worker
// load the plain simd128 core even where relaxed-simd runs (worker.js).
const workerUrl = new URL('./worker.js', import.meta.url);
// boot.js (index.html's async script) has run before the worker is taken over: on a main thread that
// a post's figures share, it could otherwise run after this module, and a figure then started a core
// of its own beside the post's (and boot.js a second worker that waited for turns). The same module,
// evaluated once; a page whose boot.js did not load starts its worker here, as before.
await import('./boot.js').catch(() => {});
// How long an embed's worker waits with nothing to do before it is let go.
const EMBED_IDLE_MS = 4000;
const wasmBuild = new URLSearchParams(location.search).get('wasm');
if (wasmBuild) workerUrl.searchParams.set('wasm', wasmBuild);
const worker = workerClient(workerUrl, {
  trapped: ({ panic, error }) => (panic ? t('app.trappedPanic', { why: panic }) : t('app.trappedTrap', { why: error })),
});

const { reader, opened, embed, embedTheme } = await readOpeningLink(KNOWN);
// A post's figures share one core (worker_client.js shareCores, www/turns.js): the first figure's
// worker computes for all of them, with the built-in model's weights held once. A figure whose core
// serves no other lets it go while the reader only reads it: its drawing and its tensors stay; a
// click that needs the core starts it again.
if (embed) {
  worker.releaseWhenIdle(EMBED_IDLE_MS);
  worker.shareCores();
} else worker.shareCores(false);

// The shareable fields, plus what the page derives from them: the tokens and the padding mask
// (a link carries the padded positions, `pad`, which open() turns into the mask).
const state = {
  ...Object.fromEntries(Object.entries(opened.state).filter(([key]) => key !== 'pad')),
  tokens: { ids: [], pieces: [], bytes: [], chars: [], split: [], special: [] },
  mask: [],
};

// What the views see of the page.
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
  set: (patch) => page.address.set(patch),
  go: (view) => page.address.go(view),
  navigate: (patch) => page.address.navigate(patch),
  // A view's requests: dropped (superseded) when the input changes before they are answered (runs.js).
  tensors: (names, override) => page.runs.ofThisInput(page.runs.tensors(names, override)),
  call: (type, body, options) => page.runs.ofThisInput(worker.call(type, body, options)),
  // A text as the page's input is tokenized (BOS first or not; `bos` false: as a link turning it off would).
  tokenize: (text, bos = page.runs.withBos()) => worker.call('tokenize', { text, bos }),
  withBos: () => page.runs.withBos(),
  args: () => page.runs.args(),
  // Whether the state pads any token, its tokens in or not (a link's padding waits for them).
  padded: () => state.mask.includes(0) || (page.keeping?.pad?.length ?? 0) > 0,
  // Stops what the worker is doing (a view's own long request, as the status's Cancel does).
  cancel: () => page.life.cancel(),
  redraw: () => page.screen.refresh(), // a view's own change (a lesson's edited cell): redrawn as any other, so settled() waits for it
};

const page = {
  // Fixed for the page's life.
  worker,
  reader, // the reader's language (the browser's), what a link that names none opens in
  opened, // the opening link, decoded: {state, problems, embed, theme}
  known: KNOWN, // the ids a link may name; state.js checks every field of a link against them
  embed, // embed mode ("&embed=1") lasts as long as the page
  embedTheme, // an embed's link may fix its theme (the post's page is light or dark); the reader's own pick is left alone
  state,
  app,
  dom: {
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
  },
  cache: tensorCache(worker, (progress) => page.runs.onProgress(progress)),
  ui: null, // the panels (panels.js); language.js replaces the config and share panels
  announce: null, // tells the scripting API (api.js) of each change of the shareable state

  // What changes while the page is open, each written where its comment says.
  current: null, // {id, root, instance}: the mounted view (screen.js)
  rendered: Promise.resolve(), // the mounted view's latest update (screen.js), which settled() waits for
  headOpen: !NAMES_HEAD.test(location.hash), // the first run picks the clearest head (runs.js); any head chosen ends it
  // The padded positions and selected tokens last asked for (runs.js): a tokenization under way fits
  // the latest (a chip padded while the sentence was still being tokenized), not the ones it began with.
  keeping: null,
  cannotRun: false, // the model panel says a model just loaded cannot run the text (model_life.js; a run that succeeds ends it)
  lastAsked: null, // the model most recently asked for, while it is built or loaded (model_life.js)
  unkept: null, // the reader's checkpoint, loaded and not yet kept: kept after its first run that succeeds (model_life.js, runs.js)
  smollm2: { onSite: null, kept: null }, // whether this site has SmolLM2 (null: cannot tell), and its meta where this browser keeps it
  typing: 0, // the timer of text typed and not yet in the state, or 0 (typed.js)
  linkBanner: null, // the banner an earlier link raised (open_state.js); an address that opens as written hides it
  languageNotice: null, // the banner that said a language could not be loaded (open_state.js), taken down once it is
  navigatedTo: null, // the address navigate() last set (address.js)
  seenHash: location.hash, // the last address the page has seen: its hashchange, or the link it wrote (address.js)
  opening: 0, // hashchanges being opened (address.js)
  published: '', // the shareable state last published, as JSON (address.js)
  rewrite: false, // the address must be written back whatever the state (address.js, after a hashchange)
};

page.runs = runs(page);
page.life = modelLife(page);
page.opener = opener(page);
page.address = address(page);
page.screen = screen(page);
page.typed = typed(page);
page.language = languageSwitch(page);
page.embedChrome = embedChrome(page);
page.ui = buildPanels(page);

// The scripting API (api.js: getState, setState, link, 'statechange'), and hooks for tests and the
// curious: the views' ids, the worker's tensors of the current run, and settled().
const shared = () => page.opener.shared();
const { api, announce } = scriptingApi({ getState: shared, setState: (partial) => page.address.setState(partial), link: () => linkTo(shared()), embed });
page.announce = announce;
window.attnscope = Object.assign(api, {
  app,
  views: Object.keys(VIEWS),
  tensor: async (name, override = {}) => (await page.runs.tensors([name], override)).get(name).data, // override: another run's arguments (the induction probe's)
  call: app.call,
  settled: () => page.address.settled(),
  coreLive: () => worker.live(), // false while an embed's idle worker is let go (releaseWhenIdle), or it uses another figure's core
});

start(page);

// attnscope's page: holds the state (text, tokens, padding mask, model config, layer, head, step…),
// talks to the worker that owns the model, and shows one view at a time, chosen by #view=… in the
// URL. Views are modules with mount(root, app) → {update(), destroy()}; they read app.state and
// ask app.tensors(names) for the current run's tensors, which arrive as Float32Arrays.

import { workerClient } from './worker_client.js';
import { el } from './views/dom.js';
import { tokenChips } from './views/token_chips.js';
import { configPanel } from './views/config_panel.js';
import { t } from './strings.js';
import * as stepper from './views/stepper.js';
import * as attentionMap from './views/attention_map.js';
import * as headGrid from './views/head_grid.js';
import * as masks from './views/masks.js';
import * as tokenLines from './views/token_lines.js';

const VIEWS = { stepper, attention: attentionMap, grid: headGrid, masks, lines: tokenLines };

const DEFAULT_CONFIG = { hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 6400, rope_theta: 1e6 };
const DEFAULT_TEXT = 'The cat sat on the mat because it was tired.';
const TYPING_PAUSE_MS = 200;

const worker = workerClient(new URL('./worker.js', import.meta.url));

const state = {
  view: 'stepper',
  text: DEFAULT_TEXT,
  config: { ...DEFAULT_CONFIG },
  seed: 42,
  causal: true,
  tokens: { ids: [], pieces: [] },
  mask: [],
  layer: 0,
  head: 0,
  step: 'embed',
  stage: 'probs',
  query: null,
  allHeads: false,
};

// phase: 'loading' | 'building' | 'ready' | 'empty' | 'error'
const app = {
  state,
  phase: 'loading',
  busy: false, // a run is in flight
  error: null,
  model: null, // the resolved config from the core
  run: null, // {entries, backend, ms} of the current run
  set,
  go,
  tensors,
};

const dom = {
  nav: document.getElementById('nav'),
  status: document.getElementById('status'),
  text: document.getElementById('text'),
  chips: document.getElementById('chips'),
  config: document.getElementById('config'),
  view: document.getElementById('view'),
};

let current = null; // {id, instance}
let rendered = Promise.resolve(); // the active view's latest update
let runSeq = 0;
let tokenizeSeq = 0;
let cache = new Map();

function runArgs(override = {}) {
  const mask = state.mask.every((m) => m === 1) ? null : state.mask;
  return { ids: state.tokens.ids, attention_mask: mask, prefix_len: 0, causal: state.causal, layers: null, ...override };
}

// Tensors of the current run (or of a variant of it: override merges into the run's arguments).
// Resolves to a Map name → {data: Float32Array, shape}. Requests are cached per run and name.
async function tensors(names, override = {}) {
  const args = runArgs(override);
  const key = JSON.stringify(args);
  const missing = names.filter((n) => !cache.has(`${key}|${n}`));
  if (missing.length) {
    const request = worker.call('tensors', { args, names: missing });
    missing.forEach((n, i) => {
      const entry = request.then(({ tensors: list }) => list[i]);
      entry.catch(() => cache.delete(`${key}|${n}`));
      cache.set(`${key}|${n}`, entry);
    });
  }
  const list = await Promise.all(names.map((n) => cache.get(`${key}|${n}`)));
  return new Map(list.map((entry) => [entry.name, entry]));
}

function set(patch) {
  Object.assign(state, patch);
  refresh();
}

function go(view) {
  location.hash = `view=${view}`;
}

function routeFromHash() {
  const view = new URLSearchParams(location.hash.slice(1)).get('view');
  state.view = view in VIEWS ? view : 'stepper';
}

// The tabs are built once, so keyboard focus stays on a tab while views change.
function renderNav() {
  if (!dom.nav.firstChild) dom.nav.append(...Object.keys(VIEWS).map((id) => el('a', { href: `#view=${id}`, className: 'tab', dataset: { view: id } }, t(`view.${id}`))));
  for (const tab of dom.nav.children) {
    const active = tab.dataset.view === state.view;
    tab.classList.toggle('active', active);
    if (active) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
}

function renderStatus() {
  dom.status.textContent = app.busy
    ? t('app.running')
    : app.phase === 'ready' && app.run
      ? t('app.status', { backend: app.run.backend, ms: app.run.ms.toFixed(1), tokens: state.tokens.ids.length })
      : app.phase === 'building'
        ? t('app.building')
        : '';
}

function message(kind, text, detail = null) {
  return el('div', { className: `message message-${kind}`, attrs: { role: kind === 'error' ? 'alert' : 'status' } }, kind === 'loading' && el('span', { className: 'spinner', attrs: { 'aria-hidden': 'true' } }), el('div', {}, text, detail && el('pre', {}, detail)));
}

// Shows the active view, or the loading / empty / error state in its place.
function refresh() {
  renderNav();
  renderStatus();
  if (app.phase !== 'ready') {
    if (current) current.instance.destroy();
    current = null;
    const box =
      app.phase === 'error'
        ? message('error', t('app.errorTitle'), app.error)
        : app.phase === 'empty'
          ? message('empty', t('app.empty'))
          : message('loading', t(app.phase === 'building' ? 'app.building' : 'app.loading'));
    dom.view.replaceChildren(box);
    dom.view.setAttribute('aria-busy', String(app.phase === 'loading' || app.phase === 'building'));
    return;
  }
  dom.view.setAttribute('aria-busy', 'false');
  if (current?.id !== state.view) {
    if (current) current.instance.destroy();
    dom.view.replaceChildren();
    const root = el('div', { className: `view-root view-${state.view}` });
    dom.view.append(root);
    current = { id: state.view, instance: VIEWS[state.view].mount(root, app) };
  }
  rendered = current.instance.update().catch((err) => {
    app.phase = 'error';
    app.error = err.message;
    refresh();
  });
}

async function runModel() {
  const seq = ++runSeq;
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
    const result = await worker.call('run', { args: runArgs() });
    if (seq !== runSeq) return;
    cache = new Map();
    app.run = result;
    app.phase = 'ready';
    app.error = null;
  } catch (err) {
    if (seq !== runSeq) return;
    app.phase = 'error';
    app.error = err.message;
  }
  app.busy = false;
  refresh();
}

async function tokenize() {
  const seq = ++tokenizeSeq;
  app.busy = true;
  renderStatus();
  try {
    const tokens = await worker.call('tokenize', { text: state.text });
    if (seq !== tokenizeSeq) return;
    state.tokens = tokens;
    state.mask = tokens.ids.map(() => 1);
    state.query = null;
    chips.update(state.tokens, state.mask);
    await runModel();
  } catch (err) {
    if (seq !== tokenizeSeq) return;
    app.phase = 'error';
    app.busy = false;
    app.error = err.message;
    refresh();
  }
}

// Builds a random model in the worker; rejects (leaving the old model in place) if the core refuses.
async function buildModel(config, seed) {
  const previous = app.phase;
  app.phase = 'building';
  refresh();
  try {
    const { config: resolved } = await worker.call('session', { config, seed });
    Object.assign(state, { config, seed });
    app.model = resolved;
    state.layer = Math.min(state.layer, resolved.num_hidden_layers - 1);
    state.head = Math.min(state.head, resolved.num_attention_heads - 1);
    panel.showResolved(resolved);
    cache = new Map();
  } catch (err) {
    app.phase = app.model ? previous : 'error';
    app.error = app.model ? app.error : err.message;
    refresh();
    throw err;
  }
}

const chips = tokenChips((i) => {
  state.mask = state.mask.map((m, j) => (j === i ? 1 - m : m));
  chips.update(state.tokens, state.mask);
  runModel();
});

const panel = configPanel(state, {
  onApply: async (config, seed) => {
    await buildModel(config, seed);
    await tokenize();
  },
  onCausal: (causal) => {
    state.causal = causal;
    runModel();
  },
});

// Static text in index.html is marked data-i18n (text) or data-i18n-label (aria-label).
function fillStaticText() {
  for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll('[data-i18n-label]')) node.setAttribute('aria-label', t(node.dataset.i18nLabel));
}

function wireInput() {
  dom.text.value = state.text;
  dom.chips.replaceWith(chips.node);
  dom.config.replaceWith(panel.node);
  let timer = 0;
  dom.text.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      state.text = dom.text.value;
      tokenize();
    }, TYPING_PAUSE_MS);
  });
}

// A minimal hook for tests and the curious: the worker's tensors of the current run, and a promise
// that resolves once no run is in flight and the active view has drawn.
window.attnscope = {
  app,
  tensor: async (name) => (await tensors([name])).get(name).data,
  async settled() {
    while (app.busy || app.phase === 'loading' || app.phase === 'building') await new Promise((r) => setTimeout(r, 20));
    await rendered;
  },
};

routeFromHash();
addEventListener('hashchange', () => {
  routeFromHash();
  refresh();
});
fillStaticText();
wireInput();
refresh();
buildModel(state.config, state.seed).then(tokenize, () => {});

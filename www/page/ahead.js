// The built-in model's first numbers, computed ahead. A first visit on a slow link waits seconds for
// the 6.6 MB of weights and the core; the overview's numbers for each language's opening sentence
// (its tokens, the next token's top candidates, the clearest head: views/overview.js
// overviewNumbers) are the same on every such visit, so tools/ahead.mjs has the core compute them
// in Chromium, with that same function, into models/builtin/ahead.json (2 KB), and the overview
// draws them from there while the model loads. The run then draws its own, the same numbers
// (tests/e2e/ahead.test.mjs holds the file to the core's, and to the model's file by its hash).
//
// Used only where the page is about to run exactly that: the built-in model still loading as the
// first model, the language's opening sentence, BOS on, causal, nothing padded or knocked out. A
// file that cannot be read, or that names another model, is as if there were none.
import { BUILTIN_URL, early } from '../model_source.js';

const FILE = new URL('ahead.json', BUILTIN_URL).href;

let file = null; // {model: {sha256}, numbers: {[lang]: numbers}}, once read
let read = null; // its promise

function load() {
  read ??= (early(FILE) ?? fetch(FILE, { mode: 'cors', credentials: 'omit' }))
    .then((response) => (response.ok ? response.json() : null))
    .then((found) => (file = found && typeof found.numbers === 'object' ? found : { numbers: {} }))
    .catch(() => (file = { numbers: {} }));
  return read;
}

// Whether the page is about to run what the file holds for this state.
function matches(app, numbers) {
  const { state } = app;
  return (
    app.model === null &&
    app.preview?.model?.kind === 'builtin' &&
    state.model.kind === 'builtin' &&
    numbers?.text === state.text &&
    state.bos === true &&
    state.causal === true &&
    state.ablate.length === 0 &&
    !app.padded()
  );
}

// The numbers computed ahead for the page's state (with `ahead: true`), or null: none, or not read yet.
export function aheadNumbers(app) {
  load();
  const numbers = file?.numbers?.[app.state.lang];
  return matches(app, numbers) ? { ...numbers, mask: null, ahead: true } : null;
}

// Resolves, once the file is read, to whether it holds numbers for the page's state.
export async function aheadArrived(app) {
  await load();
  return aheadNumbers(app) !== null;
}

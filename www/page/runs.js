// The run of the current state: its text tokenized (tokenize), the forward pass in the worker (run),
// its arguments (args) and its tensors, which views ask for by name (tensor_cache.js keeps them by the
// run's arguments). A newer run or tokenization drops the one before (latest.js).

import { clearestHeads, headRoles } from '../parts/head_roles.js';
import { fitToTokens } from '../state.js';
import { latest } from './latest.js';

// Where the opening link names no head (no link, or a bare "#view=attention"), the page opens the
// per-head views on the built-in model's clearest head of the first run (head_roles.js), the one the
// overview's route names, rather than on layer 0, head 0, which in the trained model rests on the
// first token. Any layer or head chosen (a control, a link, a lesson's door) ends this (page.headOpen).
export const NAMES_HEAD = /(^|[#&])(s\d+\.|layer=|head=)/;

export function runs(page) {
  const { state, app, worker, cache } = page;
  const running = latest();
  const tokenizing = latest();

  // Whether the input starts with the model's BOS token: the reader's choice (state.bos, on by
  // default), for a model whose config names a bos_token_id. BOS is then simply position 0 of the ids
  // every run sees; padding marks tokens of the input, BOS included (MiniMind's batch inference puts
  // left padding before BOS).
  function withBos() {
    return state.bos && app.model?.bos_token_id != null;
  }

  // Knocked-out heads go into every run (parts/ablation.js), so every view shows the ablated model.
  function args(override = {}) {
    const mask = state.mask.every((m) => m === 1) ? null : state.mask;
    const ablated = state.ablate.length ? { ablate: state.ablate } : {};
    return { ids: state.tokens.ids, attention_mask: mask, prefix_len: 0, causal: state.causal, layers: null, backend: state.backend, ...ablated, ...override };
  }

  // Tensors of the current run (or of a variant of it: override merges into the run's arguments).
  // Resolves to a Map name → {data: Float32Array, shape}.
  function tensors(names, override = {}) {
    return cache.get(args(override), names);
  }

  // A view's request (app.tensors, app.call), rejected as superseded when the input changes before
  // it is answered (another sentence tokenized, a token padded): its numbers would be the old
  // input's, drawn over the new input's tokens. screen.js drops the update that asked; the run of
  // the new input draws the view again.
  const inputNow = () => `${state.tokens.ids}|${state.mask}`;
  function ofThisInput(request) {
    const asked = inputNow();
    return request.then((result) => {
      if (inputNow() !== asked) throw Object.assign(new Error('The input changed before this answer came.'), { superseded: true });
      return result;
    });
  }

  async function openClearestHead() {
    page.headOpen = false;
    if (!['builtin', 'smollm2'].includes(app.source?.kind)) return;
    try {
      const [best] = clearestHeads(await headRoles(app), 1);
      if (best) Object.assign(state, { layer: best.l, head: best.h });
    } catch {
      // No roles, no choice: the page stays on layer 0, head 0.
    }
  }

  // How far the worker's current run has come ({done, total} layers), shown with a Cancel button.
  function onProgress(progress) {
    app.progress = progress;
    page.screen.status();
  }

  async function run() {
    const signal = running.start();
    if (state.tokens.ids.length === 0) {
      app.phase = 'empty';
      app.run = null;
      app.busy = false;
      page.screen.refresh();
      return;
    }
    app.busy = true;
    page.screen.status();
    try {
      const result = await worker.call('run', { args: args() }, { onProgress });
      if (signal.aborted) return;
      cache.clear();
      if (page.headOpen) await openClearestHead();
      if (signal.aborted) return;
      if (page.unkept) {
        page.life.keep(page.unkept);
        page.unkept = null;
      }
      app.run = result;
      page.ui.backend.ran(result);
      app.phase = 'ready';
      app.error = null;
      if (page.cannotRun) {
        page.cannotRun = false; // the model panel's "cannot run this text" is over once a text runs
        page.ui.models.set({ note: null });
      }
    } catch (err) {
      if (signal.aborted) return;
      app.phase = err.cancelled ? 'cancelled' : 'error';
      app.error = err;
    }
    app.busy = false;
    app.progress = null;
    page.screen.refresh();
  }

  // The padded positions and selected tokens of a state, fitted to the current tokens.
  function fitTokens(keep) {
    page.keeping = keep;
    const fit = fitToTokens(keep, state.tokens.ids.length);
    state.mask = state.tokens.ids.map((_, i) => (fit.pad.includes(i) ? 0 : 1));
    state.query = fit.query;
    state.key = fit.key;
    page.ui.chips.update(state.tokens, state.mask);
  }

  // New tokens for state.text; keep: the padded positions and selected tokens to carry over.
  async function tokenize(keep = { pad: [], query: null, key: null }) {
    const signal = tokenizing.start();
    page.keeping = keep;
    app.busy = true;
    page.screen.status();
    try {
      const tokens = await app.tokenize(state.text);
      if (signal.aborted) return;
      state.tokens = tokens;
      fitTokens(page.keeping);
      await run();
    } catch (err) {
      if (signal.aborted) return;
      app.phase = 'error';
      app.busy = false;
      app.error = err;
      page.screen.refresh();
    }
  }

  return { withBos, args, tensors, ofThisInput, onProgress, run, fitTokens, tokenize };
}

// The model in the worker and its life: a random model built (build), a checkpoint read and loaded
// (load), one chosen in the model panel (use), the reader's checkpoint kept in this browser (keep),
// and the worker replaced to stop a long run (cancel). Until a new model is in place, and if it
// fails, the previous one stays.

import { t } from '../strings.js';
import { DEFAULTS, fitToModel } from '../state.js';
import { sourceOf } from '../panels/model_panel.js';
import * as source from '../model_source.js';
import { latest } from './latest.js';

export function modelLife(page) {
  const { state, app, worker, cache, dom } = page;
  // A checkpoint still being read for an older choice is dropped.
  const loads = latest();

  // The model most recently asked for (page.lastAsked): a build or a load still in flight has not
  // made it state.model yet, and a second choice made meanwhile (Random, then Built-in at once) is
  // compared with it, not dropped as the model already there. null once the one asked for failed.
  const asked = () => page.lastAsked ?? state.model;

  // Builds a random model in the worker; rejects (leaving the old model in place) if the core refuses.
  // A checkpoint still being read is dropped.
  async function build(config, seed) {
    const previous = app.phase;
    const model = (page.lastAsked = { kind: 'random' });
    loads.abort();
    app.loading = false;
    app.phase = 'building';
    page.ui.models.set({ progress: null, error: null });
    page.screen.refresh();
    try {
      const { config: resolved } = await worker.call('session', { config, seed });
      Object.assign(state, { config, seed });
      adopt(resolved, { kind: 'random' }, { kind: 'random', seed, bytes: resolved.weight_count * 4, dtype: 'F32', weight_count: resolved.weight_count });
    } catch (err) {
      if (page.lastAsked === model) page.lastAsked = null;
      app.phase = app.model ? previous : 'error';
      app.error = app.model ? app.error : err;
      page.screen.refresh();
      throw err;
    }
  }

  // Reads a checkpoint (built in, a folder URL, the reader's files, or the one kept in this browser;
  // model_source.js) with its progress in the model panel, and makes it the model once the core has
  // loaded it; until then, and if it fails, the previous model stays. The reader's own checkpoint is
  // kept in this browser for the next visit.
  async function load(model, files = null) {
    const signal = loads.start();
    const wanted = () => !signal.aborted;
    const { models } = page.ui;
    page.lastAsked = model;
    app.loading = true;
    models.set({ source: sourceOf(model), loading: model, progress: { loaded: 0, total: null }, error: null, note: null });
    page.screen.status();
    try {
      const progress = (loaded, total, file) => {
        models.set({ progress: { loaded, total, file } });
        page.screen.status();
      };
      // With no model yet, the views that can draw the model's shape from its config do so meanwhile.
      const described = (config) => {
        if (app.model) return;
        app.preview = { config, model };
        page.screen.refresh();
      };
      const { config: resolved, checkpoint, restored } = await source.load(model, { call: worker.call, files, progress, wanted, described, kept: worker.kept, shared: worker.sharesModels() });
      adopt(resolved, model, { ...checkpoint.meta, restored });
      // Kept once it has run: a checkpoint that loads but cannot run (weights that overflow f32)
      // would otherwise come back broken on every visit.
      page.unkept = !restored && model.kind !== 'builtin' ? checkpoint : null;
      if (restored && model.kind === 'smollm2') models.set({ smollm2: (page.smollm2 = { ...page.smollm2, kept: checkpoint.meta }) });
    } catch (err) {
      if (page.lastAsked === model) page.lastAsked = null;
      if (wanted()) models.set({ progress: null, error: err });
      throw err;
    } finally {
      if (wanted()) {
        app.loading = false;
        app.preview = null;
        page.screen.status(); // the top bar's "Your own · 6.29 MiB / 6.29 MiB" goes with the load, refused or not
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
    page.ui.config.showResolved(resolved);
    showBos();
    page.ui.models.set({ loaded: meta, progress: null, source: sourceOf(model) });
    cache.clear();
    if (ffnChanged && page.current) {
      page.current.instance.destroy();
      page.current = null;
    }
  }

  // The BOS switch for the model now loaded: offered where its config names a BOS token; greyed
  // otherwise, saying why (a random model, a GGUF file that names none it was trained with, a config.json).
  function showBos() {
    page.ui.bos.show({ offered: app.model?.bos_token_id != null, on: state.bos, random: state.model.kind === 'random', gguf: app.source?.format === 'gguf' });
  }

  // Keeps the reader's checkpoint (or SmolLM2) in this browser for the next visit; a refusal (no space) is noted.
  function keep(checkpoint) {
    const { models } = page.ui;
    source.keep(checkpoint).then(
      (slot) => {
        if (slot === 'smollm2') models.set({ smollm2: (page.smollm2 = { ...page.smollm2, kept: checkpoint.meta }) });
        else models.set({ kept: checkpoint.meta });
      },
      (err) => models.set({ note: t('model.notKept', { reason: err?.message ?? String(err) }) }),
    );
  }

  // A model chosen in the model panel; the text is tokenized again, since its tokenizer may differ.
  async function use(model, files = null) {
    const { models } = page.ui;
    if (!files && JSON.stringify(model) === JSON.stringify(asked())) return;
    try {
      if (model.kind === 'random') await build(state.config, state.seed);
      else await load(model, files);
      await page.runs.tokenize();
      // A model that loads but cannot run this text (too short a context, weights that overflow f32):
      // the panel where the reader chose it says so, and the view's message is brought into sight.
      if (app.phase === 'error' && state.model === model) {
        page.cannotRun = true;
        models.set({ note: t('model.loadedCannotRun') });
        dom.view.querySelector('.message-error')?.scrollIntoView({ block: 'center' });
      }
    } catch (err) {
      if (model.kind === 'random' && !err.superseded) models.set({ error: err });
      if (err.superseded) return;
      // Chosen while the page's first model loaded, which it replaced: the page takes the default
      // model, as for a link it cannot open, rather than wait on a model that will not come; the
      // panel still says what went wrong.
      if (!app.model) {
        await build(DEFAULTS.config, DEFAULTS.seed).catch(() => {});
        models.set({ error: err });
        if (app.model) await page.runs.tokenize();
      }
      models.revealError();
    }
  }

  // Stops a long run: the worker is replaced and the model rebuilt in the new one (worker_client.js).
  async function cancel() {
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
    page.screen.refresh();
  }

  return { asked, build, load, showBos, keep, use, cancel };
}

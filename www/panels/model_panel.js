// The model panel's upper half: which model the page runs (built in, SmolLM2, random weights, or the
// reader's own checkpoint), what is loaded now (name, source, size, dtype), and the controls of the
// reader's own: files from a picker (a folder too) or dropped anywhere on the page, a folder or .gguf
// URL, a Hugging Face Hub repo id (a repo of GGUF files lists them to choose from), a progress bar in
// bytes, and the model kept in this browser with a button to forget it (SmolLM2 has its own). The
// random model's knobs stay in config_panel.js, shown below this only when Random is chosen.
// This module shows and asks; page/model_life.js loads (through model_source.js).

import { el } from '../parts/dom.js';
import { bytes, count, spaced } from '../parts/format.js';
import { HUB_EXAMPLE, clipped, droppedFiles } from '../model_source.js';
import { t } from '../strings.js';
import { errorText } from '../page/error_text.js';

const SOURCES = ['builtin', 'smollm2', 'random', 'own'];

/** What a loaded model is called on the page: its meta's name, or the page's own for random, built-in and SmolLM2 weights. */
export function modelName(meta) {
  return { random: t('model.randomName'), builtin: t('model.builtinName'), smollm2: t('model.smollm2Name') }[meta.kind] ?? meta.name;
}

// The panel's source segment a model belongs to.
export function sourceOf(model) {
  return { random: 'random', builtin: 'builtin', smollm2: 'smollm2' }[model.kind] ?? 'own';
}

// handlers: onSource('builtin' | 'smollm2' | 'random'), onFiles(files), onUrl(url), onHub(text),
// onKept(), onForget(), onForgetSmollm2().
export function modelPanel({ onSource, onFiles, onUrl, onHub, onKept, onForget, onForgetSmollm2 }) {
  // What is shown: the chosen source, the loaded model's meta, the kept model's meta, SmolLM2
  // ({onSite: whether the site has it, null where that cannot be told; kept: its kept meta or null}),
  // the progress of a load ({loaded, total, file} in bytes, total null when unknown), the last
  // error, a note on keeping. `loading`: the model being read while progress runs ({kind, url?}).
  const ui = { source: 'random', builtin: false, smollm2: { onSite: null, kept: null }, loaded: null, kept: null, loading: null, progress: null, error: null, note: null };

  const segments = Object.fromEntries(
    SOURCES.map((kind) => [kind, el('button', { type: 'button', className: 'segment', dataset: { source: kind }, on: { click: () => choose(kind) } })]),
  );
  const info = el('p', { className: 'model-info', attrs: { 'aria-live': 'polite' } });
  const builtinNote = el('p', { className: 'config-note model-builtin' });
  const smollm2Note = el('p', { className: 'config-note model-smollm2' });
  const smollm2Forget = el('button', { type: 'button', className: 'button button-quiet smollm2-forget', on: { click: () => onForgetSmollm2() } });
  const smollm2KeptText = el('span', {});
  const smollm2Kept = el('p', { className: 'model-smollm2-kept' }, smollm2KeptText, ' ', smollm2Forget);

  const pick = (extra) => el('input', { type: 'file', multiple: true, className: 'model-file-input', on: { change: (e) => picked(e.target) }, ...extra });
  const filesInput = pick({ accept: '.json,.safetensors,.gguf', id: 'model-files' });
  const folderInput = pick({ id: 'model-folder', webkitdirectory: true });
  const filesLabel = el('label', { htmlFor: filesInput.id, className: 'button' });
  const folderLabel = el('label', { htmlFor: folderInput.id, className: 'button' });
  const dropText = el('p', { className: 'drop-text' });
  const drop = el('div', { className: 'drop-zone' }, dropText, el('div', { className: 'drop-buttons' }, filesInput, filesLabel, folderInput, folderLabel));

  // A one-field form: a label, the field and its Load button; `submit` hears the trimmed value.
  // An empty field says what it wants (its placeholder's example) rather than doing nothing.
  const fieldForm = ({ className, input, submit, empty }) => {
    const label = el('label', { htmlFor: input.id, className: 'field-label' });
    const button = el('button', { type: 'submit', className: 'button' });
    const said = el('p', { className: 'hint field-empty', hidden: true, attrs: { role: 'status' } });
    input.addEventListener('input', () => {
      said.hidden = true;
      input.removeAttribute('aria-invalid');
    });
    const onSubmit = (e) => {
      e.preventDefault();
      const value = input.value.trim();
      said.hidden = value !== '';
      if (value) {
        input.removeAttribute('aria-invalid');
        return submit(value);
      }
      said.textContent = t(empty, { example: input.placeholder });
      input.setAttribute('aria-invalid', 'true');
      input.focus();
    };
    // noValidate: a folder of the same site may be given relative to the page (models/mine/).
    const form = el('form', { className, noValidate: true, on: { submit: onSubmit } }, label, el('div', { className: 'model-url-row' }, input, button), said);
    return { form, label, button };
  };
  const urlInput = el('input', { type: 'url', id: 'model-url', name: 'model-url', spellcheck: false, autocomplete: 'url' });
  const { form: urlForm, label: urlLabel, button: urlButton } = fieldForm({ className: 'model-url', input: urlInput, submit: onUrl, empty: 'model.urlEmpty' });
  const hubInput = el('input', { type: 'text', id: 'model-hub', name: 'model-hub', spellcheck: false, autocomplete: 'off' });
  const { form: hubForm, label: hubLabel, button: hubButton } = fieldForm({ className: 'model-hub', input: hubInput, submit: onHub, empty: 'hub.empty' });

  const keptText = el('span', {});
  const keptLoad = el('button', { type: 'button', className: 'button', on: { click: () => onKept() } });
  const forget = el('button', { type: 'button', className: 'button button-quiet model-forget', on: { click: () => onForget() } });
  const keptRow = el('p', { className: 'model-kept' }, keptText, ' ', keptLoad, ' ', forget);
  // The example repo id is longer than the field is wide: it goes under it, whole, not in the placeholder.
  const hubExample = el('p', { className: 'field-note hub-example' });
  const own = el('div', { className: 'model-own' }, drop, urlForm, hubForm, hubExample);

  const bar = el('progress', { className: 'model-progress-bar' });
  const barText = el('span', { className: 'model-progress-text' });
  const progress = el('div', { className: 'model-progress', attrs: { role: 'status' } }, bar, barText);
  const error = el('div', { className: 'model-error', attrs: { role: 'alert' } });
  const note = el('p', { className: 'config-note model-note' });

  const node = el(
    'div',
    { className: 'model-panel' },
    el('div', { className: 'segmented model-sources', attrs: { role: 'group' } }, Object.values(segments)),
    info,
    builtinNote,
    smollm2Note,
    smollm2Kept,
    own,
    keptRow,
    progress,
    error,
    note,
  );

  function choose(kind) {
    ui.source = kind;
    ui.error = null;
    update();
    if (kind !== 'own') onSource(kind);
  }

  function picked(input) {
    const files = Array.from(input.files);
    input.value = '';
    if (files.length) onFiles(files);
  }

  function describe(m) {
    const source =
      m.kind === 'random'
        ? t('model.sourceRandom', { seed: m.seed })
        : m.kind === 'builtin'
          ? null // its name says it is the built-in model
          : m.kind === 'smollm2'
            ? t('model.smollm2Source')
            : m.kind === 'url'
              ? t('model.sourceUrl', { url: clipped(m.url) })
              : m.kind === 'hub'
                ? t('hub.source', { repo: m.file ? `${m.repo}:${m.file}` : m.repo })
                : t('model.sourceFiles', { files: m.files.join(', ') });
    const parts = [source, m.bytes && bytes(m.bytes), m.dtype, t('model.weights', { count: count(m.weight_count) })];
    return [el('strong', { className: 'model-name' }, modelName(m)), ' · ', parts.filter(Boolean).join(' · '), m.restored ? ` · ${t('model.restored')}` : ''];
  }

  // The model being read and how far, in bytes: "Built-in · 2.1 MiB / 6.29 MiB"; null when none is.
  function loadingText() {
    const p = ui.progress;
    if (!p || !ui.loading) return null;
    const m = ui.loading;
    const name = { url: m.url, hub: m.file ? `${m.repo}:${m.file}` : m.repo, smollm2: t('model.smollm2Name') }[m.kind] ?? t(`model.source.${sourceOf(m)}`);
    const amount = p.total ? t('model.loadingBytes', { loaded: bytes(p.loaded), total: bytes(p.total) }) : p.loaded ? bytes(p.loaded) : '…';
    return `${name} · ${amount}`;
  }

  function update() {
    segments.builtin.hidden = !ui.builtin;
    const small = ui.smollm2;
    for (const [kind, button] of Object.entries(segments)) {
      button.textContent = t(`model.source.${kind}`);
      button.setAttribute('aria-pressed', String(kind === ui.source));
    }
    node.querySelector('.model-sources').setAttribute('aria-label', t('model.sourcesLabel'));
    document.documentElement.dataset.modelSource = ui.source;
    const reading = loadingText();
    info.replaceChildren(...(reading ? [spaced(t('model.loading')), el('strong', { className: 'model-name' }, reading)] : ui.loaded ? [spaced(t('model.loaded')), ...describe(ui.loaded)] : [t('model.none')]));
    builtinNote.textContent = t('model.builtinNote');
    builtinNote.hidden = ui.source !== 'builtin';
    // SmolLM2 said for what it is; a site built without it (and no copy kept here) says so before a click.
    const missing = small.onSite === false && !small.kept;
    smollm2Note.textContent = missing ? `${t('model.smollm2Note')} ${t('smollm2.missing')}` : t('model.smollm2Note');
    smollm2Note.hidden = ui.source !== 'smollm2';
    const smollm2Loaded = ui.loaded?.kind === 'smollm2';
    smollm2Kept.hidden = !small.kept || ui.source !== 'smollm2';
    if (small.kept) smollm2KeptText.textContent = t(smollm2Loaded ? 'model.smollm2Kept' : 'model.smollm2KeptIdle', { size: bytes(small.kept.bytes) });
    smollm2Forget.textContent = t('model.forget');
    own.hidden = ui.source !== 'own';
    dropText.textContent = t('model.drop');
    filesLabel.textContent = t('model.chooseFiles');
    folderLabel.textContent = t('model.chooseFolder');
    urlLabel.textContent = t('model.urlLabel');
    urlInput.placeholder = t('model.urlPlaceholder');
    urlButton.textContent = t('model.urlLoad');
    hubLabel.textContent = t('hub.label');
    hubInput.placeholder = t('hub.placeholder');
    hubExample.textContent = t('hub.example', { example: HUB_EXAMPLE });
    hubButton.textContent = t('model.urlLoad');

    const k = ui.kept;
    const keptIsLoaded = k && ui.loaded && ui.loaded.kind === k.kind && ui.loaded.url === k.url && ui.loaded.name === k.name;
    keptRow.hidden = !k || (ui.source !== 'own' && !keptIsLoaded);
    if (k) keptText.textContent = t(keptIsLoaded ? 'model.keptLoaded' : 'model.kept', { name: k.name, size: bytes(k.bytes) });
    keptLoad.hidden = Boolean(keptIsLoaded);
    keptLoad.textContent = t('model.keptLoad');
    forget.textContent = t('model.forget');

    const p = ui.progress;
    progress.hidden = !p;
    if (p) {
      if (p.total) {
        bar.max = p.total;
        bar.value = p.loaded;
      } else {
        bar.removeAttribute('value');
      }
      const file = p.file ?? 'model.safetensors';
      barText.textContent = p.total
        ? t('model.progress', { file, loaded: bytes(p.loaded), total: bytes(p.total) })
        : p.loaded
          ? t('model.progressUnknown', { file, loaded: bytes(p.loaded) })
          : t('model.progressStart');
    }
    error.hidden = !ui.error;
    const after = el('p', { className: 'field-note' }, t(ui.loaded ? 'model.previousKept' : 'model.nothingLoaded'));
    error.classList.toggle('model-choice', Boolean(ui.error?.ggufFiles));
    if (ui.error?.ggufFiles) error.replaceChildren(...ggufChoice(ui.error), after);
    else error.replaceChildren(...(ui.error ? [el('p', { className: 'model-error-title' }, t('model.failed')), el('p', {}, errorText(ui.error)), after] : []));
    note.hidden = !ui.note;
    note.textContent = ui.note ?? '';
  }

  // A Hub repo of GGUF files (and no safetensors weights) named without a file: its files, one
  // button each, and the repo:file form that names one in the Hub field.
  function ggufChoice({ repo, ggufFiles }) {
    const choose = (file) => {
      hubInput.value = `${repo}:${file}`;
      onHub(hubInput.value);
    };
    return [
      el('p', { className: 'model-error-title' }, t('hub.ggufFiles', { repo, n: count(ggufFiles.length) })),
      el('ul', { className: 'gguf-files' }, ggufFiles.map((file) => el('li', {}, el('button', { type: 'button', className: 'button gguf-file', on: { click: () => choose(file) } }, file)))),
      el('p', { className: 'field-note' }, t('hub.ggufForm', { example: `${repo}:${ggufFiles[0]}` })),
    ];
  }

  // Files dropped anywhere on the page load as the reader's own model; a dropped folder is read whole.
  const hasFiles = (e) => Array.from(e.dataTransfer?.types ?? []).includes('Files');
  document.addEventListener('dragover', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    document.documentElement.classList.add('dragging-files');
  });
  document.addEventListener('dragleave', (e) => {
    if (e.relatedTarget === null) document.documentElement.classList.remove('dragging-files');
  });
  document.addEventListener('drop', async (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    document.documentElement.classList.remove('dragging-files');
    ui.source = 'own';
    update();
    const files = await droppedFiles(e.dataTransfer);
    if (files.length) onFiles(files);
  });

  update();
  return {
    node,
    // Changes what is shown: any of source, builtin, smollm2, loaded, kept, loading, progress, error, note.
    set(patch) {
      Object.assign(ui, patch);
      update();
    },
    loadingText,
    // Redraws every string (after a change of language).
    relabel: update,
    // Brings a failed load's message into sight: a file dropped anywhere on the page, or chosen
    // here, whose refusal would otherwise wait below the fold.
    revealError() {
      if (!error.hidden) error.scrollIntoView({ block: 'center' });
    },
  };
}

// The share panel: copy a link to what is on screen, copy an <iframe> snippet that embeds it, pick
// which controls the embed hides (TensorFlow Playground's hide flags, kept in the state), and
// export the current view as SVG or as PNG at 2x. Where the clipboard is refused, the text is
// shown selected for copying by hand.

import { el } from '../parts/dom.js';
import { figureSvg, figurePng, download } from '../parts/figure_export.js';
import { EMBED_THEMES, HIDE_FLAGS } from '../state.js';
import { linkTo, embedCode } from '../link.js';
import { t } from '../strings.js';
import { modelName } from './model_panel.js';
import { headList } from '../parts/ablation.js';

const EMBED_WIDTH = 800;
const EMBED_CHROME = 110;
const EMBED_MIN_HEIGHT = 360;
const EMBED_MAX_HEIGHT = 2000;
// The embed is narrower than the full page's view: what wraps (the head grid's maps) grows taller.
const EMBED_NARROWER = 1.1;
const EMBED_GAP = 10; // between the embed's panels (share.css)
// An exported figure's subtitle quotes this much of the sentence at most.
const SENTENCE_CHARS = 60;

// getState(): the shareable state; view(): the view's root element, or null while none is drawn.
export function sharePanel(app, { getState, view }) {
  const note = el('p', { className: 'share-note', attrs: { role: 'status', 'aria-live': 'polite' } });
  const manual = el('textarea', { className: 'share-manual', readOnly: true, rows: 3, hidden: true, attrs: { 'aria-label': t('share.copyManually') } });
  const hideBoxes = HIDE_FLAGS.map((flag) =>
    el('input', { type: 'checkbox', id: `share-hide-${flag}`, value: flag, on: { change: () => app.set({ hide: HIDE_FLAGS.filter((f, i) => hideBoxes[i].checked) }) } }),
  );
  // The embed's theme: the reader's (as the page follows it), or fixed light or dark for a post's page.
  const themeId = `share-theme-${Math.random().toString(36).slice(2, 7)}`;
  const themePick = el('select', { id: themeId, className: 'share-theme' }, ['', ...EMBED_THEMES].map((v) => el('option', { value: v }, t(`share.theme.${v || 'reader'}`))));
  const title = () => `attnscope · ${t(`view.${app.state.view}`)}`;
  // An exported figure's second line says what it shows: the model, the head where the view shows
  // one, the attention map's stage or the pipeline's step, the heads knocked out, and the sentence
  // (its start).
  const subtitle = (root) => {
    const s = app.state;
    const sentence = s.text.length > SENTENCE_CHARS ? `${s.text.slice(0, SENTENCE_CHARS)}…` : s.text;
    return [
      app.source ? modelName(app.source) : null,
      showsOneHead(root) ? t('figure.head', { l: s.layer, h: s.head }) : null,
      s.view === 'attention' ? t(`stage.${s.stage}`) : null,
      s.view === 'stepper' ? t(`step.${s.step}.title`) : null,
      // Every view reads the run with these heads knocked out: the figure says so, as the page's bar does.
      s.ablate.length && s.view !== 'lessons' ? t('figure.knockedOut', { heads: headList(s.ablate) }) : null,
      // A lesson computes its own examples, not the page's sentence.
      sentence && s.view !== 'lessons' ? t('figure.sentence', { text: sentence }) : null,
    ]
      .filter(Boolean)
      .join(' · ');
  };
  // An iframe tall enough for the view as it is drawn now, plus embed mode's top bar and the panels
  // the embed keeps (an embed stacks them under the view, the input without its hints and samples,
  // the model panel folded: share.css), so that the view is not cut to a scrolled box above them.
  const panels = () => {
    const hide = app.state.hide ?? [];
    let height = 0;
    for (const name of ['input', 'config']) {
      const panel = document.querySelector(`[data-hideable="${name}"]`);
      if (!panel || hide.includes(name)) continue;
      // The model panel is folded to its heading.
      const heading = panel.querySelector('.panel-heading');
      const left = name === 'config' ? panel.offsetHeight - heading.offsetHeight - 24 : [...panel.querySelectorAll('.hint, .samples')].filter((node) => !node.parentElement.closest('.samples')).reduce((sum, node) => sum + node.offsetHeight, 0);
      height += panel.offsetHeight - left + EMBED_GAP;
    }
    return height;
  };
  const embedSize = () => ({ width: EMBED_WIDTH, height: Math.round(Math.min(EMBED_MAX_HEIGHT, Math.max(EMBED_MIN_HEIGHT, (view()?.offsetHeight ?? 0) * EMBED_NARROWER + EMBED_CHROME + panels()))) });

  // What the note and the hand-copy box speak of: the state they were written for. Once the page
  // shows something else (another view, sentence or model), they are cleared rather than left to
  // read as if said of it.
  let saidFor = null;
  const said = (text) => {
    note.textContent = text;
    saidFor = JSON.stringify(getState());
  };

  async function copy(text, done) {
    manual.hidden = true;
    try {
      await navigator.clipboard.writeText(text);
      said(done);
    } catch {
      said(copiedNote('share.copyManually'));
      manual.value = text;
      manual.hidden = false;
      manual.select();
    }
  }

  async function exportAs(kind) {
    const root = view();
    if (!root) {
      said(t('share.notReady'));
      return;
    }
    try {
      const figure = figureSvg(root, { title: title(), subtitle: subtitle(root), link: await linkTo(getState()) });
      const file = `${fileName(app.state, root)}.${kind}`;
      download(kind === 'svg' ? new Blob([figure.text], { type: 'image/svg+xml' }) : await figurePng(figure), file);
      said(t('share.exported', { file }));
    } catch (err) {
      said(t('share.exportFailed', { message: err.message }));
    }
  }

  // A copied link or embed of a model loaded from the reader's own files opens on random weights:
  // said when it is copied, with how to share the model.
  const copiedNote = (key) => t(key) + (app.state.model.kind === 'files' ? ` ${t('share.filesWarning')}` : '');

  const button = (key, action, extra = {}) => el('button', { type: 'button', className: 'share-button', on: { click: action }, ...extra }, t(key));
  const node = el(
    'div',
    { className: 'share' },
    el('div', { className: 'share-row' }, button('share.copyLink', async () => copy(await linkTo(getState()), copiedNote('share.copied')), { id: 'share-link' })),
    // The embed's options come before the button that copies it: they change the code it copies.
    el('fieldset', { className: 'share-hide' }, el('legend', {}, t('share.hideLabel')), HIDE_FLAGS.map((flag, i) => el('label', { className: 'switch' }, hideBoxes[i], el('span', {}, t(`share.hide.${flag}`))))),
    el('div', { className: 'share-row' }, el('label', { htmlFor: themeId, className: 'share-label' }, t('share.themeLabel')), themePick),
    el('div', { className: 'share-row' }, button('share.copyEmbed', async () => copy(await embedCode(getState(), title(), embedSize(), themePick.value || null), copiedNote('share.embedCopied')), { id: 'share-embed' })),
    el(
      'div',
      { className: 'share-row' },
      el('span', { className: 'share-label' }, t('share.export')),
      button('share.exportSvg', () => exportAs('svg'), { id: 'export-svg' }),
      button('share.exportPng', () => exportAs('png'), { id: 'export-png' }),
    ),
    note,
    manual,
  );

  return {
    node,
    update() {
      HIDE_FLAGS.forEach((flag, i) => {
        hideBoxes[i].checked = app.state.hide.includes(flag);
      });
      if (saidFor !== null && saidFor !== JSON.stringify(getState())) {
        note.textContent = '';
        manual.hidden = true;
        saidFor = null;
      }
    },
  };
}

// Whether a view shows one head: it has a head picker in its own toolbar (the head grid's probe map
// has one further down, and shows every head above it).
function showsOneHead(root) {
  return root.querySelector(':scope > .toolbar select[name="head"]') !== null;
}

// An exported figure's file name says what it shows, so two exports do not overwrite each other:
// the view, its layer and head where it shows one head (it has a head picker), the attention map's
// stage, the pipeline's step or the lesson, and the language.
export function fileName(state, root) {
  const parts = ['attnscope', state.view];
  if (state.view === 'lessons') parts.push(state.lesson);
  if (state.view === 'stepper') parts.push(state.step);
  if (showsOneHead(root)) parts.push(`l${state.layer}h${state.head}`);
  if (state.view === 'attention') parts.push(state.stage);
  parts.push(state.lang);
  return parts.filter((p) => p !== null && p !== undefined && p !== '').join('-');
}

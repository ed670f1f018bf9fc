// The share panel: copy a link to what is on screen; copy the figure as an <iframe> or as an
// <attn-scope> element, with the controls the embed hides (TensorFlow Playground's hide flags, kept
// in the state), its theme and its width; and export the current view as SVG or as PNG at 2x. Where
// the clipboard is refused, the text is shown selected for copying by hand.
// The <iframe>'s height is measured: the embed, laid out at the width given with its flags
// (embed_size.js), says how tall it is. <attn-scope> grows to that height by itself, at any width;
// its snippet starts it there, so the post does not jump when it loads.

import { el } from '../parts/dom.js';
import { figureSvg, figurePng, download } from '../parts/figure_export.js';
import { EMBED_THEMES, HIDE_FLAGS, fragment } from '../state.js';
import { linkTo, embedCode } from '../link.js';
import { t } from '../strings.js';
import { modelName } from './model_panel.js';
import { headList } from '../parts/ablation.js';
import { embedSizer } from './embed_size.js';

// The embed's width by default: a blog's column.
const EMBED_WIDTH = 700;
const MIN_WIDTH = 280;
const MAX_WIDTH = 1600;
// Where the figure cannot be measured (a model still downloading), its height is estimated from the
// full page's view: laid out as a figure (without its explanations and controls where the embed hides
// them), plus the embed's top bar and the panels it keeps, within these bounds.
const EMBED_CHROME = 110;
const EMBED_MIN_HEIGHT = 360;
const EMBED_MAX_HEIGHT = 4000;
const EMBED_GAP = 10; // between the embed's panels (share.css)
// An exported figure's subtitle quotes this much of the sentence at most.
const SENTENCE_CHARS = 60;

// One hidden embed measures every snippet of the page, whichever language's panel asks; the width
// the author gave stays when the panel is built again in another language.
let sizer = null;
let chosenWidth = EMBED_WIDTH;

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
  // The width of the post's column the figure goes in: the iframe's height is measured at it.
  const widthInput = el('input', { type: 'number', id: 'share-width', className: 'share-width', min: MIN_WIDTH, max: MAX_WIDTH, step: 10, value: chosenWidth, inputMode: 'numeric' });
  const width = () => {
    const n = Math.round(Number(widthInput.value));
    chosenWidth = Number.isFinite(n) && n > 0 ? Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, n)) : chosenWidth;
    return chosenWidth;
  };
  widthInput.addEventListener('change', width);
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
  // The snippet's size: the embed's own height at the width given, measured in a hidden iframe;
  // where it cannot be measured, an estimate from the page as it is drawn now (estimated: true).
  const embedSize = async (state, theme) => {
    const w = width();
    widthInput.value = w;
    said(t('share.measuring', { width: w }));
    try {
      sizer ??= embedSizer();
      const src = `${location.href.split('#')[0]}#${await fragment(state, { embed: true, theme })}`;
      return { width: w, height: Math.ceil(await sizer.measure(src, state, w)), estimated: false };
    } catch {
      return { width: w, height: estimate(state), estimated: true };
    }
  };
  const estimate = (state) => {
    const root = view();
    const hide = state.hide ?? [];
    // Laid out as an export lays it out (share.css: without the explanations and controls) where the
    // embed hides both, as drawn otherwise.
    const figure = hide.includes('prose') && hide.includes('toolbar');
    root?.classList.toggle('exporting', figure);
    const height = root?.offsetHeight ?? 0;
    root?.classList.remove('exporting');
    return Math.round(Math.min(EMBED_MAX_HEIGHT, Math.max(EMBED_MIN_HEIGHT, height + EMBED_CHROME + panels(hide))));
  };
  // The panels the embed keeps under its top bar: the input without its hints and samples, the
  // model panel folded to its heading (share.css).
  const panels = (hide) => {
    let height = 0;
    for (const name of ['input', 'config']) {
      const panel = document.querySelector(`[data-hideable="${name}"]`);
      if (!panel || hide.includes(name)) continue;
      const heading = panel.querySelector('.panel-heading');
      const left = name === 'config' ? panel.offsetHeight - heading.offsetHeight - 24 : [...panel.querySelectorAll('.hint, .samples')].filter((node) => !node.parentElement.closest('.samples')).reduce((sum, node) => sum + node.offsetHeight, 0);
      height += panel.offsetHeight - left + EMBED_GAP;
    }
    return height;
  };

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
  const copiedNote = (key, values = {}) => t(key, values) + (app.state.model.kind === 'files' ? ` ${t('share.filesWarning')}` : '');

  // The two snippets of the figure on screen, with its measured size.
  async function copyIframe() {
    const state = getState();
    const theme = themePick.value || null;
    const size = await embedSize(state, theme);
    await copy(await embedCode(state, title(), size, theme), copiedNote(size.estimated ? 'share.embedCopiedEstimated' : 'share.embedCopied', size));
  }
  async function copyElement() {
    const state = getState();
    const theme = themePick.value || null;
    const size = await embedSize(state, theme);
    await copy(await elementCode(state, title(), size, theme), copiedNote('share.elementCopied'));
  }

  const button = (key, action, extra = {}) => el('button', { type: 'button', className: 'share-button', on: { click: action }, ...extra }, t(key));
  const node = el(
    'div',
    { className: 'share' },
    el('div', { className: 'share-row' }, button('share.copyLink', async () => copy(await linkTo(getState()), copiedNote('share.copied')), { id: 'share-link' })),
    // The embed's options come before the button that copies it: they change the code it copies.
    el('fieldset', { className: 'share-hide' }, el('legend', {}, t('share.hideLabel')), HIDE_FLAGS.map((flag, i) => el('label', { className: 'switch' }, hideBoxes[i], el('span', {}, t(`share.hide.${flag}`))))),
    el('div', { className: 'share-row' }, el('label', { htmlFor: themeId, className: 'share-label' }, t('share.themeLabel')), themePick),
    el('div', { className: 'share-row' }, el('label', { htmlFor: 'share-width', className: 'share-label' }, t('share.widthLabel')), widthInput, el('span', { className: 'share-label' }, t('share.widthUnit'))),
    el('div', { className: 'share-row' }, button('share.copyEmbed', copyIframe, { id: 'share-embed' }), button('share.copyElement', copyElement, { id: 'share-element' })),
    el('p', { className: 'share-hint' }, t('share.embedNote')),
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

// The <attn-scope> snippet of a state: the element's script and the element, its state the link's
// fragment (the theme with it), its width the column's, and no height attribute, so that it follows
// the figure's height at any width; it starts at the height measured for this width (an inline style
// the element keeps until its figure has drawn and reports its own, once: element.js).
export async function elementCode(state, title, { width, height }, theme = null) {
  const page = location.href.split('#')[0];
  const script = new URL('element.js', page).href;
  const fragmentOnly = (await fragment(state, { embed: true, theme })).replace(/&embed=1/, '');
  const attr = (s) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  // Its child is its fallback, shown where attnscope cannot be reached (even its script): the
  // figure's title and a link that opens it; display:block keeps the height reserved then too.
  const open = `${page}#${fragmentOnly}`;
  return `<script src="${attr(script)}"></script>\n<attn-scope state="${attr(fragmentOnly)}" width="${width}" style="display:block;height:${height}px" label="${attr(title)}"><a href="${attr(open)}">${attr(title)} · open in attnscope ↗</a></attn-scope>`;
}

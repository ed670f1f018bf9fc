// The panels around the view, built once the page's language is set and placed into index.html:
// the token chips, the model and config panels, the BOS switch and the sample sentences under the
// text box, the share panel, the theme toggle, the tabs, the knocked-out heads' bar and the backend
// choice; and the link writer that keeps the address. What each panel asks for goes to the module
// that does it (model_life.js, runs.js, address.js).

import { el } from '../parts/dom.js';
import { t } from '../strings.js';
import { hubModelOf } from '../state.js';
import { linkWriter } from '../link.js';
import { tokenChips } from '../panels/token_chips.js';
import { configPanel } from '../panels/config_panel.js';
import { ablationBar } from '../parts/ablation.js';
import { themeToggle } from '../panels/theme.js';
import { tabBar } from '../panels/tabs.js';
import { backendControls } from '../panels/backend.js';
import { sharePanel } from '../panels/share_panel.js';
import { modelPanel } from '../panels/model_panel.js';
import { sampleButtons } from '../panels/samples.js';
import { bosOption } from '../panels/bos_option.js';
import { longTextNote } from '../parts/long_text.js';
import { keepFocus } from './focus_keeper.js';
import * as source from '../model_source.js';

/** The config panel (sizes of a random model, the causal switch); language.js builds it anew. */
export function configPanelFor(page) {
  return configPanel(page.state, {
    onApply: async (config, seed) => {
      await page.life.build(config, seed);
      await page.runs.tokenize();
    },
    onCausal: (causal) => {
      page.state.causal = causal;
      page.runs.run();
    },
  });
}

/** The share panel (link, embed code, image); language.js builds it anew. */
export function sharePanelFor(page) {
  return sharePanel(page.app, { getState: () => page.opener.shared(), view: () => page.dom.view.querySelector('.view-root') });
}

export function buildPanels(page) {
  const { state, app, dom } = page;
  const navigate = (patch) => page.address.navigate(patch);
  const use = (model, files) => page.life.use(model, files);

  // Text longer than a link carries runs whole; the box says a link keeps only its start (long_text.js).
  const longText = longTextNote(dom.text);
  const models = modelPanel({
    onSource: (kind) => use({ kind }),
    onFiles: (files) => use({ kind: 'files' }, files),
    onUrl: (url) => use({ kind: 'url', url }),
    onHub: (text) => use(hubModelOf(text)),
    onKept: async () => {
      const meta = await source.kept.meta();
      if (meta) use(source.keptModel(meta));
    },
    onForget: async () => {
      await source.kept.forget();
      models.set({ kept: null, note: t('model.forgotten') });
    },
    onForgetSmollm2: async () => {
      await source.keptSmollm2.forget();
      models.set({ smollm2: (page.smollm2 = { ...page.smollm2, kept: null }), note: t('model.smollm2Forgotten') });
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
  const chips = tokenChips((i) => {
    state.mask = state.mask.map((m, j) => (j === i ? 1 - m : m));
    chips.update(state.tokens, state.mask);
    page.runs.run();
  });
  const config = configPanelFor(page);
  const share = sharePanelFor(page);
  const writer = linkWriter({ embed: page.embed, theme: page.embedTheme, wrote: () => (page.seenHash = location.hash) });
  const theme = themeToggle(() => page.screen.remount(), { fixed: page.embedTheme });
  const tabs = tabBar(dom.nav, (view) => page.address.go(view));
  const ablated = ablationBar(app); // the first thing in the view's column while heads are knocked out
  const causalNote = el('p', { className: 'causal-off-note', attrs: { role: 'note' }, hidden: true }, t('app.causalOff'));
  const backend = backendControls({ call: page.worker.call, args: () => page.runs.args(), choose: (value) => navigate({ backend: value }) });

  // Puts the panels in index.html's places and wires the page's own controls.
  function place() {
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
    dom.config.replaceWith(models.node, ui.config.node);
    dom.text.after(longText.node, bos.node, samples.node);
    document.getElementById('share').replaceWith(ui.share.node);
    // The phone's line with the sentence (embed.js) has a button to the text box.
    dom.phoneSentence.querySelector('button').addEventListener('click', () => {
      dom.text.scrollIntoView({ block: 'center' });
      dom.text.focus({ preventScroll: true });
    });
  }

  const ui = { longText, models, bos, samples, chips, config, share, writer, theme, tabs, ablated, causalNote, backend, place };
  return ui;
}

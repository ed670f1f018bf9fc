// The page's language: every string on the page switched at once (static text, tabs, chips, panels,
// the banner and the view), as a link or the language button asks.

import { t, setLanguage, language } from '../strings.js';
import { relabelBanner } from '../panels/banner.js';
import { configPanelFor, sharePanelFor } from './panels.js';

export function languageSwitch(page) {
  const { state, app } = page;

  // Static text in index.html is marked data-i18n (text), data-i18n-label (aria-label) or data-i18n-title (a tooltip).
  function fillStaticText() {
    for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
    document.title = `${t(`view.${state.view}`)} · ${t('app.pageTitle')}`;
    document.getElementById('lang-switch').lang = state.lang === 'zh' ? 'en' : 'zh';
    for (const node of document.querySelectorAll('[data-i18n-label]')) node.setAttribute('aria-label', t(node.dataset.i18nLabel));
    for (const node of document.querySelectorAll('[data-i18n-title]')) node.title = t(node.dataset.i18nTitle);
  }

  // Switches every string on the page: static text, tabs, chips, the model panel and the view.
  // The config and share panels are built anew in the new language.
  function apply(lang) {
    const next = lang === 'zh' ? 'zh' : 'en';
    if (next === state.lang && next === language()) return;
    const { ui } = page;
    state.lang = next;
    setLanguage(next);
    fillStaticText();
    ui.tabs.relabel();
    ui.chips.update(state.tokens, state.mask);
    const relabelled = configPanelFor(page);
    ui.config.node.replaceWith(relabelled.node);
    ui.config = relabelled;
    const reshared = sharePanelFor(page);
    ui.share.node.replaceWith(reshared.node);
    ui.share = reshared;
    if (app.model) ui.config.showResolved(app.model);
    ui.models.relabel();
    ui.samples.relabel();
    ui.bos.relabel();
    ui.theme.relabel();
    relabelBanner();
    ui.causalNote.textContent = t('app.causalOff');
    page.screen.remount();
  }

  return { fillStaticText, apply };
}

// The colour theme: the system's (prefers-color-scheme) unless the reader picks the other one with
// the top bar's button (picking the system's own again follows the system again). The pick is this browser's reading preference (localStorage), not part of a
// shared link. style.css does the rest with light-dark() on its colour variables; canvases read the
// resolved colours when they paint, so onChange lets the page redraw its view.

import { el } from '../parts/dom.js';
import { t } from '../strings.js';

const KEY = 'attnscope.theme';

function stored() {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null; // storage can be off (a sandboxed embed); the theme then lasts for the visit
  }
}

function store(theme) {
  try {
    localStorage.setItem(KEY, theme);
  } catch {
    // as above
  }
}

// fixed: an embed's theme from its link ('light' | 'dark'), which neither reads nor writes the pick.
export function themeToggle(onChange, { fixed = null } = {}) {
  const root = document.documentElement;
  const media = matchMedia('(prefers-color-scheme: dark)');
  const effective = () => root.dataset.theme ?? (media.matches ? 'dark' : 'light');
  const button = el('button', { type: 'button', className: 'pref', id: 'theme-toggle', on: { click: () => pick(effective() === 'dark' ? 'light' : 'dark') } });

  function relabel() {
    const dark = effective() === 'dark';
    button.textContent = dark ? '☾' : '☀';
    button.title = t('theme.dark');
    button.setAttribute('aria-label', t('theme.dark'));
    button.setAttribute('aria-pressed', String(dark));
  }

  // A pick that is the system's own theme is no pick: the page follows the system again (and goes
  // on following it when it changes), so two presses always lead back to the system's theme.
  function pick(theme) {
    const system = media.matches ? 'dark' : 'light';
    if (theme === system) delete root.dataset.theme;
    else root.dataset.theme = theme;
    if (!fixed) store(theme === system ? '' : theme);
    relabel();
    onChange();
  }

  const saved = fixed ?? stored();
  if (saved === 'light' || saved === 'dark') root.dataset.theme = saved;
  media.addEventListener('change', () => {
    relabel();
    if (!root.dataset.theme) onChange();
  });
  relabel();
  return { node: button, relabel };
}

// A dismissible banner above the page for what the reader must know before anything else, such as
// a link that could not be opened as written. It is an alert, so screen readers announce it; its
// text is set as text, never parsed as HTML, since it may quote a link.

import { el } from '../parts/dom.js';
import { t } from '../strings.js';

let node = null;

// title: one sentence; details: further lines (shown as a list).
export function showBanner(title, details = []) {
  hideBanner();
  node = el(
    'div',
    { className: 'banner', attrs: { role: 'alert' } },
    el('div', { className: 'banner-text' }, el('p', { className: 'banner-title' }, title), details.length > 0 && el('ul', {}, details.map((d) => el('li', {}, d)))),
    el('button', { type: 'button', className: 'banner-close', title: t('banner.dismiss'), attrs: { 'aria-label': t('banner.dismiss') }, on: { click: hideBanner } }, '×'),
  );
  const layout = document.querySelector('.layout');
  if (layout) layout.before(node);
  else document.body.prepend(node);
}

// Adds lines to the banner shown (a link's model that could not be loaded, after the link's fields
// were explained), or shows a new banner.
export function addToBanner(title, details = []) {
  if (!node) return showBanner(title, details);
  const text = node.querySelector('.banner-text');
  const list = text.querySelector('ul') ?? text.appendChild(el('ul'));
  list.append(...[title, ...details].map((d) => el('li', {}, d)));
}

export function hideBanner() {
  node?.remove();
  node = null;
}

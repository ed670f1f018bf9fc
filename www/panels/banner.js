// A dismissible banner above the page for what the reader must know before anything else, such as
// a link that could not be opened as written. It is an alert, so screen readers announce it; its
// text is set as text, never parsed as HTML, since it may quote a link. Its sentences are kept as
// functions that write them, so a change of language rewrites the banner too (relabelBanner).

import { el } from '../parts/dom.js';
import { t } from '../strings.js';

let node = null;
let lines = null; // {title: () => string, details: () => string[]} per call, the first the banner's title

const said = (text) => (typeof text === 'function' ? text : () => text);

function render() {
  const [first, ...more] = lines;
  const details = [...first.details(), ...more.flatMap((l) => [l.title(), ...l.details()])];
  const next = el(
    'div',
    { className: 'banner', attrs: { role: 'alert' } },
    el('div', { className: 'banner-text' }, el('p', { className: 'banner-title' }, first.title()), details.length > 0 && el('ul', {}, details.map((d) => el('li', {}, d)))),
    el('button', { type: 'button', className: 'banner-close', title: t('banner.dismiss'), attrs: { 'aria-label': t('banner.dismiss') }, on: { click: hideBanner } }, '×'),
  );
  if (node) node.replaceWith(next);
  else {
    const layout = document.querySelector('.layout');
    if (layout) layout.before(next);
    else document.body.prepend(next);
  }
  node = next;
}

// title: one sentence; details: further lines (shown as a list). Each a string, or a function that
// writes it in the page's language (then it follows a change of language).
// Returns the banner's id, for isShowing.
export function showBanner(title, details = []) {
  hideBanner();
  lines = [{ title: said(title), details: typeof details === 'function' ? details : () => details.map((d) => said(d)()) }];
  render();
  return lines;
}

/** Whether the banner showBanner returned `id` for is still up (not dismissed nor replaced). */
export function isShowing(id) {
  return id !== null && id === lines;
}

// Adds lines to the banner shown (a link's model that could not be loaded, after the link's fields
// were explained), or shows a new banner.
// Returns the banner's id, as showBanner does.
export function addToBanner(title, details = []) {
  if (!node) return showBanner(title, details);
  lines.push({ title: said(title), details: typeof details === 'function' ? details : () => details.map((d) => said(d)()) });
  render();
  return lines;
}

/** Rewrites the banner shown in the page's language now. */
export function relabelBanner() {
  if (node) render();
}

export function hideBanner() {
  node?.remove();
  node = null;
  lines = null;
}

// The view tabs in the top bar, in four groups: a newcomer sees the basics and then the lessons; the
// deep dives and the experiments (interventions on the model) fold away behind a button each. Built once per language (so keyboard focus stays on a tab
// while views change); render(view) marks the view shown. Every tab is a real link (#view=…, with
// the page's language kept by link.js's pageHref).
// On a wide page an unfolded group opens as a menu over the page (style.css), so the top bar never
// grows a row and the page under it never moves; it folds again once a tab is picked, on Escape, or
// on a click or focus elsewhere, its button naming the view shown in it. On a phone the strip scrolls
// sideways and a group unfolds in its line, open while one of its views is shown.

import { el } from '../parts/dom.js';
import { scrollFade } from '../parts/scroll_fade.js';
import { pageHref } from '../link.js';
import { t } from '../strings.js';

export const TAB_GROUPS = [
  { id: 'basics', views: ['overview', 'stepper', 'attention', 'grid', 'masks', 'output'] },
  // Beside the basics, not after the folds: the overview's route starts with the lessons.
  { id: 'lessons', views: ['lessons'] },
  { id: 'deep', views: ['lines', 'qk', 'rope', 'scale', 'gqa', 'decode', 'flash', 'ffn'], folds: true },
  { id: 'interp', views: ['compare', 'ablate', 'lens', 'attribution', 'circuit', 'patch'], folds: true },
];

// nav: the <nav> to fill; go(view): the reader picked a tab.
export function tabBar(nav, go) {
  scrollFade(nav); // on a phone the strip scrolls sideways: an edge fades where more tabs lie
  let shownView = null; // the view the folds were last set for
  // Whether an unfolded group is a menu over the page (a wide page: style.css's same width).
  const menus = () => matchMedia('(min-width: 901px)').matches;
  const foldAll = () => {
    for (const head of nav.querySelectorAll('.tab-fold[aria-expanded="true"]')) head.setAttribute('aria-expanded', 'false');
    render(shownView);
  };
  // A click or focus outside an open menu folds it.
  const outside = (e) => {
    if (!menus() || !nav.querySelector('.tab-fold[aria-expanded="true"]')) return;
    const group = nav.querySelector('.tab-fold[aria-expanded="true"]').closest('.tab-group');
    if (e.type === 'focusout' ? e.relatedTarget && !group.contains(e.relatedTarget) : !group.contains(e.target)) foldAll();
  };
  document.addEventListener('pointerdown', outside);
  nav.addEventListener('focusout', outside);

  function build() {
    shownView = null; // new tabs: the folds are set for the view shown
    const tab = (id) =>
      el('a', { href: pageHref({ view: id }), className: 'tab', dataset: { view: id }, on: { click: (e) => { e.preventDefault(); if (menus()) foldAll(); go(id); } } }, t(`view.${id}`));
    // Where the strip scrolls (a phone), a ‹ or › stands at an edge with more tabs beyond it; a tap
    // scrolls that way. The tabs themselves are the keyboard's way: these are for the eye and the finger.
    const more = (side) =>
      el('span', { className: `tabs-more ${side}`, attrs: { 'aria-hidden': 'true' }, on: { click: () => nav.scrollBy({ left: (side === 'end' ? 1 : -1) * nav.clientWidth * 0.7, behavior: 'smooth' }) } }, side === 'end' ? '›' : '‹');
    nav.replaceChildren(
      more('start'),
      ...TAB_GROUPS.map(({ id, views, folds }) => {
        const tabs = el('div', { className: 'tab-group-tabs', id: `tabs-${id}` }, views.map(tab));
        // Escape in an unfolded group folds it and gives the focus back to its button.
        if (folds)
          tabs.addEventListener('keydown', (e) => {
            if (e.key !== 'Escape') return;
            head.setAttribute('aria-expanded', 'false');
            render(shownView);
            head.focus();
          });
        const head = folds
          ? el('button', { type: 'button', className: 'tab tab-fold', attrs: { 'aria-expanded': 'false', 'aria-controls': tabs.id }, on: { click: () => unfold(head, tabs) } })
          : views.length > 1 && el('span', { className: 'tab-group-label', attrs: { 'aria-hidden': 'true' } }, t(`nav.group.${id}`));
        return el('div', { className: 'tab-group', dataset: { group: id }, attrs: { role: 'group', 'aria-label': t(`nav.group.${id}`) } }, head, tabs);
      }),
      more('end'),
    );
  }

  // The reader's fold button: the group opens (folding the other) or folds; on a phone, where the strip scrolls
  // sideways, an opened group's first tabs are brought into sight (they would lie off the edge).
  function unfold(head, tabs) {
    // One group open at a time: two open at once wrapped the sticky header onto a third line.
    if (tabs.hidden) for (const other of nav.querySelectorAll('.tab-fold')) if (other !== head) other.setAttribute('aria-expanded', 'false');
    head.setAttribute('aria-expanded', String(tabs.hidden));
    render(shownView);
    if (!tabs.hidden && nav.scrollWidth > nav.clientWidth) {
      const offset = head.getBoundingClientRect().left - nav.getBoundingClientRect().left;
      nav.scrollLeft += offset - 8;
    }
  }

  function render(view) {
    if (!nav.firstChild) build();
    const moved = shownView !== view; // a new view (or new tabs), not a redraw of the same one
    for (const tab of nav.querySelectorAll('a.tab')) {
      const active = tab.dataset.view === view;
      tab.classList.toggle('active', active);
      if (active) tab.setAttribute('aria-current', 'page');
      else tab.removeAttribute('aria-current');
    }
    // On a phone a folded group is open while one of its views is shown and folded while another is
    // (so a link draws the same tabs as the page it came from); in between, the reader's button
    // decides. A wide page's menus fold whenever the view changes. Folded over the view shown, the
    // button names it.
    for (const head of nav.querySelectorAll('.tab-fold')) {
      const tabs = document.getElementById(head.getAttribute('aria-controls'));
      const inside = tabs.querySelector('.active');
      if (shownView !== view) head.setAttribute('aria-expanded', String(Boolean(inside) && !menus()));
      tabs.hidden = head.getAttribute('aria-expanded') !== 'true';
      head.classList.toggle('holds-active', Boolean(inside));
      const group = t(`nav.group.${head.parentNode.dataset.group}`);
      // The arrow is a picture of aria-expanded, which a screen reader says already: not in the name.
      head.replaceChildren(`${inside && tabs.hidden ? `${group}: ${inside.textContent}` : group} `, el('span', { attrs: { 'aria-hidden': 'true' } }, tabs.hidden ? '▸' : '▾'));
    }
    shownView = view;
    // On a phone the tabs scroll sideways; the active one is brought to the middle of the strip when
    // the view changes (not on every redraw: the reader's own scrolling of the strip stays).
    const active = nav.querySelector('a.active:not([hidden] *)');
    if (moved && active && nav.scrollWidth > nav.clientWidth) {
      const offset = active.getBoundingClientRect().left - nav.getBoundingClientRect().left;
      nav.scrollLeft += offset - (nav.clientWidth - active.offsetWidth) / 2;
    }
  }

  return {
    render,
    /** The language changed: the tabs are built again on the next render. */
    relabel() {
      nav.replaceChildren();
    },
  };
}

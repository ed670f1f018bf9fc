// The lessons: presets that reproduce the seeds' worked examples (shared/seeds) with their own
// numbers, every matrix editable cell by cell, every result computed by the core. One lesson at a
// time, chosen by #view=lessons&lesson=…; each lesson is its own module in www/lessons/.
// Lessons bring their own numbers, so the sentence, model and share panels step aside while one is
// open (html.lessons-focus; style.css) and the lesson gets the page's width. A button brings the
// panels back (html.lessons-sidebar); that class stays while the page is open, so the reader's
// choice survives a change of lesson or language.

import { el } from '../parts/dom.js';
import { t } from '../strings.js';
import { pageHref } from '../link.js';
import * as qkMatch from '../lessons/qk_match.js';
import * as whoSheMeans from '../lessons/who_she_means.js';
import * as flow from '../lessons/flow.js';
import * as sqrtD from '../lessons/sqrt_d.js';
import * as causalMask from '../lessons/causal_mask.js';
import * as paddingMask from '../lessons/padding_mask.js';
import * as shapes from '../lessons/shapes_gqa.js';
import * as multiHead from '../lessons/multi_head.js';

export const LESSONS = { qk: qkMatch, who: whoSheMeans, flow, sqrt_d: sqrtD, causal: causalMask, padding: paddingMask, shapes, multihead: multiHead };

export function mount(root, app) {
  const { state } = app;
  const page = document.documentElement;
  page.classList.add('lessons-focus');
  const toggle = el('button', { type: 'button', id: 'lessons-sidebar', className: 'action secondary', on: { click: () => { page.classList.toggle('lessons-sidebar'); labelToggle(); } } });
  function labelToggle() {
    const open = page.classList.contains('lessons-sidebar');
    toggle.textContent = t(open ? 'lessons.hideSidebar' : 'lessons.showSidebar');
    toggle.setAttribute('aria-expanded', String(open));
  }
  labelToggle();
  const tabs = Object.keys(LESSONS).map((id) =>
    el('a', { className: 'lesson-tab', href: pageHref({ view: 'lessons', lesson: id }), dataset: { lesson: id }, on: { click: (e) => { e.preventDefault(); app.navigate({ view: 'lessons', lesson: id }); } } }, t(`lesson.${id}.title`)),
  );
  const article = el('article', { className: 'lesson' });
  root.append(el('div', { className: 'lessons-bar' }, el('nav', { className: 'lesson-tabs', attrs: { 'aria-label': t('lessons.label') } }, tabs), el('div', { className: 'toolbar' }, toggle)), article);
  let current = null; // {id, instance}

  async function update() {
    const id = state.lesson in LESSONS ? state.lesson : 'qk';
    for (const tab of tabs) {
      if (tab.dataset.lesson === id) tab.setAttribute('aria-current', 'page');
      else tab.removeAttribute('aria-current');
    }
    if (current?.id !== id) {
      current?.instance.destroy();
      const body = el('div', { className: 'lesson-body' });
      article.replaceChildren(el('h2', {}, t(`lesson.${id}.title`)), el('p', { className: 'explain lesson-intro' }, t(`lesson.${id}.intro`)), body);
      current = { id, instance: LESSONS[id].mount(body, app) };
    }
    await current.instance.update();
  }

  return {
    update,
    destroy() {
      current?.instance.destroy();
      page.classList.remove('lessons-focus');
    },
  };
}

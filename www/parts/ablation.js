// Knocked-out heads (zero-ablation), as every view meets them: the state's `ablate`, [layer, head]
// pairs, goes into every run's arguments (page/runs.js's args), so the core zeroes those heads' slice of
// attn.context before o_proj and every tensor a view reads is the ablated run's. This part is the one
// way to change that set (through the link, so back / forward and sharing follow) and the bar over
// every view that says, whatever view is open, that the reader is looking at an ablated model.

import { el } from './dom.js';
import { pageHref } from '../link.js';
import { t } from '../strings.js';

export function isAblated(state, l, h) {
  return state.ablate.some(([a, b]) => a === l && b === h);
}

// "L0 H1, L2 H3": the heads as the page names them.
export function headList(ablate) {
  return ablate.map(([l, h]) => t('ablate.headName', { l, h })).join(', ');
}

// A new set of knocked-out heads, through the address (a plain "ablate=0.1,2.3" field).
export function setAblated(app, ablate) {
  app.navigate({ ablate: ablate.map(([l, h]) => `${l}.${h}`).join(',') });
}

export function toggleHead(app, l, h) {
  const { ablate } = app.state;
  setAblated(app, isAblated(app.state, l, h) ? ablate.filter(([a, b]) => a !== l || b !== h) : [...ablate, [l, h]]);
}

/** A toggle button for head (l, h): pressed while it is knocked out. `short`: an icon-sized one. */
export function ablateToggle(app, l, h, { short = false } = {}) {
  const on = isAblated(app.state, l, h);
  return el(
    'button',
    {
      type: 'button',
      className: `ablate-toggle${short ? ' short' : ''}${on ? ' on' : ''}`,
      title: t(on ? 'ablate.restoreHead' : 'ablate.knockHead', { l, h }),
      attrs: { 'aria-pressed': String(on), 'aria-label': t('ablate.knockHead', { l, h }) },
      dataset: { layer: l, head: h },
      on: {
        click: (event) => {
          event.stopPropagation();
          toggleHead(app, l, h);
        },
      },
    },
    short ? '⊘' : t(on ? 'ablate.restoreThis' : 'ablate.knockThis'),
  );
}

// Where "Before and after" leads: the knock-out view, at the position the reader is reading where
// the view they leave has one (head attribution and the output read the last token until another is
// picked), not at the knock-out view's own choice of the position that changes most.
const AT_LAST_POSITION = ['attribution', 'output'];
function beforeAfter(state) {
  const T = state.tokens.ids.length;
  return AT_LAST_POSITION.includes(state.view) && state.query === null && T > 0 ? { view: 'ablate', query: String(T - 1) } : { view: 'ablate' };
}

/** The bar over every view while heads are knocked out: which, that every view shows it, clear all. */
export function ablationBar(app) {
  const node = el('div', { className: 'ablation-bar', attrs: { role: 'status' }, hidden: true });
  return {
    node,
    update() {
      const { ablate } = app.state;
      node.hidden = ablate.length === 0;
      if (node.hidden) return node.replaceChildren();
      node.replaceChildren(
        el('strong', {}, t('ablate.barTitle', { n: ablate.length })),
        ' ',
        el('span', { className: 'ablation-heads' }, headList(ablate)),
        ' ',
        el('span', { className: 'ablation-note' }, t('ablate.barNote')),
        // The core's own reason, in English, stays in the tooltip.
        ...(app.run?.cpuFallback ? [el('span', { className: 'hint ablation-fallback', title: app.run.cpuFallback }, t('ablate.cpuFallback'))] : []),
        ' ',
        el('a', { href: pageHref(beforeAfter(app.state)), on: { click: (e) => { e.preventDefault(); app.navigate(beforeAfter(app.state)); } } }, t('ablate.barOpen')),
        ' ',
        el('button', { type: 'button', className: 'ablation-clear', on: { click: () => setAblated(app, []) } }, t('ablate.clearAll')),
      );
    },
  };
}

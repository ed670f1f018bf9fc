// What is on screen: the active view (mounted, updated, destroyed), or the loading, empty, error or
// cancelled state in its place, and the status line above it (the run, its progress and Cancel).

import { el } from '../parts/dom.js';
import { t } from '../strings.js';
import { STAGES } from '../parts/controls.js';
import { errorText } from './error_text.js';
import * as overview from '../views/overview.js';
import * as stepper from '../views/stepper.js';
import * as attentionMap from '../views/attention_map.js';
import * as headGrid from '../views/head_grid.js';
import * as masks from '../views/masks.js';
import * as tokenLines from '../views/token_lines.js';
import * as qkExplained from '../views/qk_explained.js';
import * as rope from '../views/rope.js';
import * as scale from '../views/scale.js';
import * as gqa from '../views/gqa.js';
import * as decode from '../views/decode.js';
import * as flash from '../views/flash.js';
import * as ffn from '../views/ffn.js';
import * as output from '../views/output.js';
import * as lessons from '../views/lessons.js';
import * as compare from '../views/compare.js';
import * as ablate from '../views/ablate.js';
import * as lens from '../views/lens.js';
import * as attribution from '../views/attribution.js';
import * as circuit from '../views/circuit.js';
import * as patch from '../views/patch.js';

export const VIEWS = { overview, stepper, attention: attentionMap, grid: headGrid, masks, lines: tokenLines, qk: qkExplained, rope, scale, gqa, decode, flash, ffn, output, lessons, compare, ablate, lens, attribution, circuit, patch };

// The ids a link may name; state.js checks every field of a link against them.
export const KNOWN = { views: Object.keys(VIEWS), steps: stepper.STEP_IDS, stages: Object.keys(STAGES), lessons: Object.keys(lessons.LESSONS) };

function message(kind, text, detail = null) {
  return el('div', { className: `message message-${kind}`, attrs: { role: kind === 'error' ? 'alert' : 'status' } }, kind === 'loading' && el('span', { className: 'spinner', attrs: { 'aria-hidden': 'true' } }), el('div', {}, text, detail && el('pre', {}, detail)));
}

export function screen(page) {
  const { state, app, dom } = page;

  // How many of the input's tokens are padding (attention_mask 0): said in the status, beside the run.
  const padded = () => state.mask.filter((m) => m === 0).length;

  function status() {
    const { ui } = page;
    ui.backend.show(state.backend);
    page.embedChrome.sentence();
    if (app.busy || app.progress) {
      const p = app.progress;
      dom.status.replaceChildren(
        p ? t('app.runningLayers', { done: p.done, total: p.total }) : t('app.running'),
        ' ',
        el('button', { type: 'button', className: 'status-cancel', on: { click: page.life.cancel } }, t('app.cancel')),
      );
      return;
    }
    dom.status.textContent = app.phase === 'ready' && app.run
        ? t('app.status', { backend: t(app.run.backend === 'webgpu' ? 'backend.gpu' : 'backend.cpu'), ms: app.run.ms.toFixed(1), tokens: state.tokens.ids.length }) + (state.ablate.length ? t('ablate.status', { n: state.ablate.length }) : '') + (padded() ? t('app.statusPadded', { n: padded() }) : '') + (state.causal ? '' : t('app.statusNoCausal'))
        : app.phase === 'building'
          ? t('app.building')
          : (ui.models.loadingText() ?? '');
  }

  // A stopped run says so, and runs again in one click (as any change of the text or model would).
  function stopped() {
    const box = message('empty', t('app.cancelled'));
    box.lastElementChild.append(' ', el('button', { type: 'button', className: 'action secondary run-again', on: { click: () => page.runs.run() } }, t('app.runAgain')));
    return box;
  }

  // Shows the active view, or the loading / empty / error state in its place.
  function refresh() {
    const { ui } = page;
    page.address.publish();
    ui.samples.model(state.model.kind === 'builtin', state.model.kind === 'smollm2' ? app.model : null);
    ui.tabs.render(state.view);
    ui.ablated.update();
    // A run without the causal mask is not how MiniMind runs: said above every view but the lessons
    // (their own examples), and in the status, so a shared link cannot pass for the model's own maps.
    ui.causalNote.hidden = state.causal || state.view === 'lessons';
    status();
    // A view that can draw from a config alone (the overview) is shown while the first model loads.
    const previewing = app.phase === 'loading' && Boolean(app.model ?? app.preview) && VIEWS[state.view].previews === true;
    // A view that never reads the run (the lessons: their own numbers, through the core) is shown when
    // the reader's sentence has nothing to run or its run failed, with what went wrong said above it.
    const runless = ['empty', 'error', 'cancelled'].includes(app.phase) && Boolean(app.model) && VIEWS[state.view].runless === true;
    // index.html's early overview text (first.js), shown while the overview is on its way, stays
    // until the overview replaces it, rather than give way to a loading line and come back.
    const early = dom.view.querySelector(':scope > [data-first-look]');
    if (early && app.phase === 'loading' && !previewing && state.view === 'overview' && getComputedStyle(early).display !== 'none') {
      dom.view.setAttribute('aria-busy', 'true');
      return;
    }
    if (app.phase !== 'ready' && !previewing && !runless) {
      if (page.current) page.current.instance.destroy();
      page.current = null;
      const box =
        app.phase === 'error'
          ? message('error', t(app.error?.code ? 'app.refusedTitle' : 'app.errorTitle'), errorText(app.error))
          : app.phase === 'empty'
            ? message('empty', t(state.text.trim() === '' ? 'app.empty' : 'app.noTokens'))
            : app.phase === 'cancelled'
              ? stopped()
            : message('loading', t(app.phase === 'building' ? 'app.building' : 'app.loading'));
      dom.view.replaceChildren(ui.ablated.node, ui.causalNote, box);
      dom.view.setAttribute('aria-busy', String(app.phase === 'loading' || app.phase === 'building'));
      return;
    }
    dom.view.setAttribute('aria-busy', String(previewing));
    dom.view.querySelector(':scope > .runless-note')?.remove();
    if (page.current?.id !== state.view) {
      const switched = page.current !== null;
      if (page.current) page.current.instance.destroy();
      dom.view.replaceChildren(ui.ablated.node, ui.causalNote);
      const root = el('div', { className: `view-root view-${state.view}` });
      dom.view.append(root);
      page.current = { id: state.view, root, instance: VIEWS[state.view].mount(root, app) };
      if (switched) showViewTop();
      // The control that opened this view (an overview block, a chip, a button of the old view) is
      // gone with it: focus goes to the view, so the next Tab continues there and not at the page's top.
      if (switched && (document.activeElement === document.body || !document.activeElement)) dom.view.focus({ preventScroll: true });
    }
    if (runless) {
      const said = app.phase === 'error' ? errorText(app.error) : app.phase === 'cancelled' ? t('app.cancelled') : t(state.text.trim() === '' ? 'app.empty' : 'app.noTokens');
      page.current.root.before(el('p', { className: 'hint runless-note', dataset: { phase: app.phase } }, t('app.runlessNote', { said })));
    }
    // The window's title names the view, so a tab, a bookmark and a screen reader tell them apart.
    document.title = `${t(`view.${state.view}`)} · ${t('app.pageTitle')}`;
    const shown = page.current;
    shown.root.querySelector(':scope > .view-error')?.remove();
    page.rendered = shown.instance.update().catch((err) => {
      if (err.superseded) return; // the input changed: the run of the new one draws the view again (runs.js)
      if (err.cancelled) {
        app.phase = 'cancelled';
        app.error = err;
        refresh();
        return;
      }
      // A request of this view alone failed (a second sentence over the token limit, say): it is said
      // at the view's top, whose controls stay to fix it, and the other views still draw the run.
      if (page.current !== shown) return;
      shown.root.querySelector(':scope > .view-error')?.remove();
      shown.root.prepend(el('div', { className: 'view-error' }, message('error', t('app.viewErrorTitle'), errorText(err))));
    });
  }

  // A view opened from another (a tab, a block of the overview, a token chip, a link) starts at its top:
  // the page would otherwise keep the old view's scroll and put the reader mid-page. The sticky top bar
  // stays clear of it; an embed's view scrolls in its own box (share.css).
  function showViewTop() {
    dom.view.scrollTop = 0;
    const above = dom.view.getBoundingClientRect().top - (document.querySelector('.topbar')?.offsetHeight ?? 0);
    if (above < 0) scrollBy(0, above);
  }

  // Drops the mounted view so that refresh() builds it again: its strings or colours changed.
  function remount() {
    if (page.current) page.current.instance.destroy();
    page.current = null;
    refresh();
  }

  return { status, refresh, remount };
}

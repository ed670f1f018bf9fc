// Logit lens: what the model would predict if it stopped after each layer. The core reads every
// layer's output through the final RMSNorm and lm_head (`layers.{l}.logit_lens`, [T, V], asked for
// with the run's `logitLens`); this view lays the result out as layers × positions, each cell the
// top token with its probability (the core's softmax over the whole vocabulary, the worker's `top`),
// so the reader sees the prediction form layer by layer. A cell opens its top-k below.

import { el } from '../parts/dom.js';
import { range, tokenAt } from '../parts/controls.js';
import { candidateBars } from '../parts/prediction.js';
import { percent, tokenText } from '../parts/format.js';
import { pageHref } from '../link.js';
import { scrollFade } from '../parts/scroll_fade.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

// Positions drawn at once: each cell is one softmax over the vocabulary in the worker, so a long
// input shows its last ones.
const MAX_POSITIONS = 48;

export function mount(root, app) {
  const { state } = app;
  const table = el('div', { className: 'table-scroll lens-scroll' });
  // More positions to the right than fit: the right edge fades (the sticky layer names keep the left).
  const fade = scrollFade(table, undefined, { cue: true });
  const note = el('p', { className: 'hint' });
  // Said only while the table is scrolled away from its first columns (it opens on the chosen cell).
  const scrolled = el('p', { className: 'hint lens-scrolled', hidden: true }, t('lens.scrolled'));
  const detail = el('div', { attrs: { 'aria-live': 'polite' } });
  root.append(
    el('p', { className: 'explain' }, t('lens.explain')),
    el('section', { className: 'card' }, el('h3', {}, t('lens.title')), note, scrolled, table),
    el('section', { className: 'card' }, detail),
  );
  const updates = latest();
  // Scrolled: the note says so, and the sticky layer names cast a shadow over the columns under them.
  const showScrolled = () => {
    scrolled.hidden = table.scrollLeft <= 1;
    table.classList.toggle('scrolled', !scrolled.hidden);
  };
  table.addEventListener('scroll', showScrolled, { passive: true });

  // A table wider than its box opens on the chosen cell (by default the last position, the model's
  // prediction), not on its first columns; and stays there while its box changes width (an embed's
  // layout settling, a scrollbar coming and going) until the reader scrolls it.
  let placed = null; // the scroll the view set, or null once the reader has scrolled
  function place() {
    placed = null;
    const selected = table.querySelector('.lens-cell.selected');
    if (table.firstElementChild) table.firstElementChild.style.marginRight = '';
    if (selected && table.scrollWidth > table.clientWidth) {
      const cellBox = selected.getBoundingClientRect();
      const box = table.getBoundingClientRect();
      // The sticky layer names cover the table's left edge: the chosen cell is centred in the rest.
      const names = table.querySelector('th[scope="row"]').getBoundingClientRect().width;
      const left = box.left + names;
      const width = box.width - names;
      if (cellBox.right > box.right || cellBox.left < left + width / 4) table.scrollLeft += cellBox.left - left - width / 2 + cellBox.width / 2;
      // A column cut by the layer names is scrolled out of sight whole: no sliver of it is left. At
      // the table's end the table gets the few pixels of room on its right that this takes.
      const cut = [...table.querySelectorAll('thead th.lens-input')].map((th) => th.getBoundingClientRect()).find((r) => r.left < left - 1 && r.right > left + 1);
      if (cut) {
        const by = cut.right - left;
        const room = table.scrollWidth - table.clientWidth - table.scrollLeft;
        if (by > room) table.firstElementChild.style.marginRight = `${Math.ceil(by - room)}px`;
        table.scrollLeft += by;
      }
    }
    placed = table.scrollLeft;
  }
  table.addEventListener('scroll', () => {
    if (placed !== null && Math.abs(table.scrollLeft - placed) > 1) placed = null;
  }, { passive: true });
  const resized = new ResizeObserver(() => {
    if (placed === null) return;
    place();
    showScrolled();
  });
  resized.observe(table);

  async function update() {
    const signal = updates.start();
    const L = app.model.num_hidden_layers;
    const names = range(L).map((l) => `layers.${l}.logit_lens`);
    const found = await app.tensors(names, { logitLens: true });
    if (signal.aborted) return;
    const [T, V] = found.get(names[0]).shape;
    const from = Math.max(0, T - MAX_POSITIONS);
    const positions = range(T - from).map((k) => from + k);
    const row = (l, i) => found.get(names[l]).data.slice(i * V, (i + 1) * V);
    // Each layer's cells in one request (a row of V logits per position), not one per cell; a post's
    // core of an earlier release, which knows only 'top' (its answer: "handlers[type] is not a
    // function"), is asked cell by cell. Any other failure (an input changed, a cancel) stays one.
    const layerRows = (l) => found.get(names[l]).data.slice(from * V, T * V);
    const unknownRequest = (err) => /is not a function/.test(err?.message ?? '');
    const layerTops = (l) =>
      app.call('tops', { logits: layerRows(l), rows: positions.length, k: 1 }).catch((err) => {
        if (!unknownRequest(err) || signal.aborted) throw err;
        return Promise.all(positions.map((i) => app.call('top', { logits: row(l, i), k: 1 })));
      });
    const tops = await Promise.all(range(L).map(layerTops));
    if (signal.aborted) return;
    const { pieces, ids } = state.tokens;
    const at = tokenAt(app, 'query');
    const cell = (l, k) => {
      const i = positions[k];
      const [top] = tops[l][k];
      const hit = i + 1 < ids.length && top.id === ids[i + 1];
      return el(
        'td',
        {},
        el(
          'button',
          {
            type: 'button',
            className: `lens-cell${l === state.layer && i === at ? ' selected' : ''}${hit ? ' hit' : ''}`,
            style: { backgroundColor: `color-mix(in srgb, var(--accent) ${(top.p * 55).toFixed(1)}%, var(--surface))` },
            dataset: { layer: l, position: i, id: top.id, value: String(top.p), figure: '' },
            title: t('lens.cellTip', { l, i, token: tokenText(top.piece), p: percent(top.p) }),
            on: { click: () => app.set({ layer: l, query: i }) },
          },
          el('span', { className: 'lens-token' }, tokenText(top.piece)),
          el('span', { className: 'lens-p' }, percent(top.p)),
        ),
      );
    };
    table.replaceChildren(
      el(
        'table',
        { className: 'data-table lens-table' },
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, t('lens.corner')), positions.map((i) => el('th', { scope: 'col', className: 'lens-input' }, el('span', { className: 'lens-index' }, String(i)), el('span', { className: 'lens-input-token' }, tokenText(pieces[i])))))),
        el('tbody', {}, range(L).map((l) => el('tr', {}, el('th', { scope: 'row' }, t('grid.layer', { l })), positions.map((_, k) => cell(l, k))))),
      ),
    );
    place();
    showScrolled();
    fade.mark();
    note.textContent = from > 0 ? t('lens.lastPositions', { n: positions.length, T }) : t('lens.note', { v: V });
    const l = Math.min(state.layer, L - 1);
    const i = Math.max(at, from);
    const topK = await app.call('top', { logits: row(l, i), k: 10 });
    // Short of the last layer the cell is not the model's answer: that is said above it, and the
    // last layer's top ten (the overview's prediction at the last position) stand beside it.
    const finalTop = l < L - 1 ? await app.call('top', { logits: row(L - 1, i), k: 10 }) : null;
    const final = finalTop?.[0] ?? null;
    if (signal.aborted) return;
    const heading = t(l < L - 1 ? 'lens.detailEarly' : 'lens.detail', { l, n: L, last: L - 1, i, token: tokenText(pieces[i]) });
    const actual = i + 1 < ids.length ? ids[i + 1] : null;
    // From what the layers predict to which heads push it: head attribution at the same position.
    const toAttribution = el('a', { className: 'lens-to-attribution', href: pageHref({ view: 'attribution' }), on: { click: (e) => { e.preventDefault(); app.set({ query: i }); app.go('attribution'); } } }, t('lens.toAttribution', { i }));
    // Short of the last layer, one click shows the model's own answer (the last row) here.
    const toFinal = el('button', { type: 'button', className: 'action secondary lens-to-final', on: { click: () => app.set({ layer: L - 1 }) } }, t('lens.toFinal', { last: L - 1 }));
    const notFinal = final ? [el('p', { className: 'lens-not-final', dataset: { layer: L - 1 } }, t('lens.notFinal', { l, last: L - 1, token: tokenText(final.piece), p: percent(final.p) }), ' ', toFinal)] : [];
    const bars = candidateBars(topK, { label: heading, mark: actual, markNote: t('output.actual') });
    // The early read-out and the model's answer side by side (stacked on a narrow screen).
    let shown = bars;
    if (finalTop) {
      const finalHeading = t('lens.finalBeside', { last: L - 1 });
      shown = el('div', { className: 'lens-side-by-side' },
        el('div', { className: 'lens-early' }, el('h4', {}, t('lens.earlyBeside', { l })), bars),
        el('div', { className: 'lens-final' }, el('h4', {}, finalHeading), candidateBars(finalTop, { label: finalHeading, mark: actual, markNote: t('output.actual') })));
    }
    detail.replaceChildren(el('h3', {}, heading), ...notFinal, el('p', { className: 'hint' }, t('lens.detailNote', { l, v: V })), shown, el('p', {}, toAttribution));
  }

  return {
    update,
    destroy() {
      updates.abort();
      fade.destroy();
      resized.disconnect();
    },
  };
}

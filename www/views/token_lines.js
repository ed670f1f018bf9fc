// Token lines (BertViz's head view): the tokens twice, queries on the left and keys on the right,
// with a line from query i to key j whose width and opacity follow probs[h, i, j]. Hovering a
// token shows only its lines; clicking a query pins it. "All heads" overlays every head of the
// layer, one colour per head (Okabe-Ito, colour-blind safe).

import { el, svg } from '../parts/dom.js';
import { layerSelect, headSelect, range } from '../parts/controls.js';
import { showTooltip, hideTooltip } from '../parts/tooltip.js';
import { exact, axisLabel, tokenText } from '../parts/format.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

// The eighth, Okabe-Ito's black, is the text colour (currentColor), so it stays visible in dark mode.
const HEAD_COLOURS = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', 'currentColor'];
const ROW = 26;
// The key's swatch for head h: currentColor there would be the legend's grey, not the lines' ink.
const swatchColour = (h) => (HEAD_COLOURS[h % HEAD_COLOURS.length] === 'currentColor' ? 'var(--ink)' : HEAD_COLOURS[h % HEAD_COLOURS.length]);
const TOP = 28;

export function mount(root, app) {
  const { state } = app;
  const controls = [layerSelect(app), headSelect(app)];
  const allBox = el('input', { type: 'checkbox', id: 'lines-all', on: { change: () => app.set({ allHeads: allBox.checked }) } });
  const stage = el('div', { className: 'lines-stage' });
  // With all heads on: which colour is which head (the head picker has nothing to pick then).
  const key = el('div', { className: 'legend lines-key', hidden: true });
  const explain = el('p', { className: 'explain' });
  root.append(
    el('div', { className: 'toolbar' }, controls.map((c) => c.node), el('label', { className: 'switch' }, allBox, el('span', {}, t('control.allHeads')))),
    explain,
    key,
    stage,
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    controls.forEach((c) => c.update());
    allBox.checked = !!state.allHeads;
    controls[1].node.querySelector('select').disabled = !!state.allHeads;
    const name = `layers.${state.layer}.attn.probs`;
    const tensor = (await app.tensors([name])).get(name);
    if (signal.aborted) return;
    draw(name, tensor);
  }

  function draw(name, { data, shape }) {
    const [nH, T, S] = shape;
    const heads = state.allHeads ? range(nH) : [state.head];
    const width = Math.min(640, Math.max(320, stage.clientWidth || 640));
    const leftX = width * 0.3;
    const rightX = width * 0.7;
    const height = TOP + Math.max(T, S) * ROW + 8;
    const y = (i) => TOP + i * ROW + ROW / 2;
    const pinned = () => (state.query === null || state.query === undefined ? null : { side: 'q', index: state.query });

    key.hidden = !state.allHeads;
    // With every head, colour says which head: only width and opacity say how much.
    explain.textContent = t(state.allHeads ? 'lines.explainAll' : 'lines.explain');
    key.replaceChildren(
      ...(state.allHeads
        ? [el('span', {}, t('lines.keyTitle')), ...heads.map((h) => el('span', { className: 'legend-item', dataset: { head: h } }, el('span', { className: 'swatch', style: { background: swatchColour(h) } }), t('lines.headN', { h })))]
        : []),
    );
    const lines = [];
    for (const h of heads) {
      const colour = state.allHeads ? HEAD_COLOURS[h % HEAD_COLOURS.length] : '#2b59c3';
      for (let i = 0; i < T; i++) {
        for (let j = 0; j < S; j++) {
          const p = data[(h * T + i) * S + j];
          if (!(p > 0.005)) continue;
          const line = svg('line', {
            x1: leftX + 8,
            y1: y(i),
            x2: rightX - 8,
            y2: y(j),
            stroke: colour,
            'stroke-width': (0.75 + 5 * p).toFixed(2),
            'stroke-opacity': Math.min(1, 0.08 + p).toFixed(3),
            'stroke-linecap': 'round',
            class: 'attn-line',
            'data-q': i,
            'data-k': j,
          });
          const where = [[name, `[${h}, ${i}, ${j}]`], [t('tip.query'), `${i} ${tokenText(state.tokens.pieces[i])}`], [t('tip.key'), `${j} ${tokenText(state.tokens.pieces[j])}`], [t('tip.prob'), exact(p)]];
          line.addEventListener('mousemove', (e) => showTooltip(e.clientX, e.clientY, where, exact(p)));
          line.addEventListener('mouseleave', hideTooltip);
          lines.push(line);
        }
      }
    }

    // Only the focused token's lines stay visible; the SVG is not rebuilt on hover.
    const tokens = [];
    const applyFocus = (focus) => {
      const key = focus?.side === 'q' ? 'q' : 'k';
      for (const line of lines) line.classList.toggle('hidden', !!focus && Number(line.dataset[key]) !== focus.index);
      for (const node of tokens) node.classList.toggle('active', !!focus && node.dataset.side === focus.side && Number(node.dataset.index) === focus.index);
    };

    const token = (side, i, x, anchor) => {
      const node = svg(
        'text',
        {
          x,
          y: y(i),
          'text-anchor': anchor,
          'dominant-baseline': 'middle',
          class: state.mask[i] === 0 ? 'token padded' : 'token',
          tabindex: 0,
          'data-side': side,
          'data-index': i,
        },
        axisLabel(state.tokens.pieces[i], 14),
      );
      const enter = () => applyFocus({ side, index: i });
      const leave = () => applyFocus(pinned());
      node.addEventListener('mouseenter', enter);
      node.addEventListener('focus', enter);
      node.addEventListener('mouseleave', leave);
      node.addEventListener('blur', leave);
      if (side === 'q') node.addEventListener('click', () => app.set({ query: state.query === i ? null : i }));
      tokens.push(node);
      return node;
    };

    stage.replaceChildren(
      svg(
        'svg',
        { width, height, viewBox: `0 0 ${width} ${height}`, class: 'lines-svg', role: 'group', 'aria-label': `${name}, ${state.allHeads ? t('control.allHeads') : `${t('tip.head')} ${state.head}`}` },
        svg('text', { x: leftX, y: 12, 'text-anchor': 'end', class: 'column-title' }, t('lines.queries')),
        svg('text', { x: rightX, y: 12, 'text-anchor': 'start', class: 'column-title' }, t('lines.keys')),
        svg('g', {}, lines),
        svg('g', {}, range(T).map((i) => token('q', i, leftX, 'end'))),
        svg('g', {}, range(S).map((j) => token('k', j, rightX, 'start'))),
      ),
    );
    applyFocus(pinned());
  }

  return {
    update,
    destroy() {
      updates.abort();
      hideTooltip();
    },
  };
}

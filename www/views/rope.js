// RoPE: what "rotate half" does to a head's query (docs/minimind-semantics.md, step 4).
// Three figures, all from the core: the rotation angle p · inv_freq[i] of every dimension pair i
// against position p (ropeAngles), beside each pair's wavelength with YaRN off and on; one token's
// q before (q_norm) and after rotation (ropeRotate), pair by pair as arrows on a circle; and the
// score of the same query and key vectors as their distance grows (ropeScores), YaRN off and on.
// The YaRN switch picks the rotation the angle map and the circles use.

import { el, svg } from '../parts/dom.js';
import { heatmap } from '../parts/heatmap.js';
import { lineChart } from '../parts/line_chart.js';
import { value } from '../parts/value.js';
import { layerSelect, headSelect, tokenSelect, tokenAt, range } from '../parts/controls.js';
import { sequential } from '../parts/color_scale.js';
import { exact, powerOfTen, tokenText, spaced } from '../parts/format.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';

const ANGLE_POSITIONS = 64;
const MAX_DISTANCE = 256;
const CIRCLE = 64;

export function mount(root, app) {
  const { state } = app;
  const controls = [layerSelect(app), headSelect(app), tokenSelect(app, 'query', 'control.query'), tokenSelect(app, 'key', 'control.key', true)];
  const yarnBox = el('input', { type: 'checkbox', id: 'rope-yarn', on: { change: () => app.set({ yarn: yarnBox.checked }) } });
  const angleMap = heatmap();
  const angleRow = el('div', { className: 'split' });
  const rotation = el('div', {});
  const distance = el('div', {});
  // What the switch is: this view's pictures with or without YaRN, not the model's own setting.
  const yarnNote = el('p', { className: 'hint', dataset: { note: 'yarn' } });
  root.append(
    el('div', { className: 'toolbar' }, controls.map((c) => c.node), el('label', { className: 'switch' }, yarnBox, el('span', {}, t('rope.yarn')))),
    // What RoPE is comes first, in words and then exactly; what the YaRN switch does, after it.
    el('p', { className: 'explain rope-gist' }, t('rope.gist')),
    el('p', { className: 'explain' }, t('rope.explain', { theta: powerOfTen(Number(app.model.rope_theta)) })),
    yarnNote,
    el('section', { className: 'card' }, el('h3', {}, t('rope.anglesHeading')), el('p', { className: 'hint' }, t('rope.anglesNote')), angleRow),
    el('section', { className: 'card' }, el('h3', {}, t('rope.rotationHeading')), rotation),
    el('section', { className: 'card' }, el('h3', {}, t('rope.distanceHeading')), distance),
  );
  const updates = latest();

  async function update() {
    const signal = updates.start();
    controls.forEach((c) => c.update());
    yarnBox.checked = !!state.yarn;
    const yarn = !!state.yarn;
    yarnNote.textContent = t(app.model.inference_rope_scaling ? 'rope.yarnNoteOn' : 'rope.yarnNoteOff');
    const l = state.layer;
    const h = state.head;
    const names = [`layers.${l}.attn.q_norm`, `layers.${l}.attn.k_norm`, `layers.${l}.attn.q_rope`];
    const found = await app.tensors(names);
    if (signal.aborted) return;
    const [qNorm, kNorm, qRope] = names.map((n) => found.get(n));
    const [, nH, d] = qNorm.shape;
    const nKV = kNorm.shape[1];
    const kv = Math.floor(h / (nH / nKV));
    const i = tokenAt(app, 'query');
    const j = tokenAt(app, 'key', true);
    const q = qNorm.data.slice((i * nH + h) * d, (i * nH + h + 1) * d);
    const k = kNorm.data.slice((j * nKV + kv) * d, (j * nKV + kv + 1) * d);
    const positions = Math.min(ANGLE_POSITIONS, app.model.max_position_embeddings);
    const maxDistance = Math.min(MAX_DISTANCE, app.model.max_position_embeddings - 1);
    const [off, on, rotated, scoresOff, scoresOn] = await Promise.all([
      app.call('ropeAngles', { positions, yarn: false }),
      app.call('ropeAngles', { positions, yarn: true }),
      app.call('ropeRotate', { x: q, position: i, yarn }),
      app.call('ropeScores', { q, k, maxDistance, yarn: false }),
      app.call('ropeScores', { q, k, maxDistance, yarn: true }),
    ]);
    if (signal.aborted) return;

    const half = d / 2;
    const { angles } = yarn ? on : off;
    // Pairs down, positions across; the angle wrapped to one turn, so fast pairs show stripes.
    const wrapped = Float32Array.from({ length: half * positions }, (_, at) => angles[(at % positions) * half + Math.floor(at / positions)] % (2 * Math.PI));
    angleMap.update({
      cells: { data: wrapped, rows: half, cols: positions, maxCell: 10 },
      // One turn, ticked as an angle: 0, π, 2π (radians) rather than 0, 3.14, 6.28.
      scale: { ...sequential(0, 2 * Math.PI), ticks: ['0', 'π', t('rope.twoPi')] },
      labels: { rows: half <= 16 ? range(half).map((pair) => `${t('rope.pair')} ${pair}`) : null },
      interaction: {
        name: `${t('rope.anglesHeading')}, ${t(yarn ? 'rope.yarnOn' : 'rope.yarnOff')}`,
        describe: (pair, p) => [
          [t('rope.position'), p],
          [t('rope.pair'), `(${pair}, ${pair + half})`],
          [t('rope.angle'), exact(angles[p * half + pair])],
          [t('rope.frequency'), exact(angles[half + pair])],
        ],
      },
    });
    // Positions per full turn, 2π / inv_freq: the angles at position 1 are inv_freq itself.
    const wavelength = ({ angles: a }) => Float32Array.from({ length: half }, (_, pair) => (2 * Math.PI) / a[half + pair]);
    angleRow.replaceChildren(
      el('figure', { className: 'panel-cell', dataset: { panel: 'angles' } }, el('figcaption', { className: 'panel-title' }, t(yarn ? 'rope.yarnOn' : 'rope.yarnOff')), angleMap.node),
      el(
        'figure',
        { className: 'panel-cell', dataset: { panel: 'wavelength' } },
        el('figcaption', { className: 'panel-title' }, t('rope.wavelengthHeading')),
        el('div', { className: 'chart-legend' }, el('span', { className: 'key series-a' }, t('rope.yarnOff')), el('span', { className: 'key series-b' }, t('rope.yarnOn'))),
        lineChart({
          xs: range(half),
          series: [
            { name: t('rope.yarnOff'), values: wavelength(off), className: 'series-a' },
            { name: t('rope.yarnOn'), values: wavelength(on), className: 'series-b' },
          ],
          xLabel: t('rope.pair'),
          yLabel: t('rope.wavelength'),
          label: t('rope.wavelengthHeading'),
          logY: true,
          width: 420,
        }).node,
      ),
    );

    const rot = rotated.rotated;
    const matchesTrace = !yarn === !app.model.inference_rope_scaling;
    const traced = qRope.data.subarray((i * nH + h) * d, (i * nH + h + 1) * d);
    const traceDiff = Math.max(...Array.from(rot, (v, n) => Math.abs(v - traced[n])));
    rotation.replaceChildren(
      el('p', { className: 'hint' }, t('rope.rotationNote', { i, token: tokenText(state.tokens.pieces[i]), h })),
      el('div', { className: 'circles', attrs: { role: 'list' } }, range(half).map((pair) => circle(pair, half, q, rot))),
      // replaceChildren is the DOM's own, not el(): it would print a bare `false`.
      matchesTrace
        ? el('p', { className: 'check', dataset: { check: 'rope-trace' } }, spaced(t('rope.traceCheck')), value(traceDiff, 7), traceDiff <= 1e-5 ? ' ✓' : ' ✗')
        : el('p', { className: 'hint', dataset: { check: 'none' } }, t('rope.noCheck', { state: t(app.model.inference_rope_scaling ? 'rope.withYarn' : 'rope.withoutYarn') })),
    );

    const xs = range(maxDistance + 1);
    const chart = lineChart({
      xs,
      series: [
        { name: t('rope.yarnOff'), values: scoresOff.scores, className: 'series-a' },
        { name: t('rope.yarnOn'), values: scoresOn.scores, className: 'series-b' },
      ],
      markers: i >= j ? [{ x: i - j, label: t('rope.here', { n: i - j }) }] : [],
      xLabel: t('rope.distance'),
      yLabel: t('rope.score'),
      label: t('rope.distanceHeading'),
    });
    distance.replaceChildren(
      el('p', { className: 'hint' }, t('rope.distanceNote', { i, j, h, kv })),
      el('div', { className: 'chart-legend' }, el('span', { className: 'key series-a' }, t('rope.yarnOff')), el('span', { className: 'key series-b' }, t('rope.yarnOn'))),
      chart.node,
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
      angleMap.destroy();
    },
  };
}

// One dimension pair (i, i + d/2) as a 2-D vector before (grey) and after (accent) its rotation.
function circle(pair, half, before, after) {
  const r = CIRCLE / 2 - 4;
  const c = CIRCLE / 2;
  const len = Math.max(Math.hypot(before[pair], before[pair + half]), 1e-12);
  const tip = (x, y) => ({ x: c + (x / len) * r, y: c - (y / len) * r });
  const a = tip(before[pair], before[pair + half]);
  const b = tip(after[pair], after[pair + half]);
  const label = t('rope.pairLabel', { pair, other: pair + half, x: exact(before[pair]), y: exact(before[pair + half]), rx: exact(after[pair]), ry: exact(after[pair + half]) });
  return el(
    'div',
    { className: 'circle-cell', attrs: { role: 'listitem' }, title: label },
    svg(
      'svg',
      { width: CIRCLE, height: CIRCLE, viewBox: `0 0 ${CIRCLE} ${CIRCLE}`, role: 'img', 'aria-label': label },
      svg('circle', { class: 'circle-ring', cx: c, cy: c, r }),
      svg('line', { class: 'circle-before', x1: c, y1: c, x2: a.x, y2: a.y }),
      svg('line', { class: 'circle-after', x1: c, y1: c, x2: b.x, y2: b.y }),
    ),
    el('span', { className: 'circle-label' }, pair),
  );
}

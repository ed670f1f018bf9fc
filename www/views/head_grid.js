// The head grid: every layer x head attention pattern as a small multiple, all on one colour scale
// (BertViz's model view). Query heads that share a KV head under GQA are framed together and the
// frame is labelled "KV j", so repeat_kv is visible: the heads in a frame read the same keys.
// Under each thumbnail is what the core measured that head doing on this input (parts/head_roles.js),
// and the roles can be picked out: the others fade. The induction probe (parts/induction_probe.js)
// adds induction and duplicate-token roles, and its own map of one head, when the link says probe.
// The grid is an overview at any length: thumbnails keep one size, a long input is max-pooled into
// it (parts/pool.js) instead of growing the page, and many heads scroll inside the grid's own box.
// Clicking a thumbnail (or Enter on it) opens that head, at full resolution, in the attention map;
// its ⊘ button knocks the head out (parts/ablation.js), and a knocked-out head is struck through.

import { el } from '../parts/dom.js';
import { causalFuture, hatchesPaddedKeys, heatmap, paintAll, paddedKeys } from '../parts/heatmap.js';
import { legend, marksOf } from '../parts/legend.js';
import { stageName, stageSelect, stageValues, STAGES, range } from '../parts/controls.js';
import { scaleFor } from '../parts/color_scale.js';
import { indexLabel, tokenText } from '../parts/format.js';
import { maxPool } from '../parts/pool.js';
import { showTooltip, hideTooltip } from '../parts/tooltip.js';
import { headRoles, roleBadge, roleDetail, ROLES, PROBE_ROLES, roleLegend, MIN_ROWS } from '../parts/head_roles.js';
import { probeHeads, probeSection, withProbe } from '../parts/induction_probe.js';
import { ablateToggle, isAblated } from '../parts/ablation.js';
import { t } from '../strings.js';
import { errorText } from '../page/error_text.js';
import { scrollFade } from '../parts/scroll_fade.js';
import { latest } from '../page/latest.js';

// A thumbnail's side in CSS px: as large as lets a layer's heads fit the page, within these bounds.
// The lower one keeps a role label to two lines ("盯住同一个 / token 0.32", "one fixed / token 0.41");
// at 64 px the Chinese ones took three or four. A narrow page scrolls the grid in its own box.
const THUMB_MAX = 112;
const THUMB_MIN = 72;
// An embedded grid is a figure in a post's column: a row of 8 heads fits 700 px with thumbnails this
// small (their labels take a third line), rather than leaving the last heads beyond its edge.
const EMBED_THUMB_MIN = 54;
// Above this many cells per head, the grid pauses between layers while it pools.
const YIELD_CELLS = 128 * 128;

// A role label that says its every measure when pressed (by `show`), by mouse, finger or keyboard.
function detailButton(badge, show) {
  badge.tabIndex = 0;
  badge.setAttribute('role', 'button');
  badge.classList.add('role-badge-button');
  badge.addEventListener('click', (e) => {
    e.stopPropagation();
    show(badge);
  });
  badge.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' && e.key !== ' ') return;
    e.preventDefault();
    e.stopPropagation();
    show(badge);
  });
  return badge;
}

export function mount(root, app) {
  const { state } = app;
  const stage = stageSelect(app);
  const filterId = `role-filter-${Math.random().toString(36).slice(2, 7)}`;
  const filter = el('select', { id: filterId, className: 'role-filter', on: { change: () => showRole(filter.value) } });
  const grid = el('div', { className: 'head-grid' });
  const legendSlot = el('div', { className: 'grid-legend' });
  const probe = probeSection(app);
  let roleKey = roleLegend(false);
  // Wider than a phone, the grid scrolls in its own box, its edge fading where more heads lie beyond.
  const scroller = el('div', { className: 'grid-scroll' }, grid);
  // On a phone only some heads fit: said in words above the grid, not left to the faded edge.
  const scrollNote = el('p', { className: 'hint grid-scroll-note', hidden: true });
  const fade = scrollFade(scroller, (edge) => {
    scrollNote.hidden = !edge;
    scrollNote.textContent = edge ? t('grid.scrollNote', { n: app.model?.num_attention_heads ?? 0 }) : '';
  }, { cue: true });
  // A label's every measure, in words under the grid when the label is tapped or clicked (a touch
  // screen shows no tooltip).
  const roleDetailLine = el('p', { className: 'hint grid-role-detail', hidden: true, attrs: { 'aria-live': 'polite' } });
  // No head labelled (every label "too short to tell", every filter at 0): why, in words above the
  // grid, with the input's real tokens counted (a padded lesson sentence has only a few).
  const unmeasuredNote = el('p', { className: 'explain grid-unmeasured', hidden: true });
  // ... and beside the label itself, where the reader is looking (the line may be a screen below).
  function showDetail(l, h, role, badge) {
    const text = t('grid.roleDetail', { l, h, detail: roleDetail(role, state.tokens.pieces) });
    roleDetailLine.hidden = false;
    roleDetailLine.textContent = text;
    const r = badge.getBoundingClientRect();
    showTooltip(r.left, r.bottom, [text]);
    // The next press anywhere puts it away, as moving the mouse off a heatmap does.
    setTimeout(() => document.addEventListener('pointerdown', hideTooltip, { once: true }), 0);
  }
  root.append(
    el('div', { className: 'toolbar' }, stage.node, el('div', { className: 'picker' }, el('label', { htmlFor: filterId }, t('grid.roleFilter')), filter)),
    el('p', { className: 'explain' }, t('grid.explain')),
    el('p', { className: 'explain' }, t('grid.rolesExplain')),
    roleKey,
    unmeasuredNote,
    probe.node,
    scrollNote,
    scroller,
    roleDetailLine,
    legendSlot,
    probe.mapNode,
  );
  let maps = [];
  const updates = latest();

  function open(layer, head) {
    app.set({ layer, head });
    app.go('attention');
  }

  function showRole(role) {
    for (const thumb of grid.querySelectorAll('.thumb')) thumb.classList.toggle('dimmed', role !== '' && thumb.dataset.role !== role);
  }

  function fillFilter(roles) {
    const count = (role) => roles.flat().filter((r) => r?.role === role).length;
    const keep = filter.value;
    // A role no head has is there but greyed (picking it would fade every head and say nothing); the
    // two roles only the induction probe measures say so until it has run.
    const option = (role) => {
      const n = count(role);
      const unprobed = !state.probe && PROBE_ROLES.includes(role);
      return el('option', { value: role, disabled: n === 0 && role !== keep }, t(unprobed ? 'grid.roleOptionProbe' : 'grid.roleOption', { role: t(`role.${role}`), n }));
    };
    filter.replaceChildren(el('option', { value: '' }, t('grid.roleAll')), ...ROLES.map(option));
    filter.value = ROLES.includes(keep) ? keep : '';
  }

  async function update() {
    const signal = updates.start();
    stage.update();
    const { num_hidden_layers: L, num_attention_heads: nH, num_key_value_heads: nKV } = app.model;
    const rep = nH / nKV;
    const names = range(L).map((l) => `layers.${l}.${STAGES[state.stage]}`);
    const [recorded, live, probed] = await Promise.all([app.tensors(names), headRoles(app), state.probe ? probeHeads(app).catch((err) => ({ error: errorText(err) })) : null]);
    if (signal.aborted) return;
    // The stage's numbers (the raw scores are the recorded scaled ones × √d), by tensor name.
    const found = new Map(names.map((n) => [n, { ...recorded.get(n), data: stageValues(app, state.stage, recorded.get(n).data) }]));
    const probing = probed && !probed.error ? probed : null;
    const roles = live.map((heads, l) => heads.map((r, h) => withProbe(r, probing?.heads[l]?.[h])));
    maps.forEach((m) => m.destroy());
    maps = [];

    const [, T, S] = found.get(names[0]).shape;
    const scale = scaleFor(names[0], names.map((n) => found.get(n).data));
    const embedded = document.documentElement.classList.contains('embed');
    const side = Math.max(embedded ? EMBED_THUMB_MIN : THUMB_MIN, Math.min(THUMB_MAX, Math.floor((root.clientWidth - 60) / nH - 22)));
    const items = [];
    const future = state.stage === 'probs' && state.causal;
    const padKeys = hatchesPaddedKeys(state.stage === 'probs', state.mask);
    grid.style.gridTemplateColumns = `auto repeat(${nH}, ${side + 4}px)`;
    for (let g = 0; g < nKV; g++) {
      const column = 2 + g * rep;
      items.push(el('div', { className: 'kv-frame', style: { gridColumn: `${column} / span ${rep}`, gridRow: `1 / span ${L + 2}` } }));
      items.push(el('div', { className: 'kv-label', style: { gridColumn: `${column} / span ${rep}`, gridRow: '1' } }, t('grid.kv', { kv: g })));
    }
    for (let h = 0; h < nH; h++) items.push(el('div', { className: 'head-label', style: { gridColumn: String(2 + h), gridRow: '2' } }, `${t('tip.head')} ${h}`));
    const pieces = state.tokens.pieces;
    // A block of tokens by its range, or the token itself when the block holds one.
    const span = (start, b) => (start[b + 1] - start[b] === 1 ? `${start[b]} ${tokenText(pieces[start[b]])}` : `${start[b]}–${start[b + 1] - 1}`);
    for (let l = 0; l < L; l++) {
      // Pooling a long input costs T x S per head: a pause between layers lets clicks and typing in.
      if (l > 0 && T * S > YIELD_CELLS) {
        await new Promise((resume) => setTimeout(resume));
        if (signal.aborted) return;
      }
      const data = found.get(names[l]).data;
      items.push(el('div', { className: 'layer-label', style: { gridRow: String(3 + l), gridColumn: '1' } }, t('grid.layer', { l })));
      for (let h = 0; h < nH; h++) {
        const head = data.subarray(h * T * S, (h + 1) * T * S);
        // A causal run's weights hatch the future, as the attention map does (a block wholly in the
        // future stays −∞ through the max).
        // A padded key's weight 0 is hatched as the attention map and the masks hatch it.
        const hatched = future ? causalFuture(head, T, S) : head;
        const pooled = maxPool(padKeys ? paddedKeys(hatched, T, S, state.mask) : hatched, T, S, side, side, state.mask);
        const many = pooled.rows < T || pooled.cols < S;
        const map = heatmap();
        maps.push(map);
        map.update({
          cells: { data: pooled.data, rows: pooled.rows, cols: pooled.cols, rowMask: pooled.rowMask, square: true, maxCell: side / Math.max(pooled.rows, pooled.cols), future, padKeys },
          scale,
          legend: false,
          interaction: {
            name: t('grid.open', { l, h }),
            describe: (i, j) => [
              [stageName(app, state.stage, names[l]), indexLabel(h, span(pooled.rowStart, i), span(pooled.colStart, j))],
              [t('tip.query'), span(pooled.rowStart, i)],
              [t('tip.key'), span(pooled.colStart, j)],
              ...(many ? [[t('grid.pooled'), t('grid.pooledCells', { rows: pooled.rowStart[i + 1] - pooled.rowStart[i], cols: pooled.colStart[j + 1] - pooled.colStart[j] })]] : []),
            ],
            onCellClick: () => open(l, h),
            onOpen: () => open(l, h),
          },
        });
        const role = roles[l]?.[h] ?? null;
        const selected = l === state.layer && h === state.head;
        items.push(
          el(
            'div',
            {
              className: `thumb${selected ? ' selected' : ''}${isAblated(state, l, h) ? ' ablated' : ''}`,
              title: t('grid.open', { l, h }),
              dataset: { layer: l, head: h, role: role?.role ?? '' },
              style: { gridRow: String(3 + l), gridColumn: String(2 + h), width: `${side + 4}px` },
            },
            map.node,
            detailButton(roleBadge(role, state.tokens.pieces, { compact: true }), (badge) => showDetail(l, h, role, badge)),
            ablateToggle(app, l, h, { short: true }),
          ),
        );
      }
    }
    grid.replaceChildren(...items);
    paintAll(maps);
    const padded = state.mask.filter((m) => !m).length;
    unmeasuredNote.hidden = roles.flat().some((r) => r?.role);
    unmeasuredNote.textContent = unmeasuredNote.hidden ? '' : t(padded ? 'grid.unmeasuredPadded' : 'grid.unmeasured', { n: T - padded, pad: padded, min: MIN_ROWS });
    fade.mark();
    fillFilter(roles);
    showRole(filter.value);
    const key = roleLegend(Boolean(probing));
    roleKey.replaceWith(key);
    roleKey = key;
    const first = found.get(names[0]).data.subarray(0, T * S);
    const marks = marksOf(future ? causalFuture(first, T, S) : found.get(names[0]).data, state.mask);
    const said = future ? { ...marks, neginf: false, future: marks.neginf } : marks;
    legendSlot.replaceChildren(legend(scale, padKeys ? { ...said, padding: false, paddedKeys: true } : said));
    await probe.update(probing, probed?.error);
  }

  return {
    update,
    destroy() {
      updates.abort();
      maps.forEach((m) => m.destroy());
      probe.destroy();
      fade.destroy();
    },
  };
}

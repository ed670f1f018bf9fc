// The attention map: one head of one layer as a T x S matrix, queries down, keys across, token
// text on both axes, at the stage the learner picks: the raw match scores, the scaled scores, the scores after the
// causal and padding masks, or the softmax probabilities. Each row's sum stands beside it, so a
// softmax row visibly adds up to 1 and a masked row shows what the mask removed. Above it, what the
// stage is and how to read the axes, then what the core measured this head doing on this input (parts/head_roles.js): its role, the score behind it,
// and what to look for in the picture. Under it, the row picked as the query (a click, the link's
// `query`, a lesson's door): where its weights go, and the heads where it looks most at another token.

import { el } from '../parts/dom.js';
import { headCells, headTip, heatmap } from '../parts/heatmap.js';
import { layerSelect, headSelect, stageSelect, stageName, stageValues, STAGES } from '../parts/controls.js';
import { scaleFor } from '../parts/color_scale.js';
import { fixed, gap, indexLabel, quoted, shapeLabel, tokenText } from '../parts/format.js';
import { rms } from '../parts/entropy.js';
import { clearestHeads, headRoles, lookFor, roleBadge, roleDetail, roleStretches, roleText } from '../parts/head_roles.js';
import { BUILTIN_CONTEXT } from '../model_source.js';
import { ablateToggle, isAblated } from '../parts/ablation.js';
import { pageLink } from '../link.js';
import { queryOf, queryRowBox, topKeys } from '../parts/query_row.js';
import { openTutorialPair, showsTutorialPair, smallModelNote } from '../parts/pair_head.js';
import { DOOR } from '../lessons/qk_match.js';
import { scrollFade } from '../parts/scroll_fade.js';
import { t } from '../strings.js';
import { latest } from '../page/latest.js';
import { LONG, blockCentre, overview, wholeRowSums, windowAt, windowCells } from '../parts/map_window.js';

// The three heads with the strongest clear role other than resting on the first token (previous
// token, itself, one fixed token), from parts/head_roles.js's measures of this run; null if none.
function otherHeads(roles, pieces, open) {
  const found = clearestHeads(roles, 3);
  if (found.length === 0) return null;
  return el(
    'p',
    { className: 'head-role-others' },
    el('strong', {}, t('role.tryOther')),
    found.map(({ l, h, r }) => el('button', { type: 'button', className: 'query-row-head', dataset: { layer: l, head: h }, on: { click: () => open(l, h) } }, t('role.tryHead', { l, h, role: roleText(r) }))),
  );
}

// "The row you follow, “她” (position 9): in this head its weight goes most to 红 0.41 · 了 0.12 …"
function followedLead(probs, h, row, pieces) {
  // Each token quoted, so a one-character token (了) does not read as part of the sentence.
  const keys = topKeys(probs, h, row).map(({ j, w }) => `${quoted(tokenText(pieces[j]))} ${fixed(w, 2)}`).join(t('overview.listSep'));
  return el('p', { className: 'followed-lead' }, t('attention.followedLead', { token: tokenText(pieces[row]), i: row, keys }));
}

// The tutorials' question asked of this run, on their sentence with 她 followed: the share of 她's
// weight that 红 (of 小红) gets in this head, its rank in the row, and the head of any layer that
// gives it the most. `layers`: every layer's probs [nH, T, S]. Null where 红 is not before 她.
function pairAnswer(layers, layer, h, row, pieces) {
  const target = pieces.lastIndexOf(DOOR.target, row);
  if (target < 0) return null;
  const at = ({ data, shape: [, T, S] }, head) => data.subarray((head * T + row) * S, (head * T + row + 1) * S);
  const mine = at(layers[layer], h);
  const w = mine[target];
  const seen = mine.subarray(0, row + 1);
  const rank = 1 + seen.filter((x) => x > w).length;
  let best = { layer, head: h, w };
  layers.forEach((probs, l) => {
    for (let hh = 0; hh < probs.shape[0]; hh++) {
      const x = at(probs, hh)[target];
      if (x > best.w) best = { layer: l, head: hh, w: x };
    }
  });
  const rankText = rank === 1 ? t('attention.pairRank1') : t('attention.pairRankN', { n: rank, count: seen.length });
  const bestText = best.layer === layer && best.head === h ? t('attention.pairBestHere') : t('attention.pairBestThere', { l: best.layer, h: best.head, w: fixed(best.w, 2) });
  return el('p', { className: 'pair-answer', dataset: { best: String(best.w) } }, t('attention.pairAnswer', { w: fixed(w, 2), rank: rankText, best: bestText }));
}

// The raw scores' size, said with what makes it: the RMS of this head's q′ and k′ numbers (the √d
// lesson's random vectors have about 1), from this run. Null where the run lacks them.
async function rawSizeNote(app, l, h, raw) {
  const names = [`layers.${l}.attn.q_rope`, `layers.${l}.attn.k_rope`];
  if (!names.every((n) => app.run.entries.some((e) => e.name === n))) return null;
  const found = await app.tensors(names);
  const [q, k] = names.map((n) => found.get(n));
  const d = q.shape[q.shape.length - 1];
  const nH = q.shape[q.shape.length - 2];
  const nKV = k.shape[k.shape.length - 2];
  const kv = Math.floor(h / (nH / nKV));
  // One head's numbers of a [.., T, heads, d] tensor, token by token.
  const ofHead = function* ({ data, shape }, head, heads) {
    for (let r = 0; r < shape[shape.length - 3]; r++) yield* data.subarray((r * heads + head) * d, (r * heads + head + 1) * d);
  };
  let max = 0;
  for (const x of raw) if (Number.isFinite(x)) max = Math.max(max, Math.abs(x));
  const [qr, kr] = [rms(ofHead(q, h, nH)), rms(ofHead(k, kv, nKV))];
  if (![max, qr, kr].every(Number.isFinite)) return null;
  return t('attention.rawSize', { max: fixed(max, 1), d, qr: fixed(qr, 2), kr: fixed(kr, 2), scaled: fixed(max / Math.sqrt(d), 1), why: t(app.model.qk_norm ? 'attention.rawSizeWhy.norm' : 'attention.rawSizeWhy.plain') });
}

// [a line] where the followed row (not a padded one) puts under 30% on the token a resting head
// (first token, or one fixed token) keeps to over the sentence: where the row's weight goes instead,
// the token that gets the most (or, where none gets a fifth, that it is spread out); [] otherwise.
function restsElsewhere(measured, probs, h, query, pieces, mask) {
  if (query === null || !probs || !mask?.[query] || !['first', 'fixed'].includes(measured?.role)) return [];
  const [, T, S] = probs.shape;
  const key = measured.role === 'first' ? 0 : measured.scores.fixed_key;
  if (key === undefined || key > query) return [];
  const row = probs.data.subarray((h * T + query) * S, (h * T + query + 1) * S);
  const w = row[key];
  if (!(w < 0.3)) return [];
  let top = 0;
  for (let j = 1; j < S; j++) if (row[j] > row[top]) top = j;
  const onKey = w < 0.005 ? t('role.rowKeyNone', { key: tokenText(pieces[key]) }) : t('role.rowKeySome', { key: tokenText(pieces[key]), p: fixed(w, 2) });
  const said = { i: query, token: tokenText(pieces[query]), onKey, top: tokenText(pieces[top]), pTop: fixed(row[top], 2) };
  return [el('p', { className: 'head-role-row-differs' }, t(row[top] >= 0.2 ? 'role.rowDiffersTop' : 'role.rowDiffers', said))];
}

// The window's part of a whole map's cells and labels (parts/map_window.js), its cells naming their
// input positions (rowAt, colAt) so that the token chips light the right tokens.
function windowOf({ cells, labels }, S, win, rowAt) {
  return {
    cells: { ...cells, data: windowCells(cells.data, S, win), rows: win.r1 - win.r0, cols: win.cols.length, rowMask: cells.rowMask?.slice(win.r0, win.r1) ?? null, rowAt, colAt: win.cols },
    labels: { rows: labels.rows.slice(win.r0, win.r1), cols: win.cols.map((c) => labels.cols[c]) },
  };
}

// The smallest cell of the map, whose labels are then 9 px (heatmap_layout.js labelFont).
const MIN_CELL = 10;

export function mount(root, app) {
  const { state } = app;
  const controls = [layerSelect(app), headSelect(app), stageSelect(app)];
  const caption = el('figcaption', {});
  const explain = el('p', { className: 'explain' });
  const role = el('div', { className: 'head-role' });
  const knock = el('div', { className: 'picker' }); // this head's knock-out toggle (parts/ablation.js)
  const map = heatmap();
  // A long input (over LONG tokens) is read through a window of the map (parts/map_window.js): the
  // whole map pooled small beside it, the window framed there, a click there moving it.
  // The overview's heatmap is made for a long input only, so a short one's view holds one map.
  let whole = null;
  const overviewSlot = el('div', { className: 'map-window-overview' });
  const windowText = el('p', { className: 'map-window-text', attrs: { role: 'status' } });
  const windowBox = el('div', { className: 'map-window', hidden: true }, overviewSlot, el('div', { className: 'map-window-about' }, windowText, el('p', { className: 'hint' }, t('attention.windowHint'))));
  let keyAt = null; // {query, key}: where a click on the overview put the window's keys, for that query
  // A long sentence in a narrow column: the map scrolls sideways, and says so in an embed.
  map.node.classList.add('heatmap-scroll');
  const fade = scrollFade(map.node, undefined, { cue: true });
  const axes = el('p', { className: 'hint axes-note' });
  const row = queryRowBox({ pick: (layer, head) => app.set({ layer, head }), clear: () => app.set({ query: null }) });
  // A knocked-out head still computes its weights: said above its map, which is framed as off.
  const offText = el('p', { className: 'message' });
  const offNote = el('div', { className: 'head-off-note', hidden: true }, offText); // .message would show through [hidden]
  // The tutorials' question (does 她 look at 小红?) one click away from any sentence: their sentence
  // on the built-in model, 她 followed, in the head where it looks at 红 the most.
  const tutorialPair = el('p', { className: 'qk-tutorial-pair' }, el('button', { type: 'button', className: 'action secondary', on: { click: () => openTutorialPair(app) } }, t('attention.tutorialPair')));
  // On the raw stage, how large this head's scores get and why, from this run (raw-size note).
  const rawSize = el('p', { className: 'hint raw-size', hidden: true });
  const figure = el('figure', { className: 'tensor-figure attention-figure' }, caption, explain, rawSize, axes, role, offNote, windowBox, map.node, row.node);
  root.append(el('div', { className: 'toolbar' }, controls.map((c) => c.node), knock), tutorialPair, figure);
  const updates = latest();
  let anchor = null; // the map's top on screen when a row was clicked (null: no click to keep in place)
  let arriving = true; // the first draw: a followed row that a link or a lesson's door came for is brought into sight

  // The whole map pooled small, the window framed; a click on a block moves the window there (and
  // follows that block's middle row).
  function showWhole(full, T, S, win, scale, name, h) {
    const { pooled, frame } = overview(full.data, T, S, win, full.rowMask);
    if (!whole) {
      whole = heatmap();
      overviewSlot.append(whole.node);
    }
    const span = (starts, b) => `${starts[b]}–${starts[b + 1] - 1}`;
    whole.update({
      cells: { data: pooled.data, rows: pooled.rows, cols: pooled.cols, rowMask: pooled.rowMask, square: true, maxCell: 180 / Math.max(pooled.rows, pooled.cols), future: full.future, padKeys: full.padKeys },
      scale,
      legend: false,
      mark: frame,
      interaction: {
        name: t('attention.overviewName', { name, h }),
        describe: (pr, pc) => [[t('attention.overviewRows'), span(pooled.rowStart, pr)], [t('attention.overviewKeys'), span(pooled.colStart, pc)]],
        onCellClick: (pr, pc) => {
          const { row, key } = blockCentre(pooled, pr, pc);
          keyAt = { query: row, key };
          app.set({ query: row });
        },
      },
    });
    const run = win.cols.slice(win.pinned ? 1 : 0);
    windowText.textContent = t(win.pinned ? 'attention.windowPinned' : 'attention.window', { from: win.r0, to: win.r1 - 1, T: T.toLocaleString(), k0: run[0], k1: run.at(-1) });
  }

  function dropWhole() {
    whole?.destroy();
    whole?.node.remove();
    whole = null;
  }

  async function update() {
    const signal = updates.start();
    controls.forEach((c) => c.update());
    knock.replaceChildren(ablateToggle(app, state.layer, state.head));
    const off = isAblated(state, state.layer, state.head);
    figure.classList.toggle('head-off', off);
    offNote.hidden = !off;
    if (off) offText.replaceChildren(t('attention.headOff'), ' ', pageLink(app.navigate, { view: 'ablate' }, t('attention.headOffLink')));
    const name = `layers.${state.layer}.${STAGES[state.stage]}`;
    // A followed query row's box reads every layer's weights (parts/query_row.js); without one, only
    // the stage shown is fetched.
    const query = queryOf(state, state.tokens.ids.length);
    tutorialPair.hidden = showsTutorialPair(state, query);
    const probsNames = query === null ? [] : Array.from({ length: app.model.num_hidden_layers }, (_, l) => `layers.${l}.attn.probs`);
    const [found, roles] = await Promise.all([app.tensors([...new Set([name, ...probsNames])]), headRoles(app)]);
    if (signal.aborted) return;
    const tensor = found.get(name);
    const [, T, S] = tensor.shape;
    const h = state.head;
    const data = stageValues(app, state.stage, tensor.data.subarray(h * T * S, (h + 1) * T * S));
    const shown = stageName(app, state.stage, name);
    caption.replaceChildren(el('code', { className: 'tensor-name' }, state.stage === 'raw' ? `${name}${indexLabel(h)} × √${app.model.head_dim}` : `${name}${indexLabel(h)}`), el('span', { className: 'shape' }, t('shape.slice', { slice: `[${T}, ${S}]`, whole: shapeLabel(tensor.shape) })));
    explain.textContent = t(`attention.explain.${state.stage}`, { d: app.model.head_dim, root: Math.sqrt(app.model.head_dim).toFixed(2) });
    const size = state.stage === 'raw' ? await rawSizeNote(app, state.layer, h, data) : null;
    if (signal.aborted) return;
    rawSize.hidden = size === null;
    rawSize.textContent = size ?? '';
    const measured = roles[state.layer]?.[h] ?? null;
    const pieces = state.tokens.pieces;
    // On the score stages the first column is a score, not yet a weight: said so for a resting head.
    const weights = state.stage === 'probs';
    // What to look for is said of the weights; on a score stage it says so (the scores are not yet
    // the weights, and before the mask the future is not yet hidden).
    const pattern = lookFor(measured, pieces);
    const look = measured?.role === 'first' && !weights ? t('role.look.firstScores') : pattern && !weights ? t('role.look.onWeights', { look: pattern }) : pattern;
    axes.textContent = t(weights ? 'attention.axes' : 'attention.axesScores');
    // A followed row (a click, a link, a lesson's door that came for 她 → 红) is said first: what
    // the reader came to see in this head, before what the head does over all its rows.
    const lead = query === null ? [] : [followedLead(found.get(`layers.${state.layer}.attn.probs`), h, query, pieces)];
    const answer = showsTutorialPair(state, query) ? pairAnswer(probsNames.map((n) => found.get(n)), state.layer, h, query, pieces) : null;
    if (answer) lead.push(answer);
    // The built-in model does not show the tutorials' phenomenon: said plainly, with SmolLM2's counterpart.
    if (answer && app.source?.kind === 'builtin') lead.push(smallModelNote(app, Number(answer.dataset.best)));
    role.replaceChildren(
      ...lead,
      el('p', { className: 'head-role-line' }, el('span', { className: 'head-role-title' }, t(query === null ? 'role.title' : 'role.titleWhole')), roleBadge(measured, pieces), el('span', { className: 'head-role-detail' }, roleDetail(measured, pieces))),
      // A long text: where along it the head's role changes, and where it passes the built-in model's training length.
      ...roleStretches(measured, pieces, app.source?.kind === 'builtin' ? BUILTIN_CONTEXT : null),
      // replaceChildren writes null as the text "null": a mixed head has nothing to look for.
      ...(look ? [el('p', { className: 'head-role-look' }, el('strong', {}, t('role.lookFor')), gap(t('role.lookFor')), look)] : []),
      // A head that rests on one token over the sentence may not in the row followed (a head opened
      // from head attribution for the last position): said, so the habit is not read as that row.
      ...restsElsewhere(measured, found.get(`layers.${state.layer}.attn.probs`), h, query, pieces, state.mask),
      // A head resting on the first token (most heads of layer 0, where every view opens) shows
      // little: the strongest heads that do something else here, measured on this run, are a click away.
      ...[measured?.role === 'first' ? otherHeads(roles, pieces, (l, hh) => app.set({ layer: l, head: hh })) : null].filter(Boolean),
    );
    // The weights of a causal run hatch the future as the masked stage does (weight 0, said so).
    const future = weights && state.causal;
    const follow = (r) => {
      anchor = map.node.getBoundingClientRect().top;
      app.set({ query: r === query ? null : r });
    };
    const all = headCells({ data, T, S, pieces: state.tokens.pieces, mask: state.mask, maxCell: 44, labelChars: 12, input: true, future, weights });
    const scale = scaleFor(name, [data]);
    // A long input: the window's rows and keys (input positions), else the whole map.
    const win = T > LONG ? windowAt({ T, S, query, keyAt: keyAt?.query === query ? keyAt.key : null }) : null;
    const rowAt = win ? Array.from({ length: win.r1 - win.r0 }, (_, i) => win.r0 + i) : null;
    const { cells, labels } = win ? windowOf(all, S, win, rowAt) : all;
    const r0 = win ? win.r0 : 0;
    const colAt = (c) => (win ? win.cols[c] : c);
    const inWindow = query !== null && query >= r0 && query < r0 + cells.rows;
    // Labels stay readable (9 px at the least) in a narrow column: the map scrolls sideways instead.
    cells.minCell = MIN_CELL;
    windowBox.hidden = !win;
    if (win) showWhole(all.cells, T, S, win, scale, name, h);
    else dropWhole();
    map.update({
      cells,
      scale,
      // Σ row means something only for the weights: each row of them sums to 1 (a masked row's is −∞);
      // a window's rows are summed whole, over the keys outside it too.
      labels: { ...labels, sums: state.stage === 'probs' && (win ? wholeRowSums(data, S, win) : true) },
      mark: inWindow ? { r: query - r0, c: null } : null,
      guides: win?.pinned ? { colBreak: 1 } : null,
      interaction: {
        name: t('heatmap.stageName', { what: t(`heatmap.stage.${state.stage}`), name: shown, h }),
        describe: (r, c) => headTip(shown, h, state.tokens.pieces)(r0 + r, colAt(c)),
        // A click on a row follows its token as the query; on the followed row, lets it go. A click on
        // a row's word does the same: a reader clicks the word before the squares.
        onCellClick: (r) => follow(r0 + r),
        onRowClick: (r) => follow(r0 + r),
        rowTip: (r) => [t(r0 + r === query ? 'attention.rowTipStop' : 'attention.rowTip', { token: tokenText(pieces[r0 + r]), i: r0 + r })],
        // The keyboard starts on the followed row, at its first key.
        start: inWindow ? { r: query - r0, c: 0 } : null,
      },
    });
    fade.mark();
    row.update({ row: query, pieces, probs: found.get(`layers.${state.layer}.attn.probs`), layers: probsNames.map((n) => found.get(n)), at: { layer: state.layer, head: h }, off: (l, hh) => isAblated(state, l, hh) });
    // A click on a row puts its sentence above the map (or takes it away): the page scrolls by as
    // much, so the map stays under the pointer and the next click lands on the row aimed at.
    if (anchor !== null) {
      const moved = map.node.getBoundingClientRect().top - anchor;
      anchor = null;
      if (moved !== 0) window.scrollBy(0, moved);
    }
    // Arriving with a row to follow (她 from a lesson's door, a shared link): the row is what the
    // reader came for. A row below the fold is brought up: the map's top (its column labels) just
    // under the sticky top bar, or, where the row is still too low then, the row to mid-window.
    const box = arriving && query !== null ? map.rowBox(query - r0) : null;
    arriving = false;
    if (box && box.bottom > window.innerHeight) {
      const bar = parseFloat(getComputedStyle(document.documentElement).getPropertyValue('--topbar-height')) || 0;
      let by = map.node.getBoundingClientRect().top - bar - 8;
      if (box.bottom - by > window.innerHeight) by = box.top - window.innerHeight / 2;
      window.scrollBy(0, by);
    }
  }

  return {
    update,
    destroy() {
      updates.abort();
      map.destroy();
      dropWhole();
      fade.destroy();
    },
  };
}

// MHA / GQA / MQA (shared/seeds/002, sections 3–5): how many K/V heads the query heads share.
// First repeat_kv in the running model: each KV head's cached keys with the query heads that read
// them framed together (Q0, Q1 → KV0 …), each query head's real attention pattern beside, named by
// its role and a click from being the page's head. Then the
// same input through models that differ only in num_key_value_heads (nH, nH/2, 1), each run by the
// core, with the cache it filled: on random weights the current model is one of them; a trained model
// has weights for its own nKV only, so then all three are random models of its shape (and say so). Last, the KV cache priced per token and for a context length, for
// MiniMind-3 and the current config, from the core's own resolution of each config (describeConfig).

import { el } from '../parts/dom.js';
import { headCells, headTip, heatmap } from '../parts/heatmap.js';
import { headRoles, roleBadge } from '../parts/head_roles.js';
import { layerSelect, headSelect, range } from '../parts/controls.js';
import { sequential, diverging, extent } from '../parts/color_scale.js';
import { axisLabel, bytes, gap, shapeLabel, tokenText } from '../parts/format.js';
import { t } from '../strings.js';
import { MAX_CONTEXT } from '../state.js';
import { latest } from '../page/latest.js';

// MiniMind-3 as the seed and minimind-semantics.md give it; the core fills in the rest (d = 96 …).
export const MINIMIND3 = { hidden_size: 768, num_hidden_layers: 8, num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 6400 };
// Random variants are built in the worker only up to this many f32 weight bytes each.
const VARIANT_BYTES = 256 << 20;
const DEFAULT_CONTEXT = 2048;

export function kindOf(nH, nKV) {
  return nKV === nH ? 'MHA' : nKV === 1 ? 'MQA' : 'GQA';
}

// nKV = nH, nH/2, 1: the three designs for a given number of query heads (fewer when they coincide).
export function kvChoices(nH) {
  return [...new Set([nH, nH % 2 === 0 ? nH / 2 : null, 1].filter((n) => n !== null))];
}

// A context length typed in the field, as the link keeps it: a whole number from 1 to MAX_CONTEXT
// (1e308 would price the cache at Infinity TiB); anything else is the default.
export function contextOf(typed) {
  const n = Math.round(Number(typed));
  return Number.isFinite(n) && n >= 1 ? Math.min(n, MAX_CONTEXT) : DEFAULT_CONTEXT;
}

export function mount(root, app) {
  const { state } = app;
  const controls = [layerSelect(app), headSelect(app)];
  // A length past the largest is said, not silently replaced: the note stays until the next edit.
  const capNote = el('p', { className: 'hint context-capped', hidden: true });
  const contextInput = el('input', {
    type: 'number', id: 'gqa-context', min: 1, step: 1, max: MAX_CONTEXT,
    on: {
      change: () => {
        // Too long, or not a length at all (empty, 0, −5): said, with the length the table shows.
        const typed = Number(contextInput.value);
        const capped = typed > MAX_CONTEXT;
        const short = contextInput.value.trim() === '' || !Number.isFinite(typed) || Math.round(typed) < 1;
        const context = contextOf(contextInput.value);
        capNote.hidden = !capped && !short;
        capNote.textContent = capped ? t('gqa.contextCapped', { max: MAX_CONTEXT.toLocaleString('en-US') }) : short ? t('gqa.contextShort', { n: context.toLocaleString('en-US') }) : '';
        app.set({ context });
      },
    },
  });
  const sharing = el('div', { className: 'kv-groups' });
  const variantsRow = el('div', { className: 'multiples wide variants' });
  const costs = el('div', {});
  root.append(
    el('div', { className: 'toolbar' }, controls.map((c) => c.node)),
    el('p', { className: 'explain' }, t('gqa.explain')),
    el('section', { className: 'card' }, el('h3', {}, t('gqa.sharingHeading')), el('p', { className: 'hint sharing-note' }), el('p', { className: 'gqa-shapes' }), sharing),
    el('section', { className: 'card' }, el('h3', {}, t('gqa.variantsHeading')), el('p', { className: 'hint variants-note' }), variantsRow),
    el('section', { className: 'card' }, el('h3', {}, t('gqa.costHeading')), el('div', { className: 'toolbar' }, el('label', { htmlFor: 'gqa-context' }, t('gqa.context')), contextInput), capNote, costs),
  );
  let maps = [];
  const updates = latest();

  const track = (map) => {
    maps.push(map);
    return map;
  };

  async function update() {
    const signal = updates.start();
    controls.forEach((c) => c.update());
    const context = state.context ?? DEFAULT_CONTEXT;
    contextInput.value = String(context);
    const { num_attention_heads: nH, num_key_value_heads: nKV } = app.model;
    const l = state.layer;
    const h = state.head;
    const names = [`layers.${l}.attn.k_cache`, `layers.${l}.attn.probs`];
    const choices = kvChoices(nH);
    const mm3Count = kvChoices(MINIMIND3.num_attention_heads).length;
    // The loaded model's own config (a checkpoint's sizes are not the random model's knobs); unknown keys are ignored by the core.
    const base = app.model;
    const configs = [MINIMIND3, base].flatMap((c) => kvChoices(c.num_attention_heads).map((n) => ({ ...c, num_key_value_heads: n })));
    const small = app.model.weight_count * 4 <= VARIANT_BYTES;
    // On random weights the current model is one of the three; a trained model's weights exist only for
    // its own nKV, so then all three are random models of its shape, differing in nothing but nKV.
    const random = app.source?.kind === 'random';
    const run = (n) => (random && n === nKV ? app.tensors(names).then((found) => ({ found, cache_bytes: null })) : app.call('variantTensors', { config: { ...base, num_key_value_heads: n }, seed: state.seed, args: app.args(), names }).then(({ tensors, cache_bytes }) => ({ found: new Map(tensors.map((x) => [x.name, x])), cache_bytes })));
    const [own, described, variants, roles] = await Promise.all([
      app.tensors(names),
      Promise.all(configs.map((config) => app.call('describe', { config }))),
      Promise.all(choices.map((n) => ((random && n === nKV) || small ? run(n) : null))),
      // The query heads are named as the head grid names them; without roles they keep their numbers.
      headRoles(app).catch(() => null),
    ]);
    if (signal.aborted) return;
    maps.forEach((m) => m.destroy());
    maps = [];

    const pieces = state.tokens.pieces;
    const labels = pieces.map((p) => axisLabel(p, 6));
    const kCache = own.get(names[0]);
    const probs = own.get(names[1]);
    const [S, , d] = kCache.shape;
    const [, T] = probs.shape;
    const rep = nH / nKV;
    root.querySelector('.sharing-note').textContent = t('gqa.sharingNote', {
      groups: range(nKV)
        .map((g) => `${range(rep).map((r) => `Q${g * rep + r}`).join(t('gqa.headsSep'))} → KV${g}`)
        .join(t('gqa.groupsSep')),
    });
    // The shapes the shapes lesson prints, for this model and sentence: xq, and xk/xv before and after repeat_kv.
    root.querySelector('.gqa-shapes').textContent = t(rep === 1 ? 'gqa.shapesMha' : 'gqa.shapes', { q: shapeLabel([T, nH, d]), kv: shapeLabel([S, nKV, d]), repeated: shapeLabel([S, nH, d]), rep });
    root.querySelector('.variants-note').textContent = random ? t('gqa.variantsNote') : t('gqa.variantsNoteTrained', { seed: state.seed });
    const kScale = diverging(extent([kCache.data]).maxAbs);
    // A query head's weights, small (no axes) beside its KV head, or with both axes and the
    // colour key where three models are compared; a causal run's future and padded keys hatched.
    const probPanel = (data, hh, title, { axes = false } = {}) => {
      const map = track(heatmap());
      const { cells, labels } = headCells({ data: data.subarray(hh * T * S, (hh + 1) * T * S), T, S, pieces, mask: state.mask, maxCell: axes ? 20 : 10, labelChars: 6, future: state.causal, weights: true });
      map.update({
        cells,
        scale: sequential(0, 1),
        legend: axes,
        ...(axes ? { labels } : {}),
        interaction: {
          name: title,
          describe: headTip('probs', hh, pieces),
        },
      });
      return map.node;
    };
    sharing.replaceChildren(
      ...range(nKV).map((g) => {
        const keys = track(heatmap());
        keys.update({
          cells: { data: Float32Array.from({ length: S * d }, (_, n) => kCache.data[(Math.floor(n / d) * nKV + g) * d + (n % d)]), rows: S, cols: d, maxCell: 6 },
          scale: kScale,
          legend: false,
          labels: { rows: labels.slice(0, S) },
          interaction: {
            name: t('gqa.kvLabel', { g }),
            describe: (j, c) => [
              [`k_cache`, `[${j}, ${g}, ${c}]`],
              [t('tip.key'), `${j} ${tokenText(pieces[j])}`],
            ],
          },
        });
        return el(
          'div',
          { className: 'kv-group', dataset: { kv: g } },
          el('div', { className: 'kv-group-title' }, `KV ${g}`, el('span', { className: 'hint' }, ` k_cache[0, :, ${g}, :]`)),
          keys.node,
          el('div', { className: 'kv-group-heads' }, range(rep).map((r) => {
            const hh = g * rep + r;
            // A click opens that head here and in every per-head view.
            const role = roles?.[l]?.[hh];
            return el(
              'figure',
              { className: hh === h ? 'q-head selected' : 'q-head', dataset: { head: hh }, attrs: { title: t('gqa.openHead', { h: hh }) }, on: { click: () => app.set({ head: hh }) } },
              el('figcaption', {}, `Q${hh}`),
              probPanel(probs.data, hh, t('gqa.qLabel', { h: hh, g })),
              ...(role?.role ? [roleBadge(role, pieces, { compact: true })] : []),
            );
          })),
        );
      }),
    );

    variantsRow.replaceChildren(
      ...choices.map((n, idx) => {
        const v = variants[idx];
        const title = t(n === 1 ? 'gqa.variantTitleOne' : 'gqa.variantTitle', { kind: kindOf(nH, n), n });
        if (!v) return el('figure', { className: 'panel-cell' }, el('figcaption', { className: 'panel-title' }, title), el('p', { className: 'hint' }, t('gqa.tooLarge')));
        const vk = v.found.get(names[0]);
        const vp = v.found.get(names[1]);
        const perToken = described[mm3Count + idx].kv_cache_bytes_per_token;
        return el(
          'figure',
          { className: n === nKV ? 'panel-cell current' : 'panel-cell', dataset: { kv: n } },
          el('figcaption', { className: 'panel-title' }, n === nKV ? t(random ? 'gqa.currentTitle' : 'gqa.sameLayoutTitle', { title }) : title),
          el('p', { className: 'hint' }, `k_cache ${shapeLabel(vk.shape)}`),
          probPanel(vp.data, h, t('gqa.variantLabel', { kind: kindOf(nH, n), h }), { axes: true }),
          el('p', { className: 'hint' }, t('gqa.perTokenIs'), gap(t('gqa.perTokenIs')), el('span', { className: 'bytes', dataset: { bytes: perToken } }, bytes(perToken))),
        );
      }),
    );

    // The design each model really has is marked: MiniMind-3's default GQA, and this model's own.
    const isOwn = (c, at) => c.num_key_value_heads === (at < mm3Count ? MINIMIND3.num_key_value_heads : nKV);
    const row = (c, at) =>
      el(
        'tr',
        { className: isOwn(c, at) ? 'own-layout' : '', dataset: { config: at < mm3Count ? 'minimind3' : 'current', kv: c.num_key_value_heads } },
        el('th', { attrs: { scope: 'row' } }, at < mm3Count ? t('gqa.mm3') : t('gqa.currentConfig')),
        el('td', {}, kindOf(c.num_attention_heads, c.num_key_value_heads), isOwn(c, at) ? t(at < mm3Count ? 'gqa.ownDefault' : 'gqa.ownThis') : ''),
        el('td', {}, `${c.num_hidden_layers} × ${c.num_key_value_heads} × ${c.head_dim}`),
        el('td', { dataset: { bytes: c.kv_cache_bytes_per_token } }, bytes(c.kv_cache_bytes_per_token)),
        el('td', { dataset: { bytes: c.kv_cache_bytes_per_token * context } }, bytes(c.kv_cache_bytes_per_token * context)),
      );
    costs.replaceChildren(
      el(
        'div',
        { className: 'table-scroll' },
        el(
          'table',
          { className: 'data-table' },
          el('thead', {}, el('tr', {}, [t('gqa.model'), t('gqa.kind'), t('gqa.layout'), t('gqa.perToken'), t('gqa.atContext', { n: context })].map((c) => el('th', { attrs: { scope: 'col' } }, c)))),
          el('tbody', {}, described.map(row)),
        ),
      ),
      el('p', { className: 'hint' }, t('gqa.costNote')),
    );
  }

  return {
    update,
    destroy() {
      updates.abort();
      maps.forEach((m) => m.destroy());
    },
  };
}

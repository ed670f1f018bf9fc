// The small controls several views share: layer, head and stage pickers bound to app.state.
// Each returns {node, update()}; update() re-reads the state and the model's sizes.

import { el } from './dom.js';
import { tokenText } from './format.js';
import { t } from '../strings.js';
import { headRoles, roleOption, roleText } from './head_roles.js';
import { latest } from '../page/latest.js';

// options(): [{value, label}] with numeric values, read from and written to app.state[key];
// fallback(): the value shown while the state holds none (null).
function picker(app, key, labelKey, options, fallback = () => null) {
  const id = `pick-${key}-${Math.random().toString(36).slice(2, 7)}`;
  const select = el('select', { id, name: key, on: { change: () => app.set({ [key]: Number(select.value) }) } });
  const node = el('div', { className: 'picker' }, el('label', { htmlFor: id }, t(labelKey)), select);
  return {
    node,
    update() {
      const list = options();
      select.replaceChildren(...list.map((o) => el('option', { value: String(o.value) }, o.label)));
      select.value = String(app.state[key] ?? fallback());
    },
  };
}

export function layerSelect(app) {
  return picker(app, 'layer', 'control.layer', () => range(app.model.num_hidden_layers).map((l) => ({ value: l, label: String(l) })));
}

// Each head is named with what it does on the input (parts/head_roles.js, measured on the page's run),
// once that is known: "head 6 (KV 3) · previous-token 0.75". A head without one clear role keeps its number.
// The KV cache and Compare name them too: their prompt and sentence A are the page's input, and
// a head is picked there by what it does. roles: false where the heads run on other tokens only
// (the induction probe's random ones).
const narrow = () => globalThis.matchMedia?.('(max-width: 600px)').matches ?? false;

export function headSelect(app, { roles = true } = {}) {
  const options = () => {
    const rep = app.model.num_attention_heads / app.model.num_key_value_heads;
    return range(app.model.num_attention_heads).map((h) => ({ value: h, label: t('control.headOption', { h, kv: Math.floor(h / rep) }) }));
  };
  const p = picker(app, 'head', 'control.head', options);
  const select = p.node.querySelector('select');
  const labelling = latest();
  return {
    node: p.node,
    update() {
      p.update();
      if (!roles) return;
      const signal = labelling.start();
      const layer = app.state.layer;
      const labels = options();
      headRoles(app)
        .then((roles) => {
          if (signal.aborted) return;
          for (const option of select.options) {
            const h = Number(option.value);
            const r = roles[layer]?.[h];
            // On a phone the menu shows its choice cut at the box's edge: the short label
            // ("previous-token 0.74") keeps the role and its number in sight.
            const role = narrow() ? roleText(r, true, app.state.tokens?.pieces) : roleOption(r, app.state.tokens?.pieces);
            if (r?.role) option.textContent = t('control.headOptionRole', { head: labels[h].label, role });
          }
          // "(weak)" is said where it is read: the picker's tooltip.
          select.title = (roles[layer] ?? []).some((r) => r?.role && !r.strong && r.role !== 'broad' && r.role !== 'mixed') ? t('role.weakNote') : '';
        })
        .catch(() => {}); // the view says what failed; the picker keeps the numbers
    },
  };
}

// A token of the input, by position; while the state holds none (null) it shows the last token,
// or the first with first = true (a key picker starts where the seed's example looks: the start).
export function tokenSelect(app, key, labelKey, first = false) {
  return picker(
    app,
    key,
    labelKey,
    () => app.state.tokens.pieces.map((p, i) => ({ value: i, label: `${i} ${tokenText(p)}` })),
    () => tokenAt(app, key, first),
  );
}

// The position a token picker stands for: the state's, clamped to the input, or its default: the
// last token, the first (`first` true), or a view's own choice (`first` a function).
export function tokenAt(app, key, first = false) {
  const n = app.state.tokens.ids.length;
  const v = app.state[key];
  if (v === null || v === undefined) return typeof first === 'function' ? Math.max(0, Math.min(n - 1, first())) : first ? 0 : n - 1;
  return Math.max(0, Math.min(n - 1, v));
}

// The stages of one head's attention, in the tutorial's order: the raw match scores Q × Kᵀ (its step
// 2), after ÷ √d (step 3), after the masks, the softmax weights. MiniMind divides by √d in the same
// line as the product, so the trace has no raw scores: that stage is attn.scores multiplied back by
// √head_dim (stageValues), and says so (stageName).
export const STAGES = { raw: 'attn.scores', scores: 'attn.scores', masked: 'attn.masked_scores', probs: 'attn.probs' };

/** A stage's numbers from its tensor's data: the raw stage's are the scaled scores × √d. */
export function stageValues(app, stage, data) {
  if (stage !== 'raw') return data;
  const root = Math.sqrt(app.model.head_dim);
  return data.map((v) => v * root);
}

/** What a stage's numbers are called: the tensor's name, × √d for the raw stage. */
export function stageName(app, stage, name) {
  return stage === 'raw' ? `${name} × √${app.model.head_dim}` : name;
}

// A segmented control: the four stages are few and worth seeing at once.
export function stageSelect(app) {
  const buttons = Object.keys(STAGES).map((s) =>
    el('button', { type: 'button', className: 'segment', title: t(`stageTip.${s}`), dataset: { stage: s }, on: { click: () => app.set({ stage: s }) } }, t(`stage.${s}`)),
  );
  const node = el('div', { className: 'picker' }, el('span', { className: 'picker-label' }, t('control.stage')), el('div', { className: 'segmented stages', attrs: { role: 'group', 'aria-label': t('control.stage') } }, buttons));
  return {
    node,
    update() {
      for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.stage === app.state.stage));
      // On a phone the group scrolls sideways: the stage shown is kept in sight, not cut off at its end.
      const group = buttons[0].parentNode;
      const pressed = buttons.find((b) => b.dataset.stage === app.state.stage);
      if (pressed && group.scrollWidth > group.clientWidth) {
        const left = pressed.offsetLeft - group.offsetLeft;
        if (left < group.scrollLeft || left + pressed.offsetWidth > group.scrollLeft + group.clientWidth) group.scrollLeft = left + pressed.offsetWidth - group.clientWidth;
      }
    },
  };
}

export function range(n) {
  return Array.from({ length: n }, (_, i) => i);
}

// The model panel: the Hugging Face config.json keys a learner changes most, the seed of the
// random weights, the causal switch, and MiniMind's mixture of experts (use_moe: one tick gives
// MiniMind's own MoE, 4 experts and top-1, whose sizes can then be changed). The page does not validate sizes itself: the core does,
// and its message is shown under the field it names (or under the panel), never as a dialog.

import { el } from '../parts/dom.js';
import { language, t } from '../strings.js';
import { linkRange } from '../state.js';
import { errorText } from '../page/error_text.js';
import { latest } from '../page/latest.js';

const FIELDS = ['num_hidden_layers', 'hidden_size', 'num_attention_heads', 'num_key_value_heads', 'head_dim', 'rope_theta'];
// Shown and sent only with use_moe; empty fields take MiniMind's defaults (the placeholders).
const MOE_FIELDS = { num_experts: 4, num_experts_per_tok: 1 };
const NUMBER_FIELDS = [...FIELDS, ...Object.keys(MOE_FIELDS)];

// onApply(config, seed) resolves when the core accepted the config and rejects with its Error.
export function configPanel({ config, seed, causal }, { onApply, onCausal }) {
  const inputs = {};
  const errors = {};
  const general = el('p', { className: 'field-error', hidden: true, attrs: { role: 'alert' } });
  const summary = el('p', { className: 'config-summary' });

  const field = (key, value, extra = {}) => {
    const id = `cfg-${key}`;
    inputs[key] = el('input', { id, name: key, type: 'number', value: value ?? '', min: 0, on: { change: () => apply(key) }, ...extra });
    errors[key] = el('p', { className: 'field-error', id: `${id}-error`, hidden: true, attrs: { role: 'alert' } });
    inputs[key].setAttribute('aria-describedby', errors[key].id);
    return el('div', { className: 'field' }, el('label', { htmlFor: id }, t(`config.${key}`)), inputs[key], errors[key]);
  };

  const causalBox = el('input', { type: 'checkbox', id: 'cfg-causal', checked: causal, on: { change: () => onCausal(causalBox.checked) } });
  const moeBox = el('input', { type: 'checkbox', id: 'cfg-use_moe', checked: Boolean(config.use_moe), on: { change: () => { moeFields.hidden = !moeBox.checked; apply('use_moe'); } } });
  const normBox = el('input', { type: 'checkbox', id: 'cfg-norm_topk_prob', checked: config.norm_topk_prob ?? true, on: { change: () => apply('norm_topk_prob') } });
  const moeFields = el(
    'div',
    { className: 'config-grid config-moe', hidden: !config.use_moe },
    Object.entries(MOE_FIELDS).map(([key, fallback]) => field(key, config[key], { placeholder: String(fallback) })),
    el('label', { className: 'switch' }, normBox, el('span', {}, t('config.norm_topk_prob'))),
  );

  const node = el(
    'form',
    { className: 'config', on: { submit: (e) => { e.preventDefault(); apply(null); } } },
    el(
      'div',
      { className: 'config-grid' },
      FIELDS.map((key) => field(key, config[key], key === 'head_dim' ? { placeholder: t('config.head_dimAuto') } : key === 'rope_theta' ? { step: 'any' } : {})),
      field('seed', seed),
    ),
    el('label', { className: 'switch' }, causalBox, el('span', {}, t('config.causal'))),
    // MoE is a knob of the random weights: ticked on a trained model it would swap that model out.
    el('label', { className: 'switch config-moe-switch' }, moeBox, el('span', {}, t('config.use_moe'))),
    el('p', { className: 'hint config-moe-elsewhere' }, t('config.moeElsewhere')),
    moeFields,
    general,
    summary,
    el('p', { className: 'config-note' }, t('config.note')),
  );

  function read() {
    const next = { vocab_size: 6400 };
    const keys = moeBox.checked ? NUMBER_FIELDS : FIELDS;
    for (const key of keys) {
      const raw = inputs[key].value.trim();
      if (raw !== '') next[key] = Number(raw);
    }
    if (moeBox.checked) Object.assign(next, { use_moe: true, norm_topk_prob: normBox.checked });
    return { config: next, seed: Number(inputs.seed.value) };
  }

  // Under the field the message names; the one just edited wins when it names several.
  // err: the core's Error; its field is `args.name` when it has one, else the first named in its message.
  function showError(err, edited) {
    const named = err.args?.name ?? err.message ?? '';
    const message = errorText(err);
    const key = edited && errors[edited] && (named === edited || message.includes(edited)) ? edited : [...NUMBER_FIELDS, 'seed'].find((k) => named === k || message.includes(k));
    const target = key ? errors[key] : general;
    target.replaceChildren(message, el('span', { className: 'field-note' }, t('config.notApplied')));
    target.hidden = false;
    if (key) inputs[key].setAttribute('aria-invalid', 'true');
  }

  function clearErrors() {
    for (const key of Object.keys(errors)) {
      errors[key].hidden = true;
      inputs[key].removeAttribute('aria-invalid');
    }
    general.hidden = true;
  }

  // Only the latest apply speaks: an earlier one that settles later (a valid size, whose model takes
  // longer to build than the next size's refusal) must not clear the newer message.
  const applies = latest();
  // A value the link would change (a seed of 1.5, a rope_theta of 1e308) is refused here, under its
  // field, so that a copied link opens the model on screen.
  function outOfRange() {
    const keys = [...(moeBox.checked ? NUMBER_FIELDS : FIELDS), 'seed'];
    for (const key of keys) {
      const raw = inputs[key].value.trim();
      const range = linkRange(key);
      if (raw === '' || !range) continue;
      const n = Number(raw);
      if (Number.isFinite(n) && n >= range.lo && n <= range.hi && (!range.integer || Number.isInteger(n))) continue;
      const most = range.hi.toLocaleString(language() === 'zh' ? 'zh-CN' : 'en-US');
      return { key, message: t(range.integer ? 'config.wholeRange' : 'config.numberRange', { name: key, least: range.lo, most }) };
    }
    return null;
  }

  async function apply(edited) {
    const { config: next, seed: nextSeed } = read();
    const signal = applies.start();
    const bad = outOfRange();
    if (bad) {
      clearErrors();
      errors[bad.key].replaceChildren(bad.message, el('span', { className: 'field-note' }, t('config.notApplied')));
      errors[bad.key].hidden = false;
      inputs[bad.key].setAttribute('aria-invalid', 'true');
      return;
    }
    try {
      await onApply(next, nextSeed);
      if (!signal.aborted) clearErrors();
    } catch (err) {
      if (signal.aborted) return;
      clearErrors();
      showError(err, edited);
    }
  }

  return {
    node,
    // Shows values set elsewhere (a link, setState) in the fields.
    show({ config: shown, seed: shownSeed, causal: shownCausal }) {
      for (const key of NUMBER_FIELDS) inputs[key].value = shown[key] ?? '';
      moeBox.checked = Boolean(shown.use_moe);
      normBox.checked = shown.norm_topk_prob ?? true;
      moeFields.hidden = !moeBox.checked;
      inputs.seed.value = shownSeed;
      causalBox.checked = shownCausal;
      clearErrors();
    },
    // The resolved config from the core: derived sizes and the attention kind.
    showResolved(c) {
      const rep = c.num_attention_heads / c.num_key_value_heads;
      const kind = rep === 1 ? 'MHA' : c.num_key_value_heads === 1 ? 'MQA' : 'GQA';
      const moe = c.use_moe ? ` ${t('config.moeSummary', { k: c.num_experts_per_tok, e: c.num_experts, i: c.moe_intermediate_size })}` : '';
      summary.textContent = t('config.summary', { d: c.head_dim, i: c.intermediate_size, kind, rep }) + moe;
      // A field left empty takes the default: the value the model was built with shows in it, greyed.
      for (const key of NUMBER_FIELDS) inputs[key].placeholder = c[key] === undefined || c[key] === null ? '' : String(c[key]);
    },
  };
}

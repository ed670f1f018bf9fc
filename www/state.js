// attnscope's shareable state and its link format. This is the one place that decides what a link
// may say: decode (URL fragment → raw fields) → validate and clamp (raw → a state every view can
// draw) → state. Whatever a link holds (damaged, truncated, hand-edited, from a future version,
// hostile) the result is a complete, valid state plus a list of problems for the page to explain.
// Pure: no DOM, so node imports it too (tests/unit/state.test.mjs fuzzes it). CompressionStream,
// Blob, Response and atob exist in browsers and in node alike.
//
// A link is "sN." + base64url(deflate-raw(JSON of the fields that differ from format N's
// defaults)), then optionally "&embed=1" and plain "key=value" fields (TensorFlow Playground style:
// "#view=grid", "&hide=input,config"). A format's defaults are part of it: changing one changes
// what old links mean, so that needs a new format, with the old ones still decoded against their
// own defaults.
//   Format 1 ("s1.", FORMAT1_DEFAULTS, frozen): a link that names no model meant the random model
//   with an English sentence.
//   Format 2 ("s2.", DEFAULTS less `bos`): the built-in model; text null, the built-in model's
//   first sample sentence in the state's language (textOf); the language, when a link does not say,
//   is the reader's (decode's `lang`). Every s2 link says its language and view, so a link opens
//   the same in every browser and the landing view (DEFAULTS.view) may change without changing it.
//   Format 2 may gain a field whose default is "nothing" (edits, a lesson's edited cells: null;
//   probe, the head grid's induction probe: false): an older s2 link lacks it and so opens as it
//   always did. Format 1 never had them (always their default).
//   Format 3 ("s3.", DEFAULTS, written today): format 2 plus `bos`, the input starting with the
//   model's BOS token (<|im_start|>, as MiniMind trains), on by default; a link says `bos: false`
//   only when the reader turned it off. Format 1 and 2 links never had it and open without BOS
//   (AS_BEFORE), exactly as they did.
// Plain fields alone ("#view=grid", "#lang=zh") name no format: on a fresh page they change the
// current format's defaults (format 3: with BOS), as they changed format 2's once it came.
//
// What the core decides stays with the core: a config in range may still be refused (heads not
// divisible by KV heads, too many weights), and the page shows the core's own message.

import { MAX_EXPERTS, MAX_HEAD_DIM, MAX_HEADS, MAX_HIDDEN, MAX_INTERMEDIATE, MAX_LAYERS, MAX_TOKENS, MAX_VOCAB } from './limits.js';
import { STRINGS } from './strings.js';

export const VERSION = 3;

// The core's limits come from limits.js (the page's copy of src/model/config.rs's): a link can ask
// for nothing the core would refuse to size. MAX_TOKENS stays exported from here too.
export { MAX_TOKENS };
const MAX_SEED = Number.MAX_SAFE_INTEGER;
export const MAX_CONTEXT = 1 << 20;

export const MAX_TEXT = 2000; // characters (code points) of input text a link may carry
const MAX_ID = 64; // lesson, view and step ids
const MAX_URL = 2048;
const MAX_FRAGMENT = 32_768; // characters of the whole fragment
const MAX_JSON = 65_536; // bytes a payload may inflate to: a small link is never a large bomb
// A lesson's edited cells (edits): a few small tables, each at most 64 × 64, values of a size a
// reader types; nothing more passes, so a hostile link cannot make a lesson draw a huge table.
const MAX_EDIT_TABLES = 16;
const MAX_EDIT_INDEX = 63;
const MAX_EDIT_CELLS = (MAX_EDIT_INDEX + 1) ** 2;
export const MAX_EDIT_VALUE = 1e6; // a lesson cell's value, typed or in a link (parts/matrix_table.js)

export const HIDE_FLAGS = ['input', 'config', 'tabs', 'toolbar', 'prose'];
// The flags formats 1 and 2 knew ('prose' came with format 3), and how many entries a link's list may
// hold, as then.
const EARLIER_HIDE_FLAGS = ['input', 'config', 'tabs', 'toolbar'];
const MAX_HIDE = EARLIER_HIDE_FLAGS.length * 4;
// 'smollm2': the page's real model, SmolLM2-135M (models/smollm2/, a GGUF file the build fetches).
export const MODEL_KINDS = ['random', 'builtin', 'smollm2', 'url', 'hub', 'files'];

export const FORMAT1_DEFAULTS = Object.freeze({
  lesson: null,
  lang: 'en',
  text: 'The cat sat on the mat because it was tired.',
  model: { kind: 'random' },
  config: { hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 6400, rope_theta: 1e6 },
  seed: 42,
  causal: true,
  view: 'stepper',
  step: 'embed',
  layer: 0,
  head: 0,
  query: null,
  key: null,
  pad: [],
  stage: 'probs',
  allHeads: false,
  divisor: null,
  yarn: false,
  tile: null,
  context: null,
  backend: 'auto',
  hide: [],
});

export const DEFAULTS = Object.freeze({
  ...FORMAT1_DEFAULTS,
  text: null,
  model: Object.freeze({ kind: 'builtin' }),
  view: 'overview', // the landing view
  edits: null, // the open lesson's edited cells (editCells); new in format 2, which had no field for them
  probe: false, // the head grid shows the induction probe (its scores are recomputed, never carried)
  // The interventions (issue #13), new in format 2 with defaults that mean "none", so older links
  // keep their meaning: the heads knocked out, as [layer, head] pairs (ablation); the second
  // sentence of the compare view (null: the first with one word swapped, views/compare.js); the
  // target token id of head attribution (null: the model's top-1 next token at the position).
  ablate: Object.freeze([]),
  compare: null,
  target: null,
  // New in format 3: the input starts with the model's BOS token (when its config names one).
  bos: true,
  // How the next token is chosen (parts/sampling.js, MiniMind's generate): the logits divided by
  // `temperature` (0: always the most likely), the `topK` most likely kept (0: no cut), then the
  // fewest whose probabilities reach `topP` (1: no cut), and the draw's seed. At their defaults the
  // probabilities are the model's own softmax; links made before they existed meant that.
  temperature: 1,
  topK: 0,
  topP: 1,
  draw: 0,
  // The scale view's own row of scores as typed (null: the seed's "10, 20, 30") and the divisor it
  // is shown under (null: the seed's τ = 10), so that a link shows the softmax its maker saw.
  scores: null,
  scoresTau: null,
  // The patching view's metric, logit[patchTarget] − logit[patchAgainst] at the last position
  // (views/patch.js); null: the clean run's top-1 next token, and the corrupted run's.
  patchTarget: null,
  patchAgainst: null,
});

// Fields format 2 gained that format 1 never had, and format 3 those format 2 never had: an older
// link opens with them as it meant them without saying (AS_BEFORE), format 2's at their "nothing"
// and format 3's BOS off.
const FORMAT2_ONLY = ['edits', 'probe', 'ablate', 'compare', 'target'];
const SAMPLING = ['temperature', 'topK', 'topP', 'draw'];
const FORMAT3_ONLY = ['bos', ...SAMPLING, 'scores', 'scoresTau', 'patchTarget', 'patchAgainst'];
const AS_BEFORE = Object.freeze({ ...Object.fromEntries([...FORMAT2_ONLY, ...SAMPLING, 'scores', 'scoresTau', 'patchTarget', 'patchAgainst'].map((key) => [key, DEFAULTS[key]])), bos: false });

// Fields every s2 link writes even at their default: the reader's language and the landing view
// are defaults that differ between browsers and releases, and a link must not.
const ALWAYS_WRITTEN = ['lang', 'view'];

export const LANGUAGES = ['en', 'zh'];

/** The reader's language from navigator.languages: the first entry the page has ('zh-CN' → 'zh'). */
export function readerLanguage(languages) {
  for (const tag of Array.isArray(languages) ? languages : []) {
    const lang = String(tag).toLowerCase().split('-')[0];
    if (LANGUAGES.includes(lang)) return lang;
  }
  return 'en';
}

/**
 * The text a state shows: its own, or for text null the first of `samples` ({en: [...], zh: [...]},
 * the built-in model's sample sentences) in its language; without samples, format 1's sentence.
 */
export function textOf({ text, lang }, samples) {
  return text ?? samples?.[lang]?.[0] ?? FORMAT1_DEFAULTS.text;
}

// --- field checks: each returns {value} or {value, clamped: true}, or null when unusable ---

// Number checks carry their range (`range`: {lo, hi, integer}), which the model panel refuses
// outside of, so that what it applies is what its link then says.
function int(lo, hi) {
  const check = (v) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return null;
    const r = Math.min(hi, Math.max(lo, Math.round(v)));
    return r === v ? { value: r } : { value: r, clamped: true };
  };
  return Object.assign(check, { range: { lo, hi, integer: true } });
}

function real(lo, hi) {
  const check = (v) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return null;
    const r = Math.min(hi, Math.max(lo, v));
    return r === v ? { value: r } : { value: r, clamped: true };
  };
  return Object.assign(check, { range: { lo, hi, integer: false } });
}

function nullable(check) {
  return Object.assign((v, known) => (v === null ? { value: null } : check(v, known)), { range: check.range });
}

function bool(v) {
  return typeof v === 'boolean' ? { value: v } : null;
}

function oneOf(list) {
  return (v) => (list.includes(v) ? { value: v } : null);
}

// An id from a list the page knows (its views, steps, lessons), or any plain id when it gave none.
function id(listName) {
  return (v, known) => {
    if (typeof v !== 'string' || !/^[A-Za-z0-9][\w.-]*$/.test(v) || v.length > MAX_ID) return null;
    const list = known[listName];
    return !list || list.includes(v) ? { value: v } : null;
  };
}

function text(v) {
  if (typeof v !== 'string') return null;
  const chars = Array.from(v.toWellFormed());
  return chars.length > MAX_TEXT ? { value: chars.slice(0, MAX_TEXT).join(''), clamped: true } : { value: chars.join('') };
}

// The scale view's own row as typed: what the reader wrote, numbers or not (the view says what is
// wrong with it), up to MAX_SCORES_TEXT characters.
export const MAX_SCORES_TEXT = 1000;
function scoresText(v) {
  if (typeof v !== 'string') return null;
  const chars = Array.from(v.toWellFormed());
  return chars.length > MAX_SCORES_TEXT ? { value: chars.slice(0, MAX_SCORES_TEXT).join(''), clamped: true } : { value: chars.join('') };
}

// A model URL must be http(s), absolute or relative to the page; anything else (javascript:,
// data:, file:) is refused.
function modelUrl(v) {
  if (typeof v !== 'string' || v.length === 0 || v.length > MAX_URL) return false;
  try {
    return ['http:', 'https:'].includes(new URL(v, 'https://relative.invalid/').protocol);
  } catch {
    return false;
  }
}

// A Hugging Face Hub repo id: "owner/name", each part letters, digits, "-", "_" and "." (not first),
// at most 96 characters as the Hub allows; it becomes a path under the Hub's address, so nothing else.
const HUB_REPO = /^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/;
export const isHubRepo = (repo) => HUB_REPO.test(repo) && !repo.includes('..');
/** What a reader typed in the Hub field, as a repo id: the id itself, or the one in a repo's address
 * pasted from the browser (https://huggingface.co/owner/name, …/tree/main/…), spaces trimmed. */
export function hubRepoOf(text) {
  const typed = String(text).trim();
  const page = /^(?:https?:\/\/)?(?:www\.)?huggingface\.co\/([^/?#\s]+)\/([^/?#\s]+)/i.exec(typed);
  return page ? `${page[1]}/${page[2]}` : typed;
}

// One GGUF file of a Hub repo: its path in the repo (folders allowed, as repos with one folder per
// quantization have them), ending in .gguf; never "..", a leading "/" or anything a URL would read
// as more than a path.
const HUB_FILE = /^(?:[A-Za-z0-9_][\w.-]*\/){0,4}[A-Za-z0-9_][\w.-]*\.gguf$/i;
export const isHubFile = (file) => typeof file === 'string' && file.length <= 200 && HUB_FILE.test(file) && !file.includes('..');

/** What a reader typed in the Hub field, as the model a link names: {kind: 'hub', repo} for
 * "owner/name" (or its page's address), and with `file` for "owner/name:file.gguf" (or the address
 * of that file's page, …/blob/main/file.gguf or …/resolve/main/file.gguf). */
export function hubModelOf(text) {
  const typed = String(text).trim();
  const page = /^(?:https?:\/\/)?(?:www\.)?huggingface\.co\/[^/?#\s]+\/[^/?#\s]+\/(?:blob|resolve)\/main\/([^?#\s]+\.gguf)(?:[?#]|$)/i.exec(typed);
  if (page) return { kind: 'hub', repo: hubRepoOf(typed), file: decodeURIComponent(page[1]) };
  const colon = typed.indexOf(':');
  const named = colon > 0 && !/^https?:/i.test(typed) ? { repo: typed.slice(0, colon).trim(), file: typed.slice(colon + 1).trim() } : null;
  return named ? { kind: 'hub', repo: hubRepoOf(named.repo), file: named.file } : { kind: 'hub', repo: hubRepoOf(typed) };
}

function model(v) {
  if (!isObject(v) || !MODEL_KINDS.includes(v.kind)) return null;
  if (v.kind === 'url') return modelUrl(v.url) ? { value: { kind: 'url', url: v.url } } : null;
  if (v.kind === 'hub') {
    if (typeof v.repo !== 'string' || !isHubRepo(v.repo)) return null;
    if (v.file === undefined) return { value: { kind: 'hub', repo: v.repo } };
    return isHubFile(v.file) ? { value: { kind: 'hub', repo: v.repo, file: v.file } } : null;
  }
  return { value: { kind: v.kind } };
}

// Hugging Face config.json keys the page sets; the core fills in the rest with MiniMind-3's defaults.
const CONFIG = {
  hidden_size: int(1, MAX_HIDDEN),
  num_hidden_layers: int(1, MAX_LAYERS),
  num_attention_heads: int(1, MAX_HEADS),
  num_key_value_heads: int(1, MAX_HEADS),
  head_dim: nullable(int(1, MAX_HEAD_DIM)),
  intermediate_size: nullable(int(1, MAX_INTERMEDIATE)),
  vocab_size: int(1, MAX_VOCAB),
  rope_theta: real(1.0001, 1e12),
  rms_norm_eps: real(1e-12, 1),
  max_position_embeddings: int(1, 1 << 20),
  tie_word_embeddings: bool,
  inference_rope_scaling: bool,
  qk_norm: bool,
  // MiniMind's mixture of experts; whether num_experts_per_tok fits num_experts the core says.
  use_moe: bool,
  num_experts: int(1, MAX_EXPERTS),
  num_experts_per_tok: int(1, MAX_EXPERTS),
  moe_intermediate_size: nullable(int(1, MAX_INTERMEDIATE)),
  norm_topk_prob: bool,
};

// Sorted, without duplicates; an entry that is not allowed is dropped (and reported).
function list(check, maxLength) {
  return (v, known) => {
    if (!Array.isArray(v) || v.length > maxLength) return null;
    const kept = new Set();
    for (const item of v) {
      const r = check(item, known);
      if (r && !r.clamped) kept.add(r.value);
    }
    const value = [...kept].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { value, clamped: value.length !== v.length };
  };
}

// edits: {tableId: [[row, column, value], …]}, table ids as lessons name them ("qk.q"). Cells sorted by
// position, one per position (the last wins); a cell that is not two indexes and a finite number
// is dropped, a value beyond ±MAX_EDIT_VALUE cut to it, a table with nothing left dropped, and no
// tables at all is null. Whether a cell fits its table's shape only the lesson knows (lessons.js).
function editCells(v) {
  if (!isObject(v)) return null;
  const index = int(0, MAX_EDIT_INDEX);
  const number = real(-MAX_EDIT_VALUE, MAX_EDIT_VALUE);
  const tables = {};
  let clamped = false;
  for (const [table, cells] of Object.entries(v)) {
    if (Object.keys(tables).length === MAX_EDIT_TABLES || !id(null)(table, {}) || !Array.isArray(cells) || cells.length > MAX_EDIT_CELLS) {
      clamped = true;
      continue;
    }
    const byPosition = new Map();
    for (const cell of cells) {
      const [r, c, x] = Array.isArray(cell) && cell.length === 3 ? [index(cell[0]), index(cell[1]), number(cell[2])] : [];
      if (!r || !c || !x || r.clamped || c.clamped) {
        clamped = true;
        continue;
      }
      clamped ||= Boolean(x.clamped) || byPosition.has(r.value * (MAX_EDIT_INDEX + 1) + c.value);
      byPosition.set(r.value * (MAX_EDIT_INDEX + 1) + c.value, [r.value, c.value, x.value]);
    }
    if (byPosition.size) tables[table] = [...byPosition.entries()].sort((a, b) => a[0] - b[0]).map(([, cell]) => cell);
    else clamped = true;
  }
  const value = Object.keys(tables).length ? tables : null;
  return clamped ? { value, clamped } : { value };
}

// ablate: heads as [layer, head] pairs, sorted and one of each; a pair outside the core's limits, or
// not two integers, is dropped. A plain link writes them "0.1,2.3" (layer.head).
const MAX_ABLATED = 1024;
function headPairs(v) {
  if (!Array.isArray(v) || v.length > MAX_ABLATED) return null;
  const kept = new Map();
  for (const pair of v) {
    const ok = Array.isArray(pair) && pair.length === 2 && Number.isInteger(pair[0]) && Number.isInteger(pair[1]) && pair[0] >= 0 && pair[0] < MAX_LAYERS && pair[1] >= 0 && pair[1] < MAX_HEADS;
    if (ok) kept.set(pair[0] * MAX_HEADS + pair[1], [pair[0], pair[1]]);
  }
  const value = [...kept.entries()].sort((a, b) => a[0] - b[0]).map(([, pair]) => pair);
  return { value, clamped: value.length !== v.length };
}

const FIELDS = {
  lesson: nullable(id('lessons')),
  lang: oneOf(LANGUAGES),
  text: nullable(text),
  model,
  config: null, // checked key by key below
  seed: int(0, MAX_SEED),
  causal: bool,
  view: id('views'),
  step: id('steps'),
  layer: int(0, MAX_LAYERS - 1),
  head: int(0, MAX_HEADS - 1),
  query: nullable(int(0, MAX_TOKENS - 1)),
  key: nullable(int(0, MAX_TOKENS - 1)),
  pad: list(int(0, MAX_TOKENS - 1), MAX_TOKENS),
  stage: id('stages'),
  allHeads: bool,
  divisor: nullable(real(1e-3, 1e4)), // softmax(q·k / divisor) in the scale view; null: √d
  yarn: bool,
  tile: nullable(int(1, MAX_TOKENS)), // keys per tile in the flash view; null: its default
  context: nullable(int(1, MAX_CONTEXT)), // context length for KV-cache sizes (GQA view); null: its default
  backend: oneOf(['auto', 'cpu', 'gpu']),
  hide: list(oneOf(HIDE_FLAGS), MAX_HIDE),
  edits: nullable(editCells),
  probe: bool,
  ablate: headPairs,
  compare: nullable(text),
  target: nullable(int(0, MAX_VOCAB - 1)),
  bos: bool,
  temperature: real(0, 10),
  topK: int(0, MAX_VOCAB),
  topP: real(0.01, 1),
  draw: int(0, MAX_SEED),
  scores: nullable(scoresText),
  scoresTau: nullable(real(0.1, 100)), // the scale view's own-row slider: 10^-1 to 10^2
  patchTarget: nullable(int(0, MAX_VOCAB - 1)),
  patchAgainst: nullable(int(0, MAX_VOCAB - 1)),
};

// Format 1 had no sample text: its text null was refused, as it still is. Nor had it the FORMAT2_ONLY
// and FORMAT3_ONLY fields: a format-1 link holding one names a field it did not know, and opens with
// none; a format-2 link likewise knows no FORMAT3_ONLY field.
// Format 1 had no Hub repos and no SmolLM2 either: its links open as they did (such a model was invalid).
const earlierHide = list(oneOf(EARLIER_HIDE_FLAGS), MAX_HIDE);
const FORMAT1_FIELDS = Object.fromEntries(Object.entries({ ...FIELDS, text, hide: earlierHide, model: (v) => (['hub', 'smollm2'].includes(v?.kind) ? null : model(v)) }).filter(([key]) => !FORMAT2_ONLY.includes(key) && !FORMAT3_ONLY.includes(key)));
const FORMAT2_FIELDS = Object.fromEntries(Object.entries({ ...FIELDS, hide: earlierHide }).filter(([key]) => !FORMAT3_ONLY.includes(key)));
const FIELDS_OF = { 1: FORMAT1_FIELDS, 2: FORMAT2_FIELDS, 3: FIELDS };

/** The range a link keeps of a config key or of `seed`: {lo, hi, integer}, or null where it has none. */
export function linkRange(key) {
  return (key === 'seed' ? FIELDS.seed : CONFIG[key])?.range ?? null;
}

function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own(object, key) {
  return Object.prototype.hasOwnProperty.call(object, key);
}

function copy(value) {
  return value === null || typeof value !== 'object' ? value : JSON.parse(JSON.stringify(value));
}

// Problems: {field, reason} with reason 'invalid' (the value was unusable and the fallback was
// kept), 'clamped' (it was cut into range; a layer or head also says the number `asked`),
// 'repaired' (a plain field's broken percent-escape, read as far as it goes), 'unknown' (no such
// field); {field: null, reason: 'damaged' | 'future' | 'too-long', version?} for the link as a whole.
function checkConfig(raw, fallback, note) {
  if (!isObject(raw)) {
    note('config', 'invalid');
    return copy(fallback);
  }
  const config = {};
  for (const [key, check] of Object.entries(CONFIG)) {
    if (!own(raw, key)) continue;
    const r = check(raw[key], {});
    if (r) config[key] = r.value;
    else if (own(fallback, key)) config[key] = fallback[key];
    if (!r) note(`config.${key}`, 'invalid');
    else if (r.clamped) note(`config.${key}`, 'clamped');
  }
  for (const key of Object.keys(raw)) if (!own(CONFIG, key)) note(`config.${key}`, 'unknown');
  return config;
}

// Fields whose number, cut into range, is said as asked ("target token 99999999999"), not as cut.
const ASKED = ['layer', 'head', 'target'];

/**
 * A complete, valid state from `raw` (any value): each field of raw that passes its check, clamped
 * into range; every other field from `base` (a valid state: DEFAULTS, or the page's current state
 * when raw is a partial update). `known` narrows ids to what the page has: {views, steps, stages,
 * lessons}, each an array of ids (optional). `format`: the link format whose rules apply.
 */
export function validate(raw, base = DEFAULTS, known = {}, format = VERSION) {
  const fields = FIELDS_OF[format];
  const problems = [];
  const note = (field, reason, extra = {}) => problems.push({ field, reason, ...extra });
  if (!isObject(raw)) {
    note(null, 'damaged');
    raw = {};
  }
  const state = Object.fromEntries(Object.keys(FIELDS).filter((key) => !own(fields, key)).map((key) => [key, copy(AS_BEFORE[key])])); // an older format had none
  for (const [key, check] of Object.entries(fields)) {
    if (!own(raw, key)) {
      state[key] = copy(base[key]);
    } else if (key === 'config') {
      state.config = checkConfig(raw.config, base.config, note);
    } else {
      const r = check(raw[key], known);
      state[key] = r ? r.value : copy(base[key]);
      // A view the page does not have is named back to the reader (format 1's problems as they were).
      if (!r) note(key, 'invalid', key === 'view' && format !== 1 && typeof raw.view === 'string' ? { value: Array.from(raw.view).slice(0, MAX_ID).join('') } : {});
      else if (r.clamped) note(key, 'clamped');
    }
  }
  for (const key of Object.keys(raw)) if (!own(fields, key)) note(key, 'unknown');
  // The layer and head must exist in a random model of this config; a loaded checkpoint's sizes
  // are known only once it is loaded (fitToModel).
  if (state.model.kind === 'random') {
    const fit = fitToModel(state, state.config);
    for (const key of ['layer', 'head', 'ablate']) {
      if (JSON.stringify(fit[key]) !== JSON.stringify(state[key])) note(key, 'clamped');
      state[key] = fit[key];
    }
  }
  // A layer, head or target token cut into range (not merely rounded: 1.4 is layer 1) keeps the
  // number asked for: the page says it with the model's sizes.
  for (const p of problems) {
    if (p.reason === 'clamped' && ASKED.includes(p.field) && Number.isFinite(raw[p.field]) && Math.round(raw[p.field]) !== state[p.field]) p.asked = raw[p.field];
  }
  return { state, problems };
}

/**
 * `text` with its percent-escapes decoded: {text, repaired}. An escape that is not two hex digits is
 * kept as written, and bytes that are not UTF-8 (a lone surrogate's, a character cut in two) read as
 * U+FFFD; `repaired` says that either happened.
 */
function percentDecoded(text) {
  try {
    return { text: decodeURIComponent(text), repaired: false };
  } catch {
    const utf8 = new TextDecoder('utf-8', { fatal: false });
    const decoded = text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => utf8.decode(Uint8Array.from(run.slice(1).split('%'), (hex) => parseInt(hex, 16))));
    return { text: decoded, repaired: true };
  }
}

/**
 * The layer and head clamped to a model's sizes (a config.json; absent sizes leave them alone), and
 * the knocked-out heads the model does not have dropped.
 */
export function fitToModel({ layer, head, ablate = [], target = null, patchTarget = null, patchAgainst = null }, { num_hidden_layers: layers, num_attention_heads: heads, vocab_size: vocab }) {
  const inVocab = (id) => (vocab && id !== null && id >= vocab ? null : id);
  return {
    layer: layers ? Math.min(layer, layers - 1) : layer,
    head: heads ? Math.min(head, heads - 1) : head,
    ablate: ablate.filter(([l, h]) => (!layers || l < layers) && (!heads || h < heads)),
    // A target token past this model's vocabulary (a link made for a bigger one): back to the top-1 token.
    target: inVocab(target),
    // So are the patching view's two tokens: back to the two runs' top-1 tokens.
    patchTarget: inVocab(patchTarget),
    patchAgainst: inVocab(patchAgainst),
  };
}

/** The padded positions and the selected tokens clamped to an input of `count` tokens. */
export function fitToTokens({ pad, query, key }, count) {
  const token = (i) => (i !== null && i < count ? i : null);
  return { pad: pad.filter((i) => i < count), query: token(query), key: token(key) };
}

// --- the link: fields ↔ fragment ---

function toBase64url(bytes) {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(s) {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) throw new Error('not base64url');
  const binary = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

async function deflate(text) {
  const stream = new Blob([new TextEncoder().encode(text)]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// Inflates at most MAX_JSON bytes; a corrupt or truncated stream rejects.
async function inflate(bytes) {
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_JSON) {
      reader.cancel().catch(() => {});
      throw new Error('payload too large');
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(all);
}

/** "s3.…": the fields of a state that differ from DEFAULTS (and ALWAYS_WRITTEN), compressed. */
export async function encode(state) {
  const { state: clean } = validate(state);
  const diff = {};
  for (const key of Object.keys(FIELDS)) if (ALWAYS_WRITTEN.includes(key) || JSON.stringify(clean[key]) !== JSON.stringify(DEFAULTS[key])) diff[key] = clean[key];
  return `s${VERSION}.${toBase64url(await deflate(JSON.stringify(diff)))}`;
}

/** The fragment (without "#") of a link to a state; embed: the embed-mode flag. */
export async function fragment(state, { embed = false, theme = null } = {}) {
  return `${await encode(state)}${embed ? '&embed=1' : ''}${embed && EMBED_THEMES.includes(theme) ? `&theme=${theme}` : ''}`;
}

/** The themes an embed's link may fix ("&theme=dark"), for a post whose page is light or dark. */
export const EMBED_THEMES = ['light', 'dark'];

// Plain "key=value" fields: strings turned into what a JSON payload would hold.
const PLAIN = {
  number: ['seed', 'layer', 'head', 'query', 'key', 'divisor', 'tile', 'context', 'target', 'temperature', 'topK', 'topP', 'draw', 'scoresTau', 'patchTarget', 'patchAgainst'],
  boolean: ['causal', 'allHeads', 'yarn', 'probe', 'bos'],
  list: ['hide', 'pad', 'ablate'],
  string: ['lesson', 'lang', 'text', 'view', 'step', 'stage', 'backend', 'compare', 'scores'],
  model: ['model'], // "model=random", "model=builtin", "model=smollm2": a link names its model plainly
};

// A hand-written link may name a view as its tab does, in either language ("Pipeline", "Head grid",
// "注意力图"), in any case and with or without spaces, hyphens and underscores: those names open the
// view, as its id does ("ATTENTION", "head-grid").
const squash = (name) => name.toLowerCase().replace(/[\s_\-·/]+/g, '');
const VIEW_ALIASES = Object.freeze(
  Object.fromEntries(
    Object.values(STRINGS).flatMap((table) =>
      Object.entries(table)
        .filter(([key]) => /^view\.[a-z]+$/.test(key))
        .flatMap(([key, label]) => [[squash(label), key.slice(5)], [squash(key.slice(5)), key.slice(5)]]),
    ),
  ),
);
// "zh-CN", "zh-Hans", "EN-us": the language a browser or a person would write, to the page's two.
const languageOf = (value) => {
  const base = value.trim().toLowerCase().split(/[-_]/)[0];
  return LANGUAGES.includes(base) ? base : value;
};

function plainValue(key, value) {
  if (key === 'model') return { kind: value };
  if (key === 'view' && own(VIEW_ALIASES, squash(value))) return VIEW_ALIASES[squash(value)];
  if (key === 'lang') return languageOf(value);
  if (PLAIN.number.includes(key)) return value === 'null' ? null : value.trim() === '' ? value : Number(value);
  if (PLAIN.boolean.includes(key)) return { true: true, 1: true, false: false, 0: false }[value] ?? value;
  if (key === 'hide') return value === '' ? [] : value.split(',');
  if (key === 'pad') return value === '' ? [] : value.split(',').map((v) => (v.trim() === '' ? v : Number(v)));
  if (key === 'ablate') return value === '' ? [] : value.split(',').map((v) => (/^\d+\.\d+$/.test(v.trim()) ? v.trim().split('.').map(Number) : v));
  return value;
}

const PLAIN_KEYS = Object.values(PLAIN).flat();

/**
 * Reads a URL fragment ("#" optional). Returns {state, problems, embed}: state is always valid.
 * A fragment with an "sN." payload describes a whole state (missing fields are format N's
 * defaults); one with only plain fields ("view=grid") changes `base` (the page passes its current
 * state), or on a fresh page the format-2 defaults. `lang`: the reader's language
 * (readerLanguage), the language of a format-2 link or a fresh page's plain link that does not say.
 */
export async function decode(fragmentText, { base = null, known = {}, lang = DEFAULTS.lang } = {}) {
  const problems = [];
  const note = (field, reason, extra = {}) => problems.push({ field, reason, ...extra });
  const defaults = LANGUAGES.includes(lang) ? { ...DEFAULTS, lang } : DEFAULTS;
  let raw = {};
  const plain = {};
  let format = null; // of the whole state the link holds; null: plain fields alone
  let embed = false;
  let wholeRead = false; // the link's whole state (s<N>.…) was read
  let theme = null; // an embed's fixed theme ("&theme=dark"), like the embed flag a property of the link
  const unknownToFormat1 = []; // plain fields formats 2 and 3 gained, and where a format-1 decoder noted them
  const input = String(fragmentText ?? '').replace(/^#/, '');
  const format1 = /(^|&)s0*1\./.test(input); // its broken escapes still damage it, as they always did
  if (input.length > MAX_FRAGMENT) {
    note(null, 'too-long');
    return { ...validate({}, defaults, known), problems, embed };
  }
  for (const part of input.split('&')) {
    if (part === '') continue;
    const versioned = /^s(\d{1,6})\.(.*)$/s.exec(part);
    if (versioned) {
      if (format !== null) {
        note(null, 'damaged');
        continue;
      }
      const version = Number(versioned[1]);
      // A damaged format-1 or format-2 link opens its format's defaults, as it always did.
      format = version === 1 || version === 2 ? version : VERSION;
      if (version > VERSION) note(null, 'future', { version });
      else if (version < 1) note(null, 'damaged');
      else {
        try {
          // Trailing "=" is base64 padding, or what URLSearchParams makes of a bare key.
          const parsed = JSON.parse(await inflate(fromBase64url(versioned[2].replace(/=+$/, ''))));
          if (isObject(parsed)) {
            raw = parsed;
            wholeRead = true;
          } else note(null, 'damaged');
        } catch {
          note(null, 'damaged');
        }
      }
      continue;
    }
    const eq = part.indexOf('=');
    const name = percentDecoded(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? { text: '' } : percentDecoded(part.slice(eq + 1).replace(/\+/g, ' '));
    if (name.repaired || (value.repaired && format1)) {
      note(null, 'damaged');
      continue;
    }
    const key = name.text;
    // A value with a broken escape (hand-edited, or cut inside a character) opens as far as it reads,
    // and the reader is told which field it was.
    if (value.repaired && PLAIN_KEYS.includes(key)) note(key, 'repaired');
    if (key === 'embed') embed = value.text !== '0' && value.text !== 'false';
    else if (key === 'theme') {
      if (EMBED_THEMES.includes(value.text)) theme = value.text;
      else note('theme', 'invalid');
    }
    else if (PLAIN_KEYS.includes(key)) {
      // A field given twice (view=grid&view=lessons) opens as its last, and the reader is told.
      if (own(plain, key) && !format1) note(key, 'repeated');
      plain[key] = plainValue(key, value.text);
      // Format 1 did not know this field: a format-1 link notes it where its decoder did.
      if (FORMAT2_ONLY.includes(key) || FORMAT3_ONLY.includes(key)) unknownToFormat1.push({ field: key, reason: 'unknown', at: problems.length });
    } else note(key.slice(0, MAX_ID), 'unknown');
  }
  // A damaged link's plain fields still open (view=…&s3.<cut>): the reader is told which. (Format 1
  // says what its own decoder said, exactly.)
  const damaged = problems.find((p) => p.field === null && p.reason === 'damaged');
  if (damaged && format !== 1 && Object.keys(plain).length) damaged.kept = Object.keys(plain);
  if (format === 1) {
    for (const { field, at } of unknownToFormat1.reverse()) {
      problems.splice(at, 0, { field, reason: 'unknown' });
      delete plain[field];
    }
  }
  // A link that should have held a whole state but did not is opened with its format's defaults;
  // on a live page (a `base`), a damaged one leaves the reader's state as it was (their sentence is
  // not lost to a link cut short when it was copied), changing only what it wrote out plainly.
  const lostOnLivePage = base && format !== null && format !== 1 && !wholeRead && damaged; // format 1 as it always did
  const start = lostOnLivePage ? base : format === 1 ? FORMAT1_DEFAULTS : format !== null || !base ? defaults : base;
  // Kept from the page, the fields are the page's format's (an s2. link's format lacks some).
  const result = validate({ ...raw, ...plain }, start, known, lostOnLivePage ? VERSION : format ?? VERSION);
  return { state: result.state, problems: [...problems, ...result.problems], embed, ...(theme ? { theme } : {}), ...(lostOnLivePage ? { keptBase: true } : {}) };
}

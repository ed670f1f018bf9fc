// The link format (www/state.js), in node: a link round-trips; a damaged, truncated, future,
// oversized or hostile link opens with the defaults and says why; a format-1 link opens exactly as
// the format-1 decoder (format1_oracle.mjs) opens it; a format-2 link opens as before, without BOS;
// plain links open format 3's defaults in the reader's language; and 100,000 random and mutated links never crash, never hang, always give a
// valid state, and every s1 one among them the state the old decoder gave.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULTS, FORMAT1_DEFAULTS, HIDE_FLAGS, MAX_TEXT, hubModelOf, hubRepoOf, MODEL_KINDS, decode, encode, fitToModel, fitToTokens, fragment, readerLanguage, textOf, validate } from '../../www/state.js';
import * as format1 from './format1_oracle.mjs';

const KNOWN = { views: ['overview', 'stepper', 'attention', 'grid', 'masks', 'lines'], steps: ['embed', 'qkv', 'scores', 'probs'], stages: ['scores', 'masked', 'probs'], lessons: ['causal-mask', 'qk-match'] };

// A state that differs from format 1's DEFAULTS in every field format 1 had.
const EVERYTHING1 = {
  lesson: 'causal-mask',
  lang: 'zh',
  text: '注意力 lets tokens look back.',
  model: { kind: 'url', url: 'https://example.org/m/' },
  config: { hidden_size: 96, num_hidden_layers: 3, num_attention_heads: 6, num_key_value_heads: 2, head_dim: 16, vocab_size: 6400, rope_theta: 10000 },
  seed: 7,
  causal: false,
  view: 'attention',
  step: 'probs',
  layer: 2,
  head: 5,
  query: 3,
  key: 1,
  pad: [0, 4],
  stage: 'masked',
  allHeads: true,
  divisor: 2.5,
  yarn: true,
  tile: 8,
  context: 4096,
  backend: 'cpu',
  hide: ['config', 'tabs'],
};

// A state that differs from DEFAULTS in every field: format 2 added a lesson's edited cells and the
// induction probe, the interventions (knocked-out heads, the compare view's second sentence, head attribution's target).
const EVERYTHING = {
  ...EVERYTHING1,
  edits: { 'causal-mask.scores': [[0, 3, 5], [2, 0, 0.9]], 'qk.q': [[1, 1, -0.25]] },
  probe: true,
  ablate: [[0, 1], [2, 3], [2, 5]],
  compare: 'The cats sat on the mat.',
  target: 1234,
  bos: false,
  temperature: 0.7,
  topK: 50,
  topP: 0.9,
  draw: 3,
  scores: '1, 2, 30',
  scoresTau: 2.5,
  patchTarget: 1234,
  patchAgainst: 0,
};

// Format 2's later fields at their "nothing": what a format-1 link opens them as.
const FORMAT2_NOTHING = { edits: null, probe: false, ablate: [], compare: null, target: null };
// Format 3's fields as links of formats 1 and 2 meant them by not having them: no BOS token first,
// the model's own softmax at the prediction.
const FORMAT3_BEFORE = { bos: false, temperature: 1, topK: 0, topP: 1, draw: 0, scores: null, scoresTau: null, patchTarget: null, patchAgainst: null };
// What a link of format N opens with when it says nothing (or is damaged).
// EVERYTHING as a format-2 link could hold it: without format 3's fields.
const EVERYTHING2 = { ...EVERYTHING, ...Object.fromEntries(Object.keys(FORMAT3_BEFORE).map((key) => [key, undefined])) };
const OPENS = { 1: { ...FORMAT1_DEFAULTS, ...FORMAT2_NOTHING, ...FORMAT3_BEFORE }, 2: { ...DEFAULTS, ...FORMAT3_BEFORE }, 3: DEFAULTS };

// What a format-1 link opens as the format-1 decoder opened it: the same, with format 2's later
// fields at their "nothing" (format 1 had none of them).
async function asFormat1(input, options) {
  const old = await format1.decode(input, options);
  return { ...old, state: { ...old.state, ...FORMAT2_NOTHING, ...FORMAT3_BEFORE } };
}

// EVERYTHING1 as format 1 wrote it when the format was made; it must always open the same way.
const PINNED =
  's1.PZFBbuMwDEWvEvw1mzhtmpnyBHOHojAYi40Fy5JHktO6RXazmk0P0AvMfs7UnqOQk3RDCJ8iP_H-K5ymFDwYjYxJ3FUvqQPBid-D8dKCkPU5g_H5_9_nn7ePv-8LpzktcujUp4ULoVvspOmWIPTBqAO_orPegDFGB5oro815SLxa6bP0g9NliPtVv8KR0AT_aPdlrLXGqK-TfVHw3Zbgx74-i04mjQl8c1IlZ_XZBl-3KiaBz787neqDuFEv-jWhvGpje_B6SziERnZnj-2mqggxDFrnVrOA11VVVUdCUjXgH3TmAn4Ul5RwsPoExrc9CCnrAMYQwy7N6CaN377gW8LvUeM0n97pBF4ThtK5r2jzUOZlr2AU9GpAEOd-nY7PcVSCsQebQtm5vCVMEv2lk61T8M-Z4SmmTVW4lUB0jqAZRlABq-D7C2pCll3Cw_EL';

// A link of format `version` holding `json` as it is (a hand-made or hand-edited link).
async function payload(json, version = 1) {
  const stream = new Blob([new TextEncoder().encode(json)]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return `s${version}.${Buffer.from(await new Response(stream).arrayBuffer()).toString('base64url')}`;
}

// The JSON a link's payload holds.
async function contents(link) {
  const bytes = Buffer.from(link.replace(/^s\d+\./, ''), 'base64url');
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
  return JSON.parse(await new Response(stream).text());
}

// The version of the whole state a fragment holds (its first "sN." part), or null for plain fields.
function versionOf(input) {
  const part = String(input).replace(/^#/, '').split('&').find((p) => /^s\d{1,6}\./.test(p));
  return part ? Number(/^s(\d+)/.exec(part)[1]) : null;
}

// Whether a fragment has a plain "model=" or "probe=" field: format 1 had neither (each was an
// unknown field then).
function namesLaterPlainField(input) {
  return String(input)
    .replace(/^#/, '')
    .split('&')
    .some((part) => {
      try {
        return ['model', 'probe'].includes(decodeURIComponent(part.split('=')[0]));
      } catch {
        return false;
      }
    });
}

const reasons = (problems) => problems.map((p) => (p.field ? `${p.field}:${p.reason}` : p.reason));

// --- the spec of a valid state, written independently of state.js ---
const CONFIG_LIMITS = {
  hidden_size: [1, 8192, true],
  num_hidden_layers: [1, 64, true],
  num_attention_heads: [1, 256, true],
  num_key_value_heads: [1, 256, true],
  head_dim: [1, 1024, true],
  intermediate_size: [1, 65536, true],
  vocab_size: [1, 262144, true],
  rope_theta: [1, 1e12, false],
  rms_norm_eps: [0, 1, false],
  max_position_embeddings: [1, 1 << 20, true],
};
const CONFIG_FLAGS = ['tie_word_embeddings', 'inference_rope_scaling', 'qk_norm'];
const ID = /^[A-Za-z0-9][\w.-]{0,63}$/;

function isInt(v, lo, hi) {
  return Number.isInteger(v) && v >= lo && v <= hi;
}

function assertValid(state, known = {}) {
  assert.deepEqual(Object.keys(state).sort(), Object.keys(DEFAULTS).sort());
  assert.deepEqual(JSON.parse(JSON.stringify(state)), state, 'plain JSON data');
  const { lesson, lang, text, model, config, seed, causal, view, step, layer, head, query, key, pad, stage, allHeads, divisor, yarn, tile, context, backend, hide, edits, probe, ablate, compare, target, bos } = state;
  assert.ok(lesson === null || (ID.test(lesson) && (!known.lessons || known.lessons.includes(lesson))), `lesson ${lesson}`);
  assert.ok(['en', 'zh'].includes(lang));
  assert.ok(text === null || (typeof text === 'string' && text.isWellFormed() && Array.from(text).length <= MAX_TEXT), 'text: null (the sample) or text');
  assert.ok(MODEL_KINDS.includes(model.kind));
  assert.deepEqual(Object.keys(model), model.kind === 'url' ? ['kind', 'url'] : ['kind']);
  if (model.kind === 'url') assert.match(new URL(model.url, 'https://x.invalid/').protocol, /^https?:$/);
  assert.ok(config && typeof config === 'object' && !Array.isArray(config));
  for (const [key, v] of Object.entries(config)) {
    if (CONFIG_FLAGS.includes(key)) assert.equal(typeof v, 'boolean');
    else {
      const [lo, hi, integer] = CONFIG_LIMITS[key] ?? assert.fail(`config.${key}`);
      if (v === null) assert.ok(key === 'head_dim' || key === 'intermediate_size');
      else assert.ok(integer ? isInt(v, lo, hi) : Number.isFinite(v) && v > lo && v <= hi, `config.${key} = ${v}`);
    }
  }
  assert.ok(isInt(seed, 0, Number.MAX_SAFE_INTEGER));
  assert.equal(typeof causal, 'boolean');
  assert.equal(typeof allHeads, 'boolean');
  assert.equal(typeof yarn, 'boolean');
  assert.equal(typeof probe, 'boolean');
  assert.equal(typeof bos, 'boolean');
  assert.ok(divisor === null || (Number.isFinite(divisor) && divisor > 0 && divisor <= 1e4), `divisor ${divisor}`);
  for (const [v, list] of [[view, known.views], [step, known.steps], [stage, known.stages]]) assert.ok(ID.test(v) && (!list || list.includes(v)), `id ${v}`);
  assert.ok(isInt(layer, 0, 63) && isInt(head, 0, 255));
  if (model.kind === 'random') {
    if (config.num_hidden_layers) assert.ok(layer < config.num_hidden_layers);
    if (config.num_attention_heads) assert.ok(head < config.num_attention_heads);
  }
  assert.ok(query === null || isInt(query, 0, 8191));
  assert.ok(key === null || isInt(key, 0, 8191));
  assert.ok(tile === null || isInt(tile, 1, 8192));
  assert.ok(context === null || isInt(context, 1, 1 << 20));
  assert.ok(pad.every((p, i) => isInt(p, 0, 8191) && (i === 0 || p > pad[i - 1])), 'pad sorted, unique');
  assert.ok(['auto', 'cpu', 'gpu'].includes(backend));
  assert.ok(hide.every((h, i) => HIDE_FLAGS.includes(h) && (i === 0 || h > hide[i - 1])), 'hide sorted, unique');
  assertEdits(edits);
  assert.ok(ablate.every(([l, h], i) => isInt(l, 0, 63) && isInt(h, 0, 255) && (i === 0 || l * 256 + h > ablate[i - 1][0] * 256 + ablate[i - 1][1])), 'ablate: [layer, head] pairs, sorted, unique');
  assert.ok(ablate.every((pair) => pair.length === 2));
  if (model.kind === 'random') assert.ok(ablate.every(([l, h]) => (!config.num_hidden_layers || l < config.num_hidden_layers) && (!config.num_attention_heads || h < config.num_attention_heads)), 'ablate: heads the model has');
  assert.ok(compare === null || (typeof compare === 'string' && compare.isWellFormed() && Array.from(compare).length <= MAX_TEXT), 'compare: null or text');
  assert.ok(target === null || isInt(target, 0, 262143), `target ${target}`);
}

// edits: null, or 1–16 tables named by ids, each 1–4096 cells [row, column, value], rows and columns
// 0–63, sorted by position without repeats, values finite within ±1e6.
function assertEdits(edits) {
  if (edits === null) return;
  assert.ok(edits && typeof edits === 'object' && !Array.isArray(edits), 'edits: an object');
  const tables = Object.entries(edits);
  assert.ok(tables.length >= 1 && tables.length <= 16, `${tables.length} edited tables`);
  for (const [table, cells] of tables) {
    assert.match(table, ID);
    assert.ok(Array.isArray(cells) && cells.length >= 1 && cells.length <= 4096, `${table}: ${cells.length} cells`);
    cells.forEach((cell, n) => {
      assert.ok(Array.isArray(cell) && cell.length === 3, `${table}[${n}]`);
      const [r, c, v] = cell;
      assert.ok(isInt(r, 0, 63) && isInt(c, 0, 63) && Number.isFinite(v) && Math.abs(v) <= 1e6, `${table}[${n}] = ${JSON.stringify(cell)}`);
      if (n > 0) assert.ok(r * 64 + c > cells[n - 1][0] * 64 + cells[n - 1][1], `${table}: sorted, one cell per position`);
    });
  }
}

test('a state round-trips through its link, every field', async () => {
  const link = await encode(EVERYTHING);
  assert.match(link, /^s3\.[A-Za-z0-9_-]+$/);
  const { state, problems, embed } = await decode(`#${link}`, { known: KNOWN });
  assert.deepEqual(problems, []);
  assert.equal(embed, false);
  assert.deepEqual(state, EVERYTHING);
});

test('the pinned format-1 link still opens as it did', async () => {
  const { state, problems } = await decode(PINNED, { known: KNOWN, lang: 'en' });
  assert.deepEqual(problems, []);
  assert.deepEqual(state, { ...EVERYTHING1, ...FORMAT2_NOTHING, ...FORMAT3_BEFORE });
  assert.deepEqual(await decode(PINNED, { known: KNOWN }), await asFormat1(PINNED, { known: KNOWN }));
});

test('format 2 changed the defaults: the built-in model, the sample text; format 1 keeps its own', () => {
  assert.deepEqual(DEFAULTS.model, { kind: 'builtin' });
  assert.equal(DEFAULTS.text, null);
  assert.deepEqual(FORMAT1_DEFAULTS, format1.DEFAULTS, 'format 1 defaults are frozen as they were');
  // The landing view may change freely: every s2 link writes its view.
  const changed = Object.keys(DEFAULTS).filter((key) => key !== 'view' && JSON.stringify(DEFAULTS[key]) !== JSON.stringify(FORMAT1_DEFAULTS[key]));
  assert.deepEqual(changed.sort(), ['ablate', 'bos', 'compare', 'draw', 'edits', 'model', 'patchAgainst', 'patchTarget', 'probe', 'scores', 'scoresTau', 'target', 'temperature', 'text', 'topK', 'topP']);
  for (const [key, nothing] of Object.entries(FORMAT2_NOTHING)) assert.deepEqual(DEFAULTS[key], nothing, `${key}: a field format 2 gained later defaults to nothing, so older s2 links keep their meaning`);
});

test('format-1 links the old page wrote open exactly as they did: random model, their text', async () => {
  const old = [
    {},
    { view: 'grid' },
    { lang: 'zh', view: 'lessons', lesson: 'qk-match' },
    { model: { kind: 'builtin' }, text: 'To be, or not to be, that is the question.' },
    { text: '今天天气很好', layer: 1, head: 3, query: 2, pad: [0] },
    EVERYTHING1,
  ];
  for (const fields of old) {
    const link = await format1.encode({ ...format1.DEFAULTS, ...fields });
    assert.match(link, /^s1\./);
    for (const lang of ['en', 'zh']) {
      const now = await decode(`#${link}&embed=1`, { known: KNOWN, lang });
      assert.deepEqual(now, await asFormat1(`#${link}&embed=1`, { known: KNOWN }), `${link} (reader ${lang})`);
    }
  }
  const { state } = await decode(await format1.encode(format1.DEFAULTS));
  assert.deepEqual(state.model, { kind: 'random' });
  assert.equal(state.text, 'The cat sat on the mat because it was tired.');
  assert.equal(state.lang, 'en', 'a format-1 link without a language was English, whatever the reader');
  assert.deepEqual(reasons((await decode(await payload('{"text": null}'))).problems), ['text:invalid'], 'format 1 had no sample text');
});

test('the default state is a short link and an empty fragment is the default state in the reader\'s language', async () => {
  const link = await encode(DEFAULTS);
  assert.ok(link.length < 60, link);
  assert.deepEqual(await contents(link), { lang: 'en', view: DEFAULTS.view }, 'the language and the view are always written');
  assert.deepEqual(await decode(''), { state: validate({}).state, problems: [], embed: false });
  assert.deepEqual((await decode('#')).state, DEFAULTS);
  assert.deepEqual((await decode('', { lang: 'zh' })).state, { ...DEFAULTS, lang: 'zh' });
});

test('an s3 link opens the same in every browser; one that omits its language opens in the reader\'s', async () => {
  for (const lang of ['en', 'zh']) {
    const link = await encode({ ...DEFAULTS, lang, view: 'grid' });
    for (const reader of ['en', 'zh']) assert.equal((await decode(link, { lang: reader })).state.lang, lang);
  }
  for (const version of [2, 3]) {
    const bare = await payload('{"view": "grid"}', version);
    assert.equal((await decode(bare, { lang: 'zh' })).state.lang, 'zh');
    assert.deepEqual((await decode(bare)).state, { ...OPENS[version], view: 'grid' });
    assert.equal((await decode(await payload('{}', version))).state.view, DEFAULTS.view, 'a link without a view opens the landing view');
  }
});

test('plain links name no model: they open the built-in model with the sample text, in the reader\'s language', async () => {
  const known = { ...KNOWN, views: [...KNOWN.views, 'lessons'], lessons: ['qk', 'causal-mask'] };
  for (const [hash, fields] of [
    ['#view=grid', { view: 'grid' }],
    ['#lang=zh', { lang: 'zh' }],
    ['#view=lessons&lesson=qk', { view: 'lessons', lesson: 'qk' }],
  ]) {
    const { state, problems } = await decode(hash, { known });
    assert.deepEqual(problems, [], hash);
    assert.deepEqual(state, { ...DEFAULTS, ...fields }, hash);
    assert.deepEqual(state.model, { kind: 'builtin' });
    assert.equal(state.text, null, 'the sample sentence in the link\'s language');
  }
  assert.equal((await decode('#view=grid', { lang: 'zh' })).state.lang, 'zh', 'a Chinese reader');
  assert.equal((await decode('#view=grid&lang=en', { lang: 'zh' })).state.lang, 'en', 'unless the link says otherwise');
});

test('a plain model field names the model', async () => {
  assert.deepEqual((await decode('#model=random&view=grid')).state, { ...DEFAULTS, model: { kind: 'random' }, view: 'grid' });
  assert.deepEqual((await decode('#model=builtin', { base: { ...DEFAULTS, model: { kind: 'random' } } })).state.model, { kind: 'builtin' });
  for (const bad of ['nonsense', 'url', '', '__proto__']) {
    const { state, problems } = await decode(`#model=${bad}`);
    assert.deepEqual(state.model, DEFAULTS.model, bad);
    assert.deepEqual(reasons(problems), ['model:invalid'], bad);
  }
});

test('the reader\'s language: the first of navigator.languages the page has', () => {
  for (const [languages, lang] of [
    [['zh-CN'], 'zh'],
    [['zh-TW', 'en'], 'zh'],
    [['ZH'], 'zh'],
    [['fr-FR', 'zh-CN', 'en'], 'zh'],
    [['en-US', 'zh-CN'], 'en'],
    [['de'], 'en'],
    [[], 'en'],
    [undefined, 'en'],
  ]) {
    assert.equal(readerLanguage(languages), lang, JSON.stringify(languages));
  }
});

test('text null is the first sample sentence in the state\'s language; without samples, format 1\'s sentence', () => {
  const samples = { en: ['One.', 'Two.'], zh: ['一。', '二。'] };
  assert.equal(textOf({ text: null, lang: 'zh' }, samples), '一。');
  assert.equal(textOf({ text: null, lang: 'en' }, samples), 'One.');
  assert.equal(textOf({ text: 'Mine.', lang: 'zh' }, samples), 'Mine.');
  assert.equal(textOf({ text: null, lang: 'zh' }, { en: ['One.'], zh: [] }), FORMAT1_DEFAULTS.text);
  assert.equal(textOf({ text: null, lang: 'en' }, null), FORMAT1_DEFAULTS.text);
});

test('the embed flag and plain fields ride along with the payload', async () => {
  const link = await fragment(EVERYTHING, { embed: true });
  assert.match(link, /&embed=1$/);
  const { state, embed } = await decode(`${link}&view=grid&hide=input,toolbar`, { known: KNOWN });
  assert.equal(embed, true);
  assert.equal(state.view, 'grid');
  assert.deepEqual(state.hide, ['input', 'toolbar']);
});

test('an embed can hide its explanations (“prose”, format 3); a format-1 or -2 link did not know that flag', async () => {
  const now = await decode(await encode({ ...DEFAULTS, hide: ['prose', 'input'] }));
  assert.deepEqual([now.state.hide, now.problems], [['input', 'prose'], []]);
  for (const version of [1, 2]) {
    const { state, problems } = await decode(await payload('{"hide": ["input", "prose"]}', version));
    assert.deepEqual(state.hide, ['input'], `format ${version}`);
    assert.deepEqual(reasons(problems), ['hide:clamped'], `format ${version}`);
  }
});

test('an embed’s link may fix its theme; another value is said and ignored', async () => {
  const link = await fragment(DEFAULTS, { embed: true, theme: 'dark' });
  assert.match(link, /&embed=1&theme=dark$/);
  const opened = await decode(link);
  assert.deepEqual([opened.embed, opened.theme, opened.problems], [true, 'dark', []]);
  assert.equal((await fragment(DEFAULTS, { theme: 'dark' })).includes('theme'), false, 'only an embed fixes it');
  const odd = await decode(`${await fragment(DEFAULTS, { embed: true })}&theme=purple`);
  assert.deepEqual([odd.theme, reasons(odd.problems)], [undefined, ['theme:invalid']]);
});

test('a Hub repo id is read from a repo’s address pasted from the browser', () => {
  assert.equal(hubRepoOf('jingyaogong/MiniMind2-Small'), 'jingyaogong/MiniMind2-Small');
  assert.equal(hubRepoOf(' https://huggingface.co/jingyaogong/MiniMind2-Small '), 'jingyaogong/MiniMind2-Small');
  assert.equal(hubRepoOf('https://huggingface.co/jingyaogong/MiniMind2-Small/tree/main/x'), 'jingyaogong/MiniMind2-Small');
  assert.equal(hubRepoOf('huggingface.co/a/b?x=1'), 'a/b');
  assert.equal(hubRepoOf('https://example.com/a/b'), 'https://example.com/a/b', 'another site stays as typed, to be refused');
});

test('plain fields alone change the base state, as a tab link does', async () => {
  const base = (await decode(await encode(EVERYTHING))).state;
  const { state, problems } = await decode('#view=masks&layer=1', { base, known: KNOWN });
  assert.deepEqual(problems, []);
  assert.deepEqual(state, { ...EVERYTHING, view: 'masks', layer: 1 });
  assert.deepEqual((await decode('view=masks')).state, { ...DEFAULTS, view: 'masks' }, 'on a fresh page the base is the defaults');
  // The scale view's own row, written by hand: the commas are the row's, the divisor a number.
  const scale = await decode('#view=scale&scores=1,2,3&scoresTau=2');
  assert.deepEqual(scale.problems, []);
  assert.deepEqual([scale.state.scores, scale.state.scoresTau], ['1,2,3', 2]);
  assert.deepEqual(reasons((await decode('#scoresTau=1000')).problems), ['scoresTau:clamped']);
  // The Pipeline tab's name opens the pipeline stepper, as its id does; nothing is said to be wrong.
  const pipeline = await decode('#view=pipeline', { known: KNOWN });
  assert.deepEqual([pipeline.state.view, pipeline.problems], ['stepper', []]);
  // So do the other tabs' labels, in either language, in any case, with spaces or hyphens; and a
  // language as a browser writes it.
  for (const [written, view] of [['Pipeline', 'stepper'], ['Attention%20map', 'attention'], ['Head%20grid', 'grid'], ['head-grid', 'grid'], ['ATTENTION', 'attention'], ['Masks', 'masks'], [encodeURIComponent('注意力图'), 'attention'], [encodeURIComponent('主流程'), 'stepper']]) {
    const opened = await decode(`#view=${written}`, { known: KNOWN });
    assert.deepEqual([opened.state.view, opened.problems], [view, []], written);
  }
  for (const [written, lang] of [['zh-CN', 'zh'], ['ZH', 'zh'], ['zh-Hans', 'zh'], ['en-US', 'en']]) {
    const opened = await decode(`#view=grid&lang=${written}`, { known: KNOWN });
    assert.deepEqual([opened.state.lang, opened.problems], [lang, []], written);
  }
  const unknown = await decode('#view=nowhere', { known: KNOWN });
  assert.deepEqual(unknown.problems.map((p) => p.field), ['view']);
  assert.equal((await decode('#lang=fr', { known: KNOWN })).problems[0].field, 'lang');
});

test('a plain field with a broken percent-escape opens as far as it reads; the other fields open as written', async () => {
  // "%ZZ" is no escape, and %ED%A0%80 is a lone surrogate's bytes, which are not UTF-8.
  const { state, problems } = await decode('#view=grid&text=%E4%BD%A0%ZZ%20ab%ED%A0%80cd&layer=1');
  assert.equal(state.view, 'grid');
  assert.equal(state.layer, 1);
  assert.equal(state.text, '你%ZZ ab\ufffd\ufffd\ufffdcd');
  assert.deepEqual(reasons(problems), ['text:repaired']);
  // A broken key still says the link is damaged.
  assert.deepEqual(reasons((await decode('#vi%ZZew=grid')).problems), ['damaged']);
});

test('a layer, head or target token cut into range keeps the number the link asked for', async () => {
  const { state, problems } = await decode('#model=random&layer=99&head=-4&target=99999999999');
  assert.deepEqual([state.layer, state.head], [DEFAULTS.config.num_hidden_layers - 1, 0]);
  assert.ok(problems.some((p) => p.field === 'layer' && p.reason === 'clamped' && p.asked === 99));
  assert.ok(problems.some((p) => p.field === 'head' && p.reason === 'clamped' && p.asked === -4));
  // The page says the target as typed, not as cut to the largest vocabulary a link can name.
  assert.ok(problems.some((p) => p.field === 'target' && p.reason === 'clamped' && p.asked === 99999999999));
  assert.ok(problems.every((p) => p.asked === undefined || ['layer', 'head', 'target'].includes(p.field)));
  // A number only rounded (1.4 is layer 1) is adjusted, not blamed on the model's size.
  const rounded = await decode('#model=random&layer=1.4');
  assert.equal(rounded.state.layer, 1);
  assert.deepEqual(rounded.problems.map((p) => [p.field, p.reason, p.asked]), [['layer', 'clamped', undefined]]);
});

test('a truncated link opens with its format\'s defaults and says it is damaged', async () => {
  for (const [link, defaults] of [[await encode(EVERYTHING), OPENS[3]], [PINNED, OPENS[1]], [await payload(JSON.stringify(EVERYTHING2), 2), OPENS[2]]]) {
    for (const cut of [4, 20, link.length - 3, link.length - 1]) {
      const { state, problems } = await decode(link.slice(0, cut));
      assert.deepEqual(reasons(problems), ['damaged'], `cut at ${cut}`);
      assert.deepEqual(state, defaults);
    }
  }
});

test('on a live page a whole link too damaged to read keeps the page’s state (format 1 as it always did)', async () => {
  const base = { ...DEFAULTS, text: 'My careful sentence about cats', view: 'grid', layer: 1 };
  const cut = (await encode(EVERYTHING)).slice(0, 20);
  const live = await decode(`#${cut}`, { base });
  assert.deepEqual(reasons(live.problems), ['damaged']);
  assert.deepEqual(live.state, base, 'the reader’s sentence and settings stay');
  assert.equal(live.keptBase, true, 'and decode says so');
  // A cut format-2 link too: the page's fields stay, those format 2 had no field for as well.
  const cut2 = (await payload(JSON.stringify(EVERYTHING2), 2)).slice(0, 20);
  const sampled = { ...base, bos: false, temperature: 0.5 };
  assert.deepEqual((await decode(`#${cut2}`, { base: sampled })).state, sampled);
  // A link read whole, with something else damaged beside it, replaced the state: not kept.
  assert.equal((await decode(`#${await encode(EVERYTHING)}&%ZZ=1`, { base })).keptBase, undefined);
  // Plain fields beside it still change what they write out.
  assert.equal((await decode(`#view=masks&${cut}`, { base })).state.view, 'masks');
  assert.equal((await decode(`#view=masks&${cut}`, { base })).state.text, base.text);
  // A link read whole replaces the state, as ever; one from a future version opens the defaults.
  assert.deepEqual((await decode(`#${await encode(EVERYTHING)}`, { base })).state.text, EVERYTHING.text);
  assert.deepEqual((await decode('#s9.abc', { base })).state, DEFAULTS);
  assert.deepEqual((await decode(`#${PINNED.slice(0, 20)}`, { base })).state, OPENS[1]);
});

test('a link from a future version opens with the defaults and names the version', async () => {
  const link = (await encode(EVERYTHING)).replace(/^s3\./, 's7.');
  const { state, problems } = await decode(link);
  assert.deepEqual(problems, [{ field: null, reason: 'future', version: 7 }]);
  assert.deepEqual(state, DEFAULTS);
});

test('a link that is not base64url, not deflate or not a JSON object is damaged', async () => {
  for (const version of [1, 2, 3]) {
    const defaults = OPENS[version];
    const s = `s${version}.`;
    for (const bad of [s, `${s}!!!!`, `${s}a`, `${s}AAAA`, await payload('[1, 2]', version), await payload('"text"', version), await payload('{"view": ', version), `${s}x&${s}y`]) {
      const { state, problems } = await decode(bad);
      assert.ok(reasons(problems).includes('damaged'), `${bad}: ${reasons(problems)}`);
      assert.deepEqual(state, defaults, bad);
    }
  }
  assert.deepEqual(await decode('s0.abc'), { state: DEFAULTS, problems: [{ field: null, reason: 'damaged' }], embed: false });
});

test('an oversized fragment and a decompression bomb are refused without reading them', async () => {
  assert.deepEqual(reasons((await decode(`s1.${'A'.repeat(40_000)}`)).problems), ['too-long']);
  for (const version of [1, 2, 3]) {
    const bomb = await payload(`{"text": "${'a'.repeat(200_000)}"}`, version);
    assert.ok(bomb.length < 1000, 'a bomb is a short link');
    const { state, problems } = await decode(bomb);
    assert.deepEqual(reasons(problems), ['damaged']);
    assert.deepEqual(state, OPENS[version]);
  }
});

test('a hand-edited field that is out of range is clamped; one of the wrong type falls back', async () => {
  const edited = await payload(
    JSON.stringify({ layer: 99, head: -4, seed: 1.5, config: { hidden_size: 1e9, rope_theta: 'big', evil: 1 }, view: 'nope', lang: 'fr', text: 'x'.repeat(MAX_TEXT + 5), query: 1e6, pad: [3, 3, -1, 'x', 2], hide: ['tabs', 'everything'], extra: true }),
  );
  const { state, problems } = await decode(edited, { known: KNOWN });
  assertValid(state, KNOWN);
  assert.equal(state.layer, 63, "clamped to the core's limit: this config names no layer count");
  assert.equal(state.head, 0);
  assert.equal(state.seed, 2);
  assert.equal(state.config.hidden_size, 8192);
  assert.equal(state.config.rope_theta, DEFAULTS.config.rope_theta);
  assert.equal(state.view, FORMAT1_DEFAULTS.view, 'a format-1 link falls back to format 1\'s defaults');
  assert.equal(state.lang, 'en');
  assert.equal(Array.from(state.text).length, MAX_TEXT);
  assert.equal(state.query, 8191);
  assert.deepEqual(state.pad, [2, 3]);
  assert.deepEqual(state.hide, ['tabs']);
  assert.deepEqual(
    reasons(problems).sort(),
    ['config.evil:unknown', 'config.hidden_size:clamped', 'config.rope_theta:invalid', 'extra:unknown', 'head:clamped', 'hide:clamped', 'lang:invalid', 'layer:clamped', 'pad:clamped', 'query:clamped', 'seed:clamped', 'text:clamped', 'view:invalid'].sort(),
  );
});

test('hostile values are refused: script URLs, prototype keys, markup in ids', async () => {
  const hostile = await payload(
    '{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 1}}, "model": {"kind": "url", "url": "javascript:alert(1)"}, "lesson": "<img src=x onerror=alert(1)>", "view": "\\"><script>alert(1)</script>", "step": "__proto__", "config": {"__proto__": {"x": 1}}}',
  );
  const { state, problems } = await decode(hostile);
  assertValid(state);
  assert.deepEqual(state, { ...OPENS[1], config: {} }, 'a config names its keys; none of these is one');
  assert.equal({}.polluted, undefined);
  assert.equal(Object.prototype.x, undefined);
  assert.ok(reasons(problems).includes('model:invalid'));
  for (const url of ['data:text/html,<script>alert(1)</script>', 'file:///etc/passwd', ' javascript:alert(1)', 'JAVASCRIPT:alert(1)', 'vbscript:x']) {
    assert.equal(validate({ model: { kind: 'url', url } }).state.model.kind, DEFAULTS.model.kind, url);
  }
  for (const url of ['https://example.org/model/', 'models/builtin/', '/m/config.json']) assert.equal(validate({ model: { kind: 'url', url } }).state.model.url, url);
});

test('BOS: on by default and written only when off; links made before format 3 open without it', async () => {
  assert.equal(DEFAULTS.bos, true);
  assert.equal('bos' in (await contents(await encode(DEFAULTS))), false, 'on is the default: not written');
  const off = await encode({ ...DEFAULTS, bos: false });
  assert.match(off, /^s3\./);
  assert.equal((await contents(off)).bos, false);
  assert.equal((await decode(off)).state.bos, false);
  assert.equal((await decode('#bos=0')).state.bos, false, 'a plain field turns it off');
  assert.equal((await decode('#bos=1', { base: OPENS[2] })).state.bos, true, 'and on');
  assert.equal((await decode('#view=grid')).state.bos, true, 'plain links open format 3\'s defaults');
  // Every s2 link the page wrote lacks the field, whatever else it holds, and means no BOS.
  for (const fields of [{}, { view: 'grid', lang: 'zh' }, EVERYTHING2]) {
    const { state, problems } = await decode(await payload(JSON.stringify(fields), 2), { known: KNOWN });
    assert.deepEqual(problems, []);
    assert.equal(state.bos, false, JSON.stringify(fields));
  }
  const s2 = await decode(await payload('{"bos": true}', 2));
  assert.deepEqual([s2.state.bos, reasons(s2.problems)], [false, ['bos:unknown']], 'format 2 had no such field');
  const s1 = await decode('#s1.q64FAA&bos=1');
  assert.deepEqual(s1, await asFormat1('#s1.q64FAA&bos=1'), 'a format-1 link with the plain field opens as the format-1 decoder opened it');
  assert.deepEqual([s1.state.bos, reasons(s1.problems)], [false, ['bos:unknown']]);
});

test('a lesson\'s edited cells round-trip; an older s2 link without them opens with none', async () => {
  const { state, problems } = await decode(await encode({ ...DEFAULTS, view: 'lessons', lesson: 'qk', edits: { 'qk.q': [[2, 0, 0.1]] } }));
  assert.deepEqual(problems, []);
  assert.deepEqual(state.edits, { 'qk.q': [[2, 0, 0.1]] });
  const older = await payload('{"lang": "zh", "view": "lessons", "lesson": "qk"}', 2);
  assert.deepEqual(await decode(older), { state: { ...OPENS[2], lang: 'zh', view: 'lessons', lesson: 'qk' }, problems: [], embed: false });
  assert.deepEqual(await contents(await encode({ ...DEFAULTS, lesson: 'qk' })), { lang: 'en', view: DEFAULTS.view, lesson: 'qk' }, 'no edits, nothing written');
  const old = await decode(await payload('{"edits": {"qk.q": [[0, 0, 1]]}}', 1));
  assert.deepEqual(reasons(old.problems), ['edits:unknown'], 'format 1 had no edits');
  assert.equal(old.state.edits, null);
});

test('the interventions round-trip: knocked-out heads, the second sentence, the target token', async () => {
  const plain = await decode('#view=ablate&ablate=2.3,0.1&compare=She%20sat.&target=77');
  assert.deepEqual(plain.problems, []);
  assert.deepEqual([plain.state.ablate, plain.state.compare, plain.state.target], [[[0, 1], [2, 3]], 'She sat.', 77], 'sorted');
  const { state, problems } = await decode(await encode(plain.state));
  assert.deepEqual(problems, []);
  assert.deepEqual(state, plain.state);
  assert.deepEqual(await contents(await encode({ ...DEFAULTS, ablate: [[1, 0]] })), { lang: 'en', view: DEFAULTS.view, ablate: [[1, 0]] });
  const bad = await decode('#ablate=0.1,x,3,1.2.3,64.0,0.256');
  assert.deepEqual(bad.state.ablate, [[0, 1]], 'what is not layer.head within the limits is dropped');
  assert.deepEqual(reasons(bad.problems), ['ablate:clamped']);
  const random = await decode('#model=random&ablate=0.1,1.3,2.0,0.4');
  assert.deepEqual(random.state.ablate, [[0, 1], [1, 3]], "a random model's own sizes (2 layers, 4 heads) bound the heads");
  const old = await decode('#s1.q64FAA&ablate=0.1&target=3');
  assert.deepEqual([old.state.ablate, old.state.target], [[], null], 'format 1 had no interventions');
  assert.deepEqual(reasons(old.problems), ['ablate:unknown', 'target:unknown']);
});

test('hostile edits are cut to size or refused: huge lists, NaN, wrong shapes, bad ids', async () => {
  const open = async (edits) => decode(await payload(JSON.stringify({ edits }), 2));
  for (const bad of ['cells', [[0, 0, 1]], 5, true]) {
    const { state, problems } = await open(bad);
    assert.equal(state.edits, null, JSON.stringify(bad));
    assert.deepEqual(reasons(problems), ['edits:invalid'], JSON.stringify(bad));
  }
  const huge = Array.from({ length: 5000 }, (_, n) => [n % 64, Math.floor(n / 64) % 64, n]);
  const { state, problems } = await open({
    'qk.q': [[1, 1, 2], [0, 3, 1e300], [0, 3, 7], [64, 0, 1], [-1, 0, 1], [0.5, 0, 1], [0, 0, null], [0, 0, 'NaN'], [0, 0], [0, 0, 1, 1], 'x', [2, 1, -3]],
    'qk.k': huge,
    'qk.v': 'not cells',
    '__proto__': [[0, 0, 1]],
    '<b>': [[0, 0, 1]],
    'qk.empty': [],
  });
  assertValid(state);
  assert.deepEqual(state.edits, { 'qk.q': [[0, 3, 7], [1, 1, 2], [2, 1, -3]] }, 'repeats: the last wins; out of range and non-numbers dropped; big values cut');
  assert.deepEqual(reasons(problems), ['edits:clamped']);
  assert.deepEqual((await open({ 'qk.q': [[0, 0, 1e300]] })).state.edits, { 'qk.q': [[0, 0, 1e6]] });
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, n) => [`t${n}`, [[0, 0, n]]]));
  assert.equal(Object.keys((await open(many)).state.edits).length, 16);
  const { problems: none } = await decode(await encode(state));
  assert.deepEqual(none, [], 'what was kept is a valid state: its own link opens without complaint');
});

test('text stays text: markup, unpaired surrogates and astral characters survive as characters', async () => {
  const text = '<script>alert(1)</script> \ud800 😀 注意力';
  const { state } = await decode(await encode({ ...DEFAULTS, text }));
  assert.equal(state.text, '<script>alert(1)</script> \ufffd 😀 注意力');
  const long = '😀'.repeat(MAX_TEXT + 1);
  assert.equal(validate({ text: long }).state.text, '😀'.repeat(MAX_TEXT), 'cut between characters, never inside one');
});

test('the page clamps to the loaded model and to the tokens it has', () => {
  assert.deepEqual(fitToModel({ layer: 5, head: 7, ablate: [] }, { num_hidden_layers: 2, num_attention_heads: 4 }), { layer: 1, head: 3, ablate: [], target: null, patchTarget: null, patchAgainst: null });
  const target = (t) => fitToModel({ layer: 0, head: 0, target: t }, { num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 6400 }).target;
  assert.deepEqual([target(6399), target(6400), target(262143), target(null)], [6399, null, null, null], 'a target past the vocabulary goes back to the top-1 token');
  const fitted = fitToModel({ layer: 0, head: 0, patchTarget: 6400, patchAgainst: 6399 }, { num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 6400 });
  assert.deepEqual([fitted.patchTarget, fitted.patchAgainst], [null, 6399], 'so do the patching view’s tokens');
  assert.deepEqual(fitToModel({ layer: 0, head: 0, ablate: [[0, 3], [0, 4], [1, 2], [2, 0]] }, { num_hidden_layers: 2, num_attention_heads: 4 }).ablate, [[0, 3], [1, 2]], 'heads the model lacks are no longer knocked out');
  assert.deepEqual(fitToTokens({ pad: [0, 3, 9], query: 9, key: 3 }, 4), { pad: [0, 3], query: null, key: 3 });
  assert.deepEqual(fitToTokens({ pad: [1], query: 2, key: null }, 4), { pad: [1], query: 2, key: null });
});

// --- fuzzing ---

function mulberry32(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20240611);
// 25,000 cases under ./build.sh test (about 20 s on a 2-core machine); FUZZ_CASES=1000000 for a long run.
const FUZZ_CASES = Number(process.env.FUZZ_CASES ?? 25_000);

function fuzzer(random) {
  const int = (n) => Math.floor(random() * n);
  const pick = (list) => list[int(list.length)];
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const NASTY = ['<script>window.__xss=1</script>', '"><img src=x onerror=alert(1)>', 'javascript:alert(1)', '__proto__', 'constructor', '%', '%zz', '&', '=', '#', '\u0000', '\ud800', '😀', '注意力', ''];
  const FIELD_NAMES = [...Object.keys(DEFAULTS), 'embed', '__proto__', 'constructor', 'v', 'x'];
  const CONFIG_NAMES = [...Object.keys(CONFIG_LIMITS), ...CONFIG_FLAGS, '__proto__', 'y'];
  const chars = (alphabet, n) => Array.from({ length: n }, () => alphabet[int(alphabet.length)]).join('');
  const unicode = (n) => Array.from({ length: n }, () => String.fromCharCode(int(random() < 0.8 ? 128 : 0x10000))).join('');
  const number = () => pick([0, -0, 1, -1, 2, 7, 63, 64, 255, 256, 8191, 8192, 1e6, 1e21, -1e21, 0.5, 1.0001, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 1e308, 5e-324, int(100), random() * 1000 - 500]);
  function value(depth = 0) {
    switch (int(depth > 2 ? 5 : 8)) {
      case 0: return number();
      case 1: return pick(NASTY) + (random() < 0.3 ? unicode(int(10)) : '');
      case 2: return random() < 0.5;
      case 3: return null;
      case 4: return pick([...HIDE_FLAGS, ...KNOWN.views, ...KNOWN.steps, 'en', 'zh', 'cpu', 'gpu', 'auto', 'random', 'url', 'files', 'builtin']);
      case 5: return Array.from({ length: int(6) }, () => value(depth + 1));
      case 6: return object(depth + 1, FIELD_NAMES);
      default: return random() < 0.5 ? { kind: pick(MODEL_KINDS), url: pick(['https://a.b/', 'x/y', 'javascript:1', value(depth + 1)]) } : object(depth + 1, CONFIG_NAMES);
    }
  }
  function object(depth, names) {
    const o = {};
    // defineProperty, so that "__proto__" becomes an own key, as JSON.parse makes it.
    for (let i = int(6); i > 0; i--) Object.defineProperty(o, pick(names), { value: value(depth), enumerable: true, writable: true, configurable: true });
    return o;
  }
  // Edited cells, some of them wrong: bad ids, indexes out of range, non-numbers, repeats, long lists.
  function edits() {
    const o = {};
    for (let i = int(4); i >= 0; i--) {
      const cells = Array.from({ length: random() < 0.05 ? 5000 : int(6) }, () => (random() < 0.8 ? [int(70) - 3, int(70) - 3, random() < 0.8 ? random() * 10 - 5 : value(2)] : value(2)));
      Object.defineProperty(o, pick(['qk.q', 'causal.scores', 'x', '__proto__', '', 'a b', pick(NASTY)]), { value: random() < 0.9 ? cells : value(2), enumerable: true, writable: true, configurable: true });
    }
    return o;
  }
  // A plausible state: mostly valid fields, some wild ones.
  function payloadObject() {
    const o = {};
    for (const key of Object.keys(DEFAULTS)) {
      const r = random();
      if (r < 0.35) continue;
      o[key] = r < 0.75 ? structuredClone(EVERYTHING[key]) : key === 'config' && r < 0.9 ? object(1, CONFIG_NAMES) : key === 'edits' && r < 0.9 ? edits() : value();
    }
    if (random() < 0.1) o[pick(FIELD_NAMES)] = value();
    return random() < 0.05 ? value() : o;
  }
  const text = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
  // Mostly escaped as a browser would, sometimes raw (a hand-typed or pasted fragment).
  const escape = (s) => (random() < 0.8 ? encodeURIComponent(s.toWellFormed()) : s);
  function mutate(link) {
    let s = link;
    for (let n = 1 + int(3); n > 0; n--) {
      const at = int(s.length + 1);
      switch (int(8)) {
        case 0: s = s.slice(0, at) + chars(B64, 1) + s.slice(at + 1); break;
        case 1: s = s.slice(0, at) + s.slice(at + 1 + int(8)); break;
        case 2: s = s.slice(0, at) + chars(B64 + '.&=%#', 1 + int(6)) + s.slice(at); break;
        case 3: s = s.slice(0, at); break;
        case 4: s = s.replace(/^s\d+/, `s${pick([0, 1, 2, 10, 999999, '01'])}`); break;
        case 5: s += `&${pick(FIELD_NAMES)}=${escape(text(value()))}`; break;
        case 6: s = s.slice(0, at) + s.slice(int(s.length)) + s.slice(at); break;
        default: s += pick(['&embed=1', '&embed', '&', '&&', '&embed=0', '&s1.AAAA', '&%', `&${pick(NASTY)}`]);
      }
    }
    return s;
  }
  function plain() {
    return Array.from({ length: 1 + int(5) }, () => `${pick(FIELD_NAMES)}=${escape(random() < 0.5 ? text(value()) : pick(NASTY))}`).join('&');
  }
  return { int, pick, chars, unicode, payloadObject, mutate, plain, B64 };
}

function withinTime(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`decode hung (> ${ms} ms) on ${JSON.stringify(what).slice(0, 300)}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

test(`fuzz: ${FUZZ_CASES} random and mutated links never crash, never hang, always give a valid state`, { timeout: 900_000 }, async () => {
  const random = mulberry32(FUZZ_SEED);
  const f = fuzzer(random);
  const seeds = [];
  for (let i = 0; i < 60; i++) seeds.push(await payload(JSON.stringify(f.payloadObject()), 1 + (i % 3)));
  seeds.push(await encode(EVERYTHING), PINNED, await format1.encode(EVERYTHING1));
  const kinds = { random: 0, mutated: 0, payload: 0, plain: 0, format1: 0 };
  const started = Date.now();
  for (let i = 0; i < FUZZ_CASES; i++) {
    let input;
    const r = random();
    if (r < 0.2) {
      kinds.random++;
      input = f.pick(['', '#', 's1.', 's2.', 's3.', 's', 'view=', '&', 'embed=1&']) + (random() < 0.5 ? f.chars(f.B64 + '.&=%#+/', f.int(200)) : f.unicode(f.int(60)));
    } else if (r < 0.6) {
      kinds.mutated++;
      input = f.mutate(f.pick(seeds));
    } else if (r < 0.85) {
      kinds.payload++;
      input = await payload(JSON.stringify(f.payloadObject()), f.pick([1, 2, 3]));
      if (random() < 0.3) seeds[f.int(seeds.length)] = input;
    } else {
      kinds.plain++;
      input = f.plain();
    }
    const known = random() < 0.5 ? KNOWN : {};
    const base = random() < 0.2 ? (await decode(f.pick(seeds), { known })).state : undefined;
    const lang = f.pick(['en', 'zh', undefined]); // the reader's
    let result;
    try {
      result = await withinTime(decode(input, { base, known, lang }), 5000, input);
      assertValid(result.state, known);
      assert.equal(typeof result.embed, 'boolean');
      assert.ok(Array.isArray(result.problems) && result.problems.every((p) => typeof p.reason === 'string'));
      // A format-1 link opens exactly as the format-1 decoder opens it (plain "model=" and "probe="
      // fields were unknown to format 1; an oversized fragment is refused before its format is read).
      if (versionOf(input) === 1 && !namesLaterPlainField(input) && !reasons(result.problems).includes('too-long')) {
        kinds.format1++;
        // (The number a clamped layer, head or target asked for is said now; format 1 did not keep it.)
        const said = { ...result, problems: result.problems.map(({ asked, ...problem }) => problem) };
        assert.deepEqual(said, await asFormat1(input, { base, known }), 'as format 1 opened it');
      }
      // A valid state is a fixed point: its own link opens it exactly, without complaint, for any reader.
      if (i % 25 === 0) {
        const again = await decode(await encode(result.state), { known, lang: f.pick(['en', 'zh']) });
        assert.deepEqual(again.problems, []);
        assert.deepEqual(again.state, result.state);
      }
    } catch (err) {
      err.message = `case ${i} (FUZZ_SEED=${FUZZ_SEED}), input ${JSON.stringify(input).slice(0, 400)}: ${err.message}`;
      throw err;
    }
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(`fuzzed ${FUZZ_CASES} links in ${seconds.toFixed(1)} s: ${JSON.stringify(kinds)}`);
  const { format1: checked, ...made } = kinds;
  assert.equal(Object.values(made).reduce((a, b) => a + b), FUZZ_CASES);
  assert.ok(checked > FUZZ_CASES / 10, `${checked} format-1 links held to the format-1 decoder`);
});

test('a Hugging Face Hub repo id round-trips in a link; anything that is not "owner/name" is refused; older links decode as before', async () => {
  for (const repo of ['jingyaogong/MiniMind2-Small', 'jingyaogong/MiniMind2', 'a/b', 'Org_1/model.v2-final']) {
    const { state, problems } = await decode(await encode({ ...DEFAULTS, model: { kind: 'hub', repo } }));
    assert.deepEqual(problems, [], repo);
    assert.deepEqual(state.model, { kind: 'hub', repo });
  }
  const hostile = ['', 'MiniMind2', 'a/b/c', '../etc/passwd', 'a/..', 'a/../b', '/a/b', 'a/b/', 'https://evil.example/a', 'a/b?x=1', 'a/b#x', '-a/b', 'a/.b', 'a b/c', `${'a'.repeat(97)}/b`, 42, null];
  for (const repo of hostile) {
    const { state, problems } = validate({ model: { kind: 'hub', repo } });
    assert.deepEqual(state.model, DEFAULTS.model, String(repo));
    assert.deepEqual(problems, [{ field: 'model', reason: 'invalid' }], String(repo));
  }
  assert.deepEqual(validate({ model: { kind: 'hub' } }).state.model, DEFAULTS.model, 'a Hub model names its repo');
  // A format-1 link had no Hub: one that says "hub" opens as the format-1 decoder opened it.
  const old = await payload('{"model": {"kind": "hub", "repo": "a/b"}}', 1);
  assert.deepEqual(await decode(old), await asFormat1(old));
  assert.equal((await decode(old)).state.model.kind, FORMAT1_DEFAULTS.model.kind);
  // Links written before the Hub existed decode as they did.
  for (const model of [{ kind: 'url', url: 'https://example.org/m/' }, { kind: 'files' }, { kind: 'random' }, { kind: 'builtin' }]) {
    assert.deepEqual((await decode(await encode({ ...DEFAULTS, model }))).state.model, model);
  }
  assert.ok(MODEL_KINDS.includes('hub'));
});

test('SmolLM2 and one GGUF file of a Hub repo round-trip in a link; a file that is not a .gguf path in the repo is refused; format 1 knew neither', async () => {
  assert.deepEqual((await decode('#model=smollm2')).state.model, { kind: 'smollm2' }, 'the plain field');
  for (const model of [{ kind: 'smollm2' }, { kind: 'hub', repo: 'bartowski/SmolLM2-135M-Instruct-GGUF', file: 'SmolLM2-135M-Instruct-Q4_K_M.gguf' }, { kind: 'hub', repo: 'a/b', file: 'Q8_0/model.Q8_0.GGUF' }]) {
    const { state, problems } = await decode(await encode({ ...DEFAULTS, model }));
    assert.deepEqual(problems, [], JSON.stringify(model));
    assert.deepEqual(state.model, model);
  }
  for (const file of ['', 'model.bin', 'model.safetensors', '../x.gguf', 'a/../b.gguf', '/abs.gguf', 'a//b.gguf', '.hidden.gguf', 'a b.gguf', 'x.gguf?y=1', 'x.gguf#y', 'https://evil.example/x.gguf', `${'a'.repeat(200)}.gguf`, 'a/b/c/d/e/f.gguf', 42, null]) {
    const { state, problems } = validate({ model: { kind: 'hub', repo: 'a/b', file } });
    assert.deepEqual(state.model, DEFAULTS.model, String(file));
    assert.deepEqual(problems, [{ field: 'model', reason: 'invalid' }], String(file));
  }
  for (const model of ['{"kind": "smollm2"}', '{"kind": "hub", "repo": "a/b", "file": "m.gguf"}']) {
    const old = await payload(`{"model": ${model}}`, 1);
    assert.deepEqual(await decode(old), await asFormat1(old), model);
  }
  assert.ok(MODEL_KINDS.includes('smollm2'));
});

test('the Hub field reads owner/name, owner/name:file.gguf and a file page’s address as the model they name', () => {
  assert.deepEqual(hubModelOf(' a/b '), { kind: 'hub', repo: 'a/b' });
  assert.deepEqual(hubModelOf('a/b:m.Q4_K_M.gguf'), { kind: 'hub', repo: 'a/b', file: 'm.Q4_K_M.gguf' });
  assert.deepEqual(hubModelOf('a/b : dir/m.gguf'), { kind: 'hub', repo: 'a/b', file: 'dir/m.gguf' });
  assert.deepEqual(hubModelOf('https://huggingface.co/a/b/blob/main/dir/m.gguf'), { kind: 'hub', repo: 'a/b', file: 'dir/m.gguf' });
  assert.deepEqual(hubModelOf('https://huggingface.co/a/b/resolve/main/m.gguf?download=true'), { kind: 'hub', repo: 'a/b', file: 'm.gguf' });
  assert.deepEqual(hubModelOf('https://huggingface.co/a/b/tree/main'), { kind: 'hub', repo: 'a/b' });
  assert.deepEqual(hubModelOf('a/b:'), { kind: 'hub', repo: 'a/b', file: '' }, 'an empty file is kept, to be refused by name');
});

test('a field given twice opens as its last, and the reader is told which field', async () => {
  const { state, problems } = await decode('#view=grid&view=attention&view=masks', { known: KNOWN });
  assert.equal(state.view, 'masks');
  assert.deepEqual(problems, [{ field: 'view', reason: 'repeated' }, { field: 'view', reason: 'repeated' }]);
  const once = await decode('#view=grid', { known: KNOWN });
  assert.deepEqual(once.problems, []);
});

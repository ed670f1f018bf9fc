// The page's strings (www/strings.js, its tables in www/strings/): every English string has its
// 简体中文 twin with the same placeholders and neither is empty, so switching language never shows a
// key, a blank label or a half-English sentence; the Chinese table is fetched only when asked for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import EN from '../../www/strings/en.js';
import ZH from '../../www/strings/zh.js';
import ZH_VIEWS from '../../www/strings/zh_views.js';
import { TERMS, strayLatin } from '../../www/glossary.js';

globalThis.document ??= { documentElement: {} };
const strings = await import('../../www/strings.js');
const STRINGS = { en: EN, zh: ZH };

// The {name} placeholders t() fills, each named once, sorted.
const placeholders = (text) => [...new Set([...String(text).matchAll(/\{(\w+)\}/g)].map((m) => m[1]))].sort();

// The strings left blank on purpose, each where it is: the pipeline rail's gloss under a code name
// (none in English, where the code name reads; the view shows none then), and the words before the
// overview's "try" links (the links say it all; ' ' in English is the space before them).
const BLANK = { en: /^(step\.[a-z_]+\.gloss|overview\.tryLead)$/, zh: /^overview\.tryLead$/ };

// What keeps two tables from being each other's translation: keys in one only, placeholders that
// differ, values that are not a non-blank string (save those BLANK allows).
function tableProblems(en, zh) {
  const problems = [];
  for (const key of Object.keys(en)) if (!Object.hasOwn(zh, key)) problems.push(`missing in zh: ${key}`);
  for (const key of Object.keys(zh)) if (!Object.hasOwn(en, key)) problems.push(`only in zh: ${key}`);
  for (const [lang, table] of [['en', en], ['zh', zh]]) {
    for (const [key, text] of Object.entries(table)) if (typeof text !== 'string' || (text.trim() === '' && !BLANK[lang].test(key))) problems.push(`empty in ${lang}: ${key}`);
  }
  for (const key of Object.keys(en)) {
    if (Object.hasOwn(zh, key) && placeholders(en[key]).join() !== placeholders(zh[key]).join()) problems.push(`placeholders differ: ${key} en {${placeholders(en[key])}} zh {${placeholders(zh[key])}}`);
  }
  return problems;
}

test('both languages have the same keys, the same placeholders per key and no empty string', () => {
  assert.ok(Object.keys(EN).length > 1000, `${Object.keys(EN).length} English keys`);
  assert.deepEqual(tableProblems(EN, ZH), []);
});

test('the check fails on a key removed from either language, a placeholder changed or a blank value', () => {
  const without = (table, key) => Object.fromEntries(Object.entries(table).filter(([k]) => k !== key));
  // Only what was broken here (a problem in the tables themselves is the test above's).
  const found = new Set(tableProblems(EN, ZH));
  const tableProblemsOf = (en, zh) => tableProblems(en, zh).filter((p) => !found.has(p));
  assert.deepEqual(tableProblemsOf(EN, without(ZH, 'app.status')), ['missing in zh: app.status']);
  assert.deepEqual(tableProblemsOf(without(EN, 'view.grid'), ZH), ['only in zh: view.grid']);
  assert.deepEqual(tableProblemsOf(EN, { ...ZH, 'app.status': ZH['app.status'].replace('{ms}', '{msec}') }), ['placeholders differ: app.status en {backend,ms,tokens} zh {backend,msec,tokens}']);
  assert.deepEqual(tableProblemsOf(EN, { ...ZH, 'app.status': ZH['app.status'].replace('{ms}', '') }), ['placeholders differ: app.status en {backend,ms,tokens} zh {backend,tokens}']);
  assert.deepEqual(tableProblemsOf({ ...EN, 'app.cancel': ' ' }, { ...ZH, 'app.title': '', 'step.qkv.gloss': '' }), ['empty in en: app.cancel', 'empty in zh: app.title', 'empty in zh: step.qkv.gloss']);
  assert.deepEqual(tableProblemsOf({ ...EN, 'app.cancel': null }, ZH), ['empty in en: app.cancel']);
});

test('no key is written twice in a table (the second would silently replace the first)', async () => {
  const { readFile } = await import('node:fs/promises');
  const read = (name) => readFile(new URL(`../../www/strings/${name}`, import.meta.url), 'utf8');
  const keysOf = (source) => [...source.matchAll(/^ {2}'([^']+)':/gm)].map((m) => m[1]);
  // zh.js takes its tab labels from zh_views.js: a label written in both would be the same mistake.
  for (const [table, keys] of [['en', keysOf(await read('en.js'))], ['zh', [...keysOf(await read('zh_views.js')), ...keysOf(await read('zh.js'))]]]) {
    assert.ok(keys.length > 1000, `${table}: ${keys.length} keys read`);
    assert.equal(keys.length, Object.keys(STRINGS[table]).length, `${table}: every key read`);
    assert.deepEqual(keys.filter((k, i) => keys.indexOf(k) !== i), [], table);
  }
});

test('every page has the Chinese tab labels (a link may name its view by one); the rest of the Chinese only once loaded', async () => {
  const views = (table) => Object.keys(table).filter((key) => /^view\.[a-z]+$/.test(key));
  assert.deepEqual(Object.keys(ZH_VIEWS), views(EN));
  assert.deepEqual(strings.STRINGS.en, EN);
  // Before loadLanguage('zh'): the tab labels, English on screen.
  assert.equal(strings.hasLanguage('zh'), false);
  assert.deepEqual(strings.STRINGS.zh, ZH_VIEWS);
  assert.equal(strings.setLanguage('zh'), 'en');
  assert.equal(strings.language(), 'en');
  assert.equal(document.documentElement.lang, 'en');
  assert.equal(strings.t('app.cancel'), 'Cancel');
  // The file the offline copy keeps beside what the page loaded.
  assert.deepEqual(strings.LANGUAGE_FILES, [new URL('../../www/strings/zh.js', import.meta.url).href]);
  // Loaded: the whole table, and the page can show it.
  await strings.loadLanguage('zh');
  assert.equal(strings.hasLanguage('zh'), true);
  assert.equal(strings.STRINGS.zh, ZH);
  assert.equal(strings.setLanguage('zh'), 'zh');
  assert.equal(document.documentElement.lang, 'zh-CN');
  assert.equal(strings.t('app.cancel'), ZH['app.cancel']);
  // A language the page has no table for is English, as before; loading it has nothing to fetch.
  await strings.loadLanguage('fr');
  assert.equal(strings.setLanguage('fr'), 'en');
  assert.equal(strings.t('app.cancel'), 'Cancel');
});

test('the Chinese table is Chinese: most strings carry CJK characters', () => {
  const cjk = Object.values(STRINGS.zh).filter((s) => /[\u4e00-\u9fff]/.test(s)).length;
  assert.ok(cjk / Object.keys(STRINGS.zh).length > 0.6, `${cjk} of ${Object.keys(STRINGS.zh).length}`);
});

// The glossary (www/glossary.js): one way to write each term, in each language.
test('no Chinese string keeps a Latin word outside the glossary’s allowed names', () => {
  const stray = Object.entries(STRINGS.zh)
    .map(([key, text]) => [key, strayLatin(text)])
    .filter(([, words]) => words.length > 0);
  assert.deepEqual(stray, []);
});

test('the allowed-names check can fail: English words in a Chinese sentence are found', () => {
  assert.deepEqual(strayLatin('scores / 加掩码 / probs'), ['probs']);
  assert.deepEqual(strayLatin('查询 i / key j，layer out'), ['key', 'layer', 'out']);
  assert.deepEqual(strayLatin('q_proj、MiniMind 的 token 经过 softmax（{name}）'), []);
});

test('every string writes the glossary’s terms its one way, in both languages', () => {
  const offences = [];
  for (const term of TERMS) {
    for (const [lang, rules] of [['zh', term.notZh ?? []], ['en', term.notEn ?? []]]) {
      for (const [key, text] of Object.entries(STRINGS[lang])) {
        // A tutorial's title is quoted as it is written (《…》).
        for (const rule of rules) if (rule.test(text.replace(/《[^》]*》/g, ''))) offences.push(`${lang} ${key} (${term.id}): ${text}`);
      }
    }
  }
  assert.deepEqual(offences, []);
});

test('the tutorials’ terms are the ones on screen', () => {
  const zh = STRINGS.zh;
  assert.equal(zh['stage.scores'], '缩放后的匹配分数'); // MiniMind's scores are after ÷ √d: the tutorial's 缩放后的分数, not its 原始匹配分数
  assert.equal(zh['stage.probs'], '注意力权重');
  // The weights are the formula's softmax(Q × Kᵀ / √d), said where they are drawn.
  assert.match(zh['attention.explain.probs'], /softmax\(Q × Kᵀ \/ √d\)/);
  // A head's largest weight on one key is said as that, not as "the most concentrated token".
  assert.doesNotMatch(zh['role.detail'], /最集中/);
  // Words the tutorials use; not a translation of "prints".
  for (const [key, text] of Object.entries(zh)) assert.doesNotMatch(text, /(?<!打)印出/, key);
  assert.equal(zh['tip.prob'], '权重');
  assert.match(zh['tip.query'], /^Q（查询）/);
  assert.match(zh['tip.key'], /^K（键）/);
  // Counting from 0, said the same way wherever a token's index is shown.
  for (const [key, text] of Object.entries(zh)) if (/\{i\}/.test(text) && /位置 \{i\}/.test(text)) assert.match(text, /位置 \{i\}（从 0 开始数）|位置 \{i\} 之后/, key);
  for (const [key, text] of Object.entries(STRINGS.en)) if (/token \{i\}/i.test(text)) assert.match(text, /token \{i\} \(counting from 0/i, key);
});

test('a value follows its label after one space, or straight after a Chinese full-width colon', async () => {
  const { gap } = await import('../../www/parts/format.js');
  assert.equal(gap('Entropy:'), ' ');
  assert.equal(gap('熵（权重有多分散）：'), '');
  assert.equal(gap('每个 token 的 KV Cache：'), '');
});

test('an English count of one agrees with its noun; other counts and Chinese are left alone', async () => {
  const { t, setLanguage, loadLanguage } = strings;
  await loadLanguage('zh');
  setLanguage('en');
  assert.equal(t('app.status', { backend: 'CPU', ms: '1.0', tokens: 1 }), 'CPU · 1.0 ms · 1 token');
  assert.equal(t('app.status', { backend: 'CPU', ms: '1.0', tokens: 21 }), 'CPU · 1.0 ms · 21 tokens');
  assert.match(t('decode.sequenceNote', { p: 1, n: 1 }), /^1 prompt token, 1 generated/);
  assert.match(t('decode.sequenceNote', { p: 1001, n: 1 }), /^1001 prompt tokens/);
  assert.match(t('decode.sequenceNote', { p: '0.1', n: 1 }), /^0\.1 prompt tokens/);
  setLanguage('zh');
  assert.equal(t('app.status', { backend: 'CPU', ms: '1.0', tokens: 1 }), 'CPU · 1.0 ms · 1 个 token');
  setLanguage('en');
});

// index.html carries its English text, painted at the first paint before any script has run (the
// first look's largest text is there at once); the page writes the same keys again in the reader's
// language. Each element's text must be its key's English string, so the two never drift.
test('index.html’s static text is each data-i18n key’s English string', async () => {
  const { readFileSync } = await import('node:fs');
  const html = readFileSync(new URL('../../www/index.html', import.meta.url), 'utf8');
  const unescape = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const found = [...html.matchAll(/data-i18n="([^"]+)"[^>]*>([^<]*)</g)];
  assert.ok(found.length >= 10, `${found.length} static strings`);
  for (const [, key, text] of found) assert.equal(unescape(text), EN[key], `index.html’s ${key}`);
});

test('index.html’s early overview title is the overview’s title for the built-in model', async () => {
  const { readFileSync } = await import('node:fs');
  const html = readFileSync(new URL('../../www/index.html', import.meta.url), 'utf8');
  const title = html.match(/data-first-look-title>([^<]*)</)[1];
  assert.equal(title, EN['overview.title'].replace('{name}', EN['model.builtinName']));
});

// The page's strings (www/strings.js): every English string has its 简体中文 twin with the same
// placeholders, so switching language never shows a key or a half-English sentence.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STRINGS } from '../../www/strings.js';
import { TERMS, strayLatin } from '../../www/glossary.js';

const placeholders = (text) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

test('every English string has a Chinese one and no Chinese string is left over', () => {
  const en = Object.keys(STRINGS.en);
  const zh = Object.keys(STRINGS.zh);
  assert.deepEqual(en.filter((k) => !(k in STRINGS.zh)), [], 'missing in zh');
  assert.deepEqual(zh.filter((k) => !(k in STRINGS.en)), [], 'only in zh');
});

test('no key is written twice in a table (the second would silently replace the first)', async () => {
  const { readFile } = await import('node:fs/promises');
  const source = await readFile(new URL('../../www/strings.js', import.meta.url), 'utf8');
  for (const table of ['en', 'zh']) {
    const body = source.slice(source.indexOf(`const ${table} = {`), source.indexOf('\n};', source.indexOf(`const ${table} = {`)));
    const keys = [...body.matchAll(/^ {2}'([^']+)':/gm)].map((m) => m[1]);
    assert.ok(keys.length > 500, `${table}: ${keys.length} keys read`);
    assert.deepEqual(keys.filter((k, i) => keys.indexOf(k) !== i), [], table);
  }
});

test('each translation fills the same placeholders', () => {
  for (const [key, text] of Object.entries(STRINGS.en)) {
    assert.deepEqual(placeholders(STRINGS.zh[key] ?? text), placeholders(text), key);
  }
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
  globalThis.document ??= { documentElement: {} };
  const { t, setLanguage } = await import('../../www/strings.js');
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

// The page's strings (www/strings.js): every English string has its 简体中文 twin with the same
// placeholders, so switching language never shows a key or a half-English sentence.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STRINGS } from '../../www/strings.js';

const placeholders = (text) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

test('every English string has a Chinese one and no Chinese string is left over', () => {
  const en = Object.keys(STRINGS.en);
  const zh = Object.keys(STRINGS.zh);
  assert.deepEqual(en.filter((k) => !(k in STRINGS.zh)), [], 'missing in zh');
  assert.deepEqual(zh.filter((k) => !(k in STRINGS.en)), [], 'only in zh');
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

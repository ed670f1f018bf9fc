// What the banner says of a link's fields (www/link.js explainLink), in the page's language.
import test from 'node:test';
import assert from 'node:assert/strict';

globalThis.document ??= { documentElement: {} };
const { setLanguage, loadLanguage } = await import('../../www/strings.js');
await loadLanguage('zh'); // fetched as the page does when it shows Chinese
const { explainLink } = await import('../../www/link.js');

test('a field the link got wrong is named in Chinese with its key, listed with 、 and ended with 。', () => {
  const problems = [{ field: 'step', reason: 'invalid' }, { field: 'layer', reason: 'clamped' }, { field: 'config.hidden_size', reason: 'invalid' }, { field: 'zzz', reason: 'unknown' }];
  setLanguage('zh');
  assert.equal(explainLink(problems).title, '链接中的部分设置超出范围或无法识别，已被调整或重置：步骤（step）、层（layer）、模型设置（hidden_size）、zzz。');
  setLanguage('en');
  assert.equal(explainLink(problems).title, 'Some settings in this link were out of range or not recognised and were adjusted or reset: step, layer, config.hidden_size, zzz.');
});

test('a field given twice is said apart from the ones out of range', () => {
  setLanguage('en');
  assert.deepEqual(explainLink([{ field: 'view', reason: 'repeated' }, { field: 'view', reason: 'repeated' }]), { title: 'This link gives view more than once; the last one was used.', details: [] });
  assert.deepEqual(explainLink([{ field: 'view', reason: 'repeated' }, { field: 'layer', reason: 'clamped' }]).details, ['This link gives view more than once; the last one was used.']);
  setLanguage('zh');
  assert.equal(explainLink([{ field: 'view', reason: 'repeated' }]).title, '这个链接不止一次给出了视图（view），用的是最后一个。');
  setLanguage('en');
});

test('a text cut to the most a link carries, or read past a broken %-escape, is said so under the list', () => {
  setLanguage('en');
  const said = explainLink([{ field: 'text', reason: 'clamped' }, { field: 'compare', reason: 'repaired' }]);
  assert.equal(said.title, 'Some settings in this link were out of range or not recognised and were adjusted or reset: text, compare.');
  assert.deepEqual(said.details, ['Its text was cut to its first 2,000 characters, the most a link carries.', 'Its compare had broken %-escapes: it was read as far as it goes, and bytes that are not UTF-8 show as �.']);
  setLanguage('zh');
  assert.match(explainLink([{ field: 'text', reason: 'clamped' }]).details[0], /^其中的.+（text）被截到前 2,000 个字符/);
  setLanguage('en');
});

test('a damaged address on a live page says it kept the reader’s settings, not that it opened the defaults', async () => {
  const { setLanguage } = await import('../../www/strings.js');
  setLanguage('en');
  const problems = [{ field: null, reason: 'damaged', kept: ['view'] }];
  assert.match(explainLink(problems).title, /opened with its default settings, except for what the link wrote out plainly \(view\)/);
  assert.equal(explainLink(problems, { kept: true }).title, 'This address is damaged: attnscope left out what it could not read and kept your current settings, changing only what the address wrote out plainly (view).');
  assert.equal(explainLink([{ field: null, reason: 'damaged' }], { kept: true }).title, 'This address is damaged: attnscope left out what it could not read and kept your current settings.');
  assert.match(explainLink([{ field: null, reason: 'future', version: 9 }], { kept: true }).title, /newer/i, 'only a damaged address is said so');
});

test('a view the page does not have is named, with the view that opened instead', async () => {
  setLanguage('en');
  const problems = [{ field: 'view', reason: 'invalid', value: 'nosuch' }];
  assert.equal(explainLink(problems, { view: 'overview' }).title, 'This link asks for the view “nosuch”, which attnscope does not have, so it opened Overview.');
  // With other fields wrong too, the list says them all.
  assert.match(explainLink([...problems, { field: 'layer', reason: 'invalid' }], { view: 'overview' }).title, /adjusted or reset: view, layer\./);
  setLanguage('zh');
  assert.equal(explainLink(problems, { view: 'grid' }).title, '这个链接要打开的视图“nosuch”并不存在，所以打开了“所有注意力头”。');
  setLanguage('en');
});


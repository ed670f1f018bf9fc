// The built-in model's samples.json as the page reads it (www/model_source.js checkSamples): every
// sample names a known pattern and a head the model has, or the file is refused as a whole; the
// committed file passes against the committed config.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { checkSamples, SAMPLE_PATTERNS } from '../../www/model_source.js';

const builtin = (name) => JSON.parse(readFileSync(new URL(`../../www/models/builtin/${name}`, import.meta.url), 'utf8'));
const CONFIG = { num_hidden_layers: 4, num_attention_heads: 8 };
const sample = (fields) => ({ text: 'The cat sat.', pattern: 'previous-token', layer: 3, head: 4, ...fields });

test('the committed samples.json fits the committed model and names only known patterns', () => {
  const samples = builtin('samples.json');
  const checked = checkSamples(samples, builtin('config.json'));
  assert.notEqual(checked, null);
  assert.deepEqual(checked, samples);
  assert.ok(checked.en.length > 0 && checked.zh.length > 0);
});

test('each pattern the page names, and nothing else, passes', () => {
  for (const pattern of Object.keys(SAMPLE_PATTERNS)) assert.notEqual(checkSamples({ en: [sample({ pattern })] }, CONFIG), null, pattern);
  assert.deepEqual(checkSamples({ en: [sample({ extra: 1 })] }, CONFIG), { en: [sample({})], zh: [] }, 'only the four fields are kept');
});

test('a file with anything wrong is refused as a whole', () => {
  const bad = {
    'plain strings (the old format)': { en: ['The cat sat.'] },
    'an unknown pattern': { en: [sample({ pattern: 'sink' })] },
    'a layer past the last': { en: [sample({ layer: 4 })] },
    'a head past the last': { zh: [sample({ head: 8 })] },
    'a negative head': { en: [sample({ head: -1 })] },
    'a fractional layer': { en: [sample({ layer: 1.5 })] },
    'a head as a string': { en: [sample({ head: '4' })] },
    'an empty text': { en: [sample({ text: '  ' })] },
    'one bad sample among good ones': { en: [sample({}), sample({ pattern: 'induction', head: 9 })] },
    'a language that is not a list': { en: [sample({})], zh: 'x' },
    'no samples at all': { en: [], zh: [] },
    'not an object': null,
  };
  for (const [what, samples] of Object.entries(bad)) assert.equal(checkSamples(samples, CONFIG), null, what);
  assert.equal(checkSamples({ en: [sample({})] }, null), null, 'no config: no head can be checked');
});

test('a very long address is quoted cut in the middle, so a message about it stays a sentence', async () => {
  const { clipped } = await import('../../www/model_source.js');
  const url = `https://example.org/${'x'.repeat(5000)}/model/`;
  const shown = clipped(url);
  assert.equal(Array.from(shown).length, 80);
  assert.ok(shown.startsWith('https://example.org/xxx') && shown.endsWith('xxxxxxxxxxxx/model/') && shown.includes('…'), shown);
  assert.equal(clipped('https://example.org/m/'), 'https://example.org/m/', 'a short one as given');
});

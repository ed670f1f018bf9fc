// Numbers typed in a field (www/parts/format.js numberList): ASCII or a Chinese keyboard's full-width
// forms, separated by commas or spaces.
import test from 'node:test';
import assert from 'node:assert/strict';

globalThis.document ??= { documentElement: {} };
const { numberList } = await import('../../www/parts/format.js');

test('full-width digits, commas and signs read as the numbers they are', () => {
  assert.deepEqual(numberList('1, 2, 3'), [1, 2, 3]);
  assert.deepEqual(numberList('１，２，３'), [1, 2, 3]);
  assert.deepEqual(numberList('０．５、－２ −1.5'), [0.5, -2, -1.5]);
  assert.deepEqual(numberList('  4  5 '), [4, 5]);
  assert.ok(numberList('1, x').some(Number.isNaN), 'what is not a number is flagged');
  assert.deepEqual(numberList(''), []);
});

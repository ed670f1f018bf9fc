// The experiments' DOM-free pieces in node: the KL divergence of two predictions
// (www/parts/entropy.js) and the compare view's default second sentence (www/parts/word_pairs.js).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { klDivergence } from '../../www/parts/entropy.js';
import { swapWord } from '../../www/parts/word_pairs.js';

test('KL(P ‖ Q) is Σ p ln(p / q): zero for equal distributions, not symmetric, infinite where Q misses P', () => {
  assert.equal(klDivergence([0.25, 0.75], [0.25, 0.75]), 0);
  const pq = 0.5 * Math.log(0.5 / 0.9) + 0.5 * Math.log(0.5 / 0.1);
  const qp = 0.9 * Math.log(0.9 / 0.5) + 0.1 * Math.log(0.1 / 0.5);
  assert.ok(Math.abs(klDivergence([0.5, 0.5], [0.9, 0.1]) - pq) < 1e-15);
  assert.ok(Math.abs(klDivergence([0.9, 0.1], [0.5, 0.5]) - qp) < 1e-15);
  assert.notEqual(pq.toFixed(6), qp.toFixed(6));
  assert.equal(klDivergence([0, 1], [0.5, 0.5]), Math.log(2), 'a token P never picks adds nothing');
  assert.equal(klDivergence([0.5, 0.5], [1, 0]), Infinity);
});

test('the default second sentence swaps the first word of a known pair, whole words only, keeping a capital', () => {
  assert.equal(swapWord('She said that he was kind.'), 'He said that he was kind.');
  assert.equal(swapWord('The king said to his son'), 'The queen said to his son');
  assert.equal(swapWord('To be, or not to be'), 'To go, or not to be');
  assert.equal(swapWord('他今天很开心。'), '她今天很开心。');
  assert.equal(swapWord('这本书写得非常好，我一口气就看完了。'), '这本书写得非常坏，我一口气就看完了。');
  assert.equal(swapWord('A cathedral at dawn.'), 'A cathedral at dawn.', 'no pair: the sentence itself');
});

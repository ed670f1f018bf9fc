// The experiments' DOM-free pieces in node: the KL divergence of two predictions
// (www/parts/entropy.js), the compare view's default second sentence (www/parts/word_pairs.js) and
// the change column of two predictions (www/parts/prediction_diff.js).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { klDivergence } from '../../www/parts/entropy.js';
import { swaps } from '../../www/parts/word_pairs.js';

const swapWord = (text) => swaps(text)[0] ?? text;
import { points } from '../../www/parts/prediction_diff.js';

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
  // Each of the built-in model's samples (www/models/builtin/samples.json) opens the view on a real pair.
  assert.equal(swapWord('I love you more than words can say, and I will love you forever.'), 'I hate you more than words can say, and I will love you forever.');
  assert.equal(swapWord('A good friend is someone who listens when you need to talk.'), 'A bad friend is someone who listens when you need to talk.');
  assert.equal(swapWord('中国的经济在过去二十年里发展得很快。'), '中国的经济在过去二十年里发展得很慢。');
  assert.equal(swapWord('老师告诉我们，读书是了解世界最好的方法。'), '老师告诉我们，读书是了解世界最坏的方法。');
  assert.equal(swapWord('他今天很开心。'), '她今天很开心。');
  // Every swap, the earliest word first: the view takes the first whose tokens line up (love → hate
  // does not: "hate" is two tokens of MiniMind's tokenizer).
  assert.deepEqual(swaps('I love you more than words can say, and I will love you forever.'), ['I hate you more than words can say, and I will love you forever.', 'I like you more than words can say, and I will love you forever.']);
  assert.deepEqual(swaps('She is a good cat.'), ['He is a good cat.', 'She is a bad cat.', 'She is a good cats.']);
  assert.deepEqual(swaps('Nothing here.'), []);
  assert.equal(swapWord('这本书写得非常好，我一口气就看完了。'), '这本书写得非常坏，我一口气就看完了。');
  assert.equal(swapWord('A cathedral at dawn.'), 'A cathedral at dawn.', 'no pair: the sentence itself');
});

test('a change of probability is signed and never rounds to a signed zero: tiny changes keep two significant digits', () => {
  assert.equal(points(0.123), '+12.3 pp');
  assert.equal(points(-0.0042), '−0.42 pp');
  assert.equal(points(-0.0000412), '−0.0041 pp', 'was −0.00 pp');
  assert.equal(points(0.0000009), '+0.000090 pp');
  assert.equal(points(0), '±0.00 pp');
  for (let k = 0; k < 200; k++) {
    const d = (k % 2 ? -1 : 1) * 10 ** (-8 + k / 25);
    const [, sign, digits] = points(d).match(/^([+−])([\d.]+) pp$/);
    assert.equal(sign, d > 0 ? '+' : '−');
    assert.ok(Number(digits) > 0, `${d}: ${points(d)}`);
    assert.ok(Math.abs(Number(digits) - Math.abs(d) * 100) <= Math.abs(d) * 100 * 0.05 + 0.005, `${d}: ${points(d)}`);
  }
});

// Entropy in bits of one probability row: 0 when all attention sits on one key, log2(n) when it is
// spread evenly over n keys. The scale view and the √d lesson measure how peaked softmax is with it.
// And the KL divergence of two distributions, in nats as interpretability tools report it: how far a
// changed prediction moved (parts/prediction_diff.js). And the root mean square of a list of numbers:
// the size of a tensor's entries (Q/K RMSNorm in the stepper, the raw scores' note in the attention map).

export function entropy(row) {
  let h = 0;
  for (const p of row) if (p > 0) h -= p * Math.log2(p);
  return h;
}

/**
 * KL(P ‖ Q) = Σ p ln(p / q) in nats, over two full distributions (arrays indexed by token id): how
 * many nats the prediction Q loses against P. 0 when they are equal; Infinity when Q gives zero to a
 * token P does not (an f32 softmax underflows only for enormous logit gaps).
 */
export function klDivergence(p, q) {
  let sum = 0;
  for (let i = 0; i < p.length; i++) {
    if (p[i] > 0) sum += p[i] * (Math.log(p[i]) - Math.log(q[i]));
  }
  return Math.max(0, sum);
}

/** √(mean of x²) over `values` (any iterable of numbers); 0 for none. */
export function rms(values) {
  let sum = 0;
  let n = 0;
  for (const x of values) {
    sum += x * x;
    n++;
  }
  return Math.sqrt(sum / Math.max(1, n));
}

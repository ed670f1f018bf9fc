// Entropy in bits of one probability row: 0 when all attention sits on one key, log2(n) when it is
// spread evenly over n keys. The scale view and the √d lesson measure how peaked softmax is with it.

export function entropy(row) {
  let h = 0;
  for (const p of row) if (p > 0) h -= p * Math.log2(p);
  return h;
}

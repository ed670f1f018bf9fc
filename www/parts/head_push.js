// Each head's direct push on one token's logit at one position (direct logit attribution): the
// core's `layers.{l}.attn.head_logit` rows at position i, asked for with the run's `headLogit` and
// `targetToken`, laid out layer by layer as one [L × nH] array. Head attribution draws it; the
// knock-out view picks from it the head to suggest first. `args` adds to the run's own (an intact
// run: `{ablate: []}`).

import { range } from './controls.js';

export async function headPushes(app, i, target, args = {}) {
  const { num_hidden_layers: L, num_attention_heads: nH } = app.model;
  const names = range(L).map((l) => `layers.${l}.attn.head_logit`);
  const found = await app.tensors(names, { headLogit: true, targetToken: target, ...args });
  const out = new Float32Array(L * nH);
  for (let l = 0; l < L; l++) out.set(found.get(names[l]).data.subarray(i * nH, (i + 1) * nH), l * nH);
  return out;
}

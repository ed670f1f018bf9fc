import { DOOR, SENTENCE } from '../lessons/qk_match.js';

// The built-in model's head in which the query at `focus` puts the most weight on `target` (她 on
// 红 of 小红, the tutorials' example), from that sentence's own run: a lesson's door and the Q·K
// view open there. null on another model (the link switches to the built-in one, whose heads
// these are not) or if the run fails.
export async function strongestHead(app, ids, focus, target) {
  if (app.source?.kind !== 'builtin' || !app.model) return null;
  const T = ids.length;
  const names = Array.from({ length: app.model.num_hidden_layers }, (_, l) => `layers.${l}.attn.probs`);
  const found = await app.tensors(names, { ids, attention_mask: null, prefix_len: 0, causal: true }).catch(() => null);
  if (!found) return null;
  let best = null;
  names.forEach((name, layer) => {
    const { data } = found.get(name);
    for (let h = 0; h * T * T < data.length; h++) {
      const w = data[(h * T + focus) * T + target];
      if (best === null || w > best.w) best = { layer, head: h, w };
    }
  });
  return best && { layer: best.layer, head: best.head };
}

// Opens the tutorials' sentence on the built-in model with 她 followed as the query, in the head
// where 她 looks at 红 (of 小红) the most; with `key`, 红 is picked as the key too (the Q·K view).
export async function openTutorialPair(app, { key = false } = {}) {
  const { ids, pieces } = await app.tokenize(SENTENCE, true);
  const query = pieces.lastIndexOf(DOOR.focus);
  const target = pieces.lastIndexOf(DOOR.target, query);
  const head = await strongestHead(app, ids, query, target);
  app.navigate({ model: 'builtin', text: SENTENCE, bos: true, pad: [], query, ...(key ? { key: target } : {}), ...(head ?? {}) });
}

// Whether the page shows the tutorials' sentence with 她 followed.
export function showsTutorialPair(state, query) {
  return state.text === SENTENCE && query !== null && state.tokens.pieces[query] === DOOR.focus;
}

import { DOOR, SENTENCE } from '../lessons/qk_match.js';
import { smollm2Samples } from '../model_source.js';
import { pageLink } from '../link.js';
import { el } from './dom.js';
import { t } from '../strings.js';

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

// SmolLM2's indirect-object sample (models/smollm2/samples.json): the English counterpart of the
// tutorials' 她 → 小红, a name the model must pick from earlier in the sentence. null where the site
// does not serve SmolLM2.
let counterpart = null;
export function smollm2Counterpart() {
  counterpart ??= smollm2Samples().then((raw) => raw?.en?.find((s) => s.pattern === 'indirect-object') ?? null);
  return counterpart;
}

// Said where the page follows 她 on the built-in model: it does not show the tutorials' phenomenon
// (best: the most weight any of its heads gives 红 from 她 in this sentence, a number in [0, 1], or
// null), with a link that opens SmolLM2 on its indirect-object sample in the Find-the-circuit view.
export function smallModelNote(app, best = null) {
  const node = el('p', { className: 'message small-model-note' }, t(best === null ? 'pair.smallModel' : 'pair.smallModelBest', { w: best === null ? '' : best.toFixed(2) }));
  smollm2Counterpart().then((sample) => {
    if (sample) node.append(' ', pageLink(app.navigate, { model: 'smollm2', text: sample.text, view: 'circuit' }, t('pair.toSmollm2')));
  });
  return node;
}

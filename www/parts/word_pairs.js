// Minimal pairs: sentences that differ in one word (她 / 他, "his" / "her"), the compare view's
// default second sentence. DOM-free, so node tests it (tests/unit/interp.test.mjs).

// Words that make a minimal pair: the default second sentence swaps the first one A holds.
const PAIRS = [
  ['她', '他'], ['小猫', '小狗'], ['好', '坏'], ['猫', '狗'], ['很快', '很慢'],
  ['she', 'he'], ['her', 'his'], ['cat', 'cats'], ['king', 'queen'], ['father', 'mother'], ['son', 'daughter'], ['brave', 'afraid'], ['morning', 'evening'], ['be', 'go'],
  ['love', 'hate'], ['good', 'bad'],
];

/** A's first word of a known pair swapped for its partner (whole words in Latin script); A itself when none is found. */
export function swapWord(text) {
  let best = null;
  for (const [x, y] of PAIRS) {
    for (const [from, to] of [[x, y], [y, x]]) {
      const pattern = /^[a-z]/i.test(from) ? new RegExp(`\\b${from}\\b`, 'i') : new RegExp(from);
      const found = pattern.exec(text);
      if (found && (!best || found.index < best.index)) best = { index: found.index, from: found[0], to: found[0][0] === found[0][0].toUpperCase() && /[a-z]/i.test(to) ? to[0].toUpperCase() + to.slice(1) : to };
    }
  }
  return best ? text.slice(0, best.index) + best.to + text.slice(best.index + best.from.length) : text;
}

// Minimal pairs: sentences that differ in one word (她 / 他, "his" / "her"), the compare view's
// default second sentence (views/compare.js takes the first whose tokens line up with the first
// sentence's). DOM-free, so node tests it (tests/unit/interp.test.mjs).

// Words that make a minimal pair: the default second sentence swaps the first one A holds.
const PAIRS = [
  ['她', '他'], ['小猫', '小狗'], ['好', '坏'], ['猫', '狗'], ['很快', '很慢'],
  ['she', 'he'], ['her', 'his'], ['cat', 'cats'], ['king', 'queen'], ['father', 'mother'], ['son', 'daughter'], ['brave', 'afraid'], ['morning', 'evening'], ['be', 'go'],
  ['love', 'hate'], ['love', 'like'], ['good', 'bad'],
];

/**
 * Every sentence that swaps one word of a known pair in A for its partner (whole words in Latin
 * script), the earliest word first; none when A holds no such word.
 */
export function swaps(text) {
  const found = [];
  for (const [x, y] of PAIRS) {
    for (const [from, to] of [[x, y], [y, x]]) {
      const pattern = /^[a-z]/i.test(from) ? new RegExp(`\\b${from}\\b`, 'i') : new RegExp(from);
      const match = pattern.exec(text);
      if (match) found.push({ index: match.index, from: match[0], to: match[0][0] === match[0][0].toUpperCase() && /[a-z]/i.test(to) ? to[0].toUpperCase() + to.slice(1) : to });
    }
  }
  found.sort((a, b) => a.index - b.index);
  return [...new Set(found.map((f) => text.slice(0, f.index) + f.to + text.slice(f.index + f.from.length)))];
}


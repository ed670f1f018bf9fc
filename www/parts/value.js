// A number on screen: shown with fixed decimals, its exact f32 in data-value (for tests and for
// copy-paste), so every figure a view prints can be checked against the core's tensor. `digits` may
// instead be a function that writes the number (format.js's percent, for a probability).

import { el } from './dom.js';
import { exact, fixed } from './format.js';

export function value(v, digits = 4, className = 'num') {
  return el('output', { className, dataset: { value: exact(v) } }, typeof digits === 'function' ? digits(v) : fixed(v, digits));
}

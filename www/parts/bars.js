// Horizontal bars for a distribution (a softmax row, next-token candidates, row entropies): one row
// per item with its label, a bar as long as the value and the value as text. It is an HTML list, so a
// screen reader reads label and number in order; data-value carries the exact f32 for tests.

import { el } from './dom.js';
import { exact, fixed } from './format.js';

// items: [{label, value, note?, highlight?}]; max: the value of a full bar; digits: decimals shown,
// or format(value): the text shown.
export function bars(items, { max = 1, digits = 3, format = (v) => fixed(v, digits), label = '' } = {}) {
  return el(
    'ol',
    { className: 'bars', attrs: { 'aria-label': label } },
    items.map((item) =>
      el(
        'li',
        { className: item.highlight ? 'bar-row highlight' : 'bar-row', dataset: { value: exact(item.value) } },
        el('span', { className: 'bar-label' }, item.label),
        el('span', { className: 'bar-track', attrs: { 'aria-hidden': 'true' } }, el('span', { className: 'bar-fill', style: { width: `${Math.max(0, Math.min(1, item.value / max)) * 100}%` } })),
        el('span', { className: 'bar-value' }, format(item.value)),
        item.note && el('span', { className: 'bar-note' }, item.note),
      ),
    ),
  );
}

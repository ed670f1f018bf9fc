// The one floating tooltip every view shares. It is also a polite live region, so a keyboard
// user moving through a heatmap hears the value the mouse user sees; it is in the page from the
// start (a live region added at its first message is not heard), hidden from everyone while not
// shown, and Escape puts it away.
// Its data-value attribute carries the exact number shown, for tests and for copy-paste.

import { el } from './dom.js';

let node = null;
if (typeof document !== 'undefined') {
  const ready = () => tooltip();
  if (document.body) ready();
  else addEventListener('DOMContentLoaded', ready, { once: true });
  addEventListener('keydown', (e) => {
    if (e.key === 'Escape') hideTooltip();
  });
}

function tooltip() {
  if (!node) {
    node = el('div', { className: 'tooltip', id: 'tooltip', attrs: { role: 'status', 'aria-live': 'polite' } });
    document.body.append(node);
  }
  return node;
}

// lines: array of strings or [label, value] pairs; value: the exact number, if any.
export function showTooltip(clientX, clientY, lines, value = null) {
  const t = tooltip();
  t.replaceChildren(
    // Heard first (the live region reads in order): the value, then what it is.
    ...(value === null ? [] : [el('span', { className: 'sr-only' }, `${value}; `)]),
    ...lines.map((line) =>
      Array.isArray(line)
        ? el('div', { className: 'tooltip-row' }, el('span', { className: 'tooltip-key' }, line[0]), el('span', {}, line[1]))
        : el('div', { className: 'tooltip-row' }, line),
    ),
  );
  if (value === null) delete t.dataset.value;
  else t.dataset.value = value;
  t.classList.add('visible');
  const pad = 14;
  const { width, height } = t.getBoundingClientRect();
  const x = clientX + pad + width > innerWidth ? clientX - pad - width : clientX + pad;
  const y = clientY + pad + height > innerHeight ? clientY - pad - height : clientY + pad;
  t.style.transform = `translate(${Math.max(4, x)}px, ${Math.max(4, y)}px)`;
}

export function hideTooltip() {
  if (node) node.classList.remove('visible');
}

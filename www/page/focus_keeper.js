// Keeps the keyboard's place when a control redraws itself. A knock-out toggle, a token chip or the
// probe button is a new element after the redraw its own click causes, and the browser drops the
// focus to <body> with the old one: the next Tab would start from the top of the page. After any
// change to the page, if the focused element has gone (or was disabled) and nothing else took the
// focus, the focus goes to its twin (the same id, or the same tag, first class and data attributes),
// once the redraw brings it; failing that, after a moment, to `fallback()` (the view).

const WAIT_MS = 2000;

export function keepFocus(fallback) {
  let last = null;
  let key = null;
  let lostAt = 0;
  document.addEventListener('focusin', (e) => {
    last = e.target;
    key = keyOf(e.target);
    lostAt = 0;
  });

  function restore() {
    if (!last || (last.isConnected && !last.disabled)) return;
    if (document.activeElement && document.activeElement !== document.body) {
      last = null;
      return;
    }
    lostAt ||= performance.now();
    const twin = key && document.querySelector(key);
    const usable = twin && !twin.disabled && twin.getClientRects().length > 0;
    if (!usable && performance.now() - lostAt < WAIT_MS) {
      setTimeout(restore, 100);
      return;
    }
    last = null;
    (usable ? twin : fallback())?.focus({ preventScroll: true });
  }

  let pending = false;
  new MutationObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      restore();
    });
  }).observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['disabled'] });
}

// A selector for an element's twin after a redraw: its id, or its tag, first class and data attributes.
function keyOf(node) {
  if (!(node instanceof Element) || node === document.body) return null;
  if (node.id) return `#${CSS.escape(node.id)}`;
  const cls = node.classList[0];
  if (!cls) return null;
  const data = Object.entries(node.dataset)
    .map(([k, v]) => `[data-${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}="${CSS.escape(v)}"]`)
    .join('');
  return `${node.tagName.toLowerCase()}.${CSS.escape(cls)}${data}`;
}

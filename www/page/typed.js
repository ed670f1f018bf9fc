// The text box: what is typed goes into the state after a pause in typing, and text typed and not yet
// in the address when the page is reloaded comes back with the reload.

const TYPING_PAUSE_MS = 200;

// Text typed and not yet in the address when the page was reloaded (within the typing pause, or while
// a run was in flight, which publish() waits for) is held in this tab's sessionStorage with the
// address it was typed over: the reload of that same address opens it rather than the link's text.
const TYPED_KEY = 'attnscope.typed';

function holdTyped(text) {
  try {
    sessionStorage.setItem(TYPED_KEY, JSON.stringify({ hash: location.hash, text }));
  } catch {
    // No storage (a sandboxed embed): the link's text is what a reload opens.
  }
}

/** The text held for this address before a reload, or null; it is read once (start-up). */
export function heldText() {
  try {
    const typed = JSON.parse(sessionStorage.getItem(TYPED_KEY) ?? 'null');
    sessionStorage.removeItem(TYPED_KEY);
    if (typed && typed.hash === location.hash && typeof typed.text === 'string') return typed.text.toWellFormed();
  } catch {
    // Nothing held, or no storage.
  }
  return null;
}

export function typed(page) {
  const { state, dom } = page;
  let once = false; // whether the reader has typed in the box since the page started
  return {
    /** Follows the text box: its text is tokenized once typing pauses. */
    listen() {
      dom.text.addEventListener('input', () => {
        once = true;
        page.ui.longText.say();
        holdTyped(dom.text.value);
        clearTimeout(page.typing);
        page.typing = setTimeout(() => {
          page.typing = 0;
          // A lone surrogate (half an emoji) becomes U+FFFD in the state, the box and the link alike.
          state.text = dom.text.value.toWellFormed();
          if (dom.text.value !== state.text) dom.text.value = state.text;
          page.runs.tokenize();
        }, TYPING_PAUSE_MS);
      });
    },
    /**
     * Text typed in the last TYPING_PAUSE_MS, not in the state yet, or null: a navigation made now
     * (a tab, the language button) takes it, and the pause's own tokenization is dropped.
     */
    /** Whether the reader has typed in the box since the page started. */
    typedOnce: () => once,
    takePending() {
      if (!page.typing) return null;
      clearTimeout(page.typing);
      page.typing = 0;
      return dom.text.value.toWellFormed();
    },
  };
}

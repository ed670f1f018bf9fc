// The scripting API for authors who script their figures, the same on the page (window.attnscope)
// and on the <attn-scope> element (element.js), which reaches an embedded page through postMessage:
//   getState()        the shareable state: a copy, with the fields state.js defines
//   setState(partial) changes some fields (validated like a link's; config merges key by key);
//                     resolves to the new state once the page has drawn it
//   link()            resolves to the URL that opens the current state
//   'statechange'     event after every change, with the state as event.detail
// Inside an iframe the page tells its parent each change, {attnscope: 'state', state, link, id?},
// and takes {attnscope: 'setState', partial, id} from the parent window only. It also tells the
// parent the height its content needs, {attnscope: 'size', height}, whenever that changes, so that
// <attn-scope> can grow its iframe to fit instead of cutting the figure off.

export function scriptingApi({ getState, setState, link }) {
  const api = Object.assign(new EventTarget(), { getState, setState, link });
  const parent = window.parent !== window ? window.parent : null;

  async function tellParent(state, id) {
    parent.postMessage({ attnscope: 'state', state, link: await link(), id }, '*');
  }

  if (parent) {
    addEventListener('message', async (event) => {
      const data = event.data;
      if (event.source !== parent || data?.attnscope !== 'setState') return;
      const state = await setState(data.partial);
      tellParent(state, data.id);
    });
  }

  return {
    api,
    // The page calls this after each change of the shareable state.
    announce(state) {
      api.dispatchEvent(new CustomEvent('statechange', { detail: structuredClone(state) }));
      if (parent) tellParent(state);
    },
  };
}

// Reports measure() (the content's natural height in CSS px) to the parent window whenever the page's
// layout may have changed: the iframe resized, or anything in the page added, removed or restyled.
// Measured at most once a frame, and sent only when the rounded height changed.
export function reportHeight(measure) {
  const parent = window.parent !== window ? window.parent : null;
  if (!parent) return;
  let sent = 0;
  let frame = 0;
  const check = () => {
    frame = 0;
    const height = Math.ceil(measure());
    if (height === sent) return;
    sent = height;
    parent.postMessage({ attnscope: 'size', height }, '*');
  };
  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(check);
  };
  new ResizeObserver(schedule).observe(document.documentElement);
  new MutationObserver(schedule).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  schedule();
}

// The scripting API for authors who script their figures, the same on the page (window.attnscope)
// and on the <attn-scope> element (element.js), which reaches an embedded page through postMessage:
//   getState()        the shareable state: a copy, with the fields state.js defines
//   setState(partial) changes some fields (validated like a link's; config merges key by key);
//                     resolves to the new state once the page has drawn it
//   link()            resolves to the URL that opens the current state
//   'statechange'     event after every change, with the state as event.detail
// Inside an iframe the page tells its parent each change, {attnscope: 'state', state, link, id?},
// and takes {attnscope: 'setState', partial, id} from the parent window only.

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

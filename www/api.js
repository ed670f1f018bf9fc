// The scripting API for authors who script their figures, the same on the page (window.attnscope)
// and on the <attn-scope> element (element.js), which reaches an embedded page through postMessage:
//   getState()        the shareable state: a copy, with the fields state.js defines
//   setState(partial) changes some fields (validated like a link's; config merges key by key);
//                     resolves to the new state once the page has drawn it
//   link()            resolves to the URL that opens the current state
//   'statechange'     event after every change, with the state as event.detail
//
// Only an embed (a link with `embed`, as <attn-scope> and the share panel's snippet open it) talks
// to the window around it, and only to its parent: a page framed by a site as a whole page says
// nothing and takes no orders, so a site that frames attnscope does not hear what its reader types.
// An embed tells its parent each change, {attnscope: 'state', state, link, id?}, and takes
// {attnscope: 'setState', partial, id} and {attnscope: 'subscribe', text: true, id?} from its parent
// window only. What the reader typed (the sentence, the compare view's second sentence, a model's
// address) is left out of `state`, and `link` (which holds it) is null, until the parent has asked
// for it with {attnscope: 'subscribe', text: true}; from then on every state goes whole, and only to
// the origin that asked. The embed also tells the parent the height its content needs,
// {attnscope: 'size', height}, whenever that changes, so that <attn-scope> can grow its iframe to
// fit instead of cutting the figure off.

// The fields of a state that hold what the reader typed.
const TYPED = ['text', 'compare'];

// A state without what the reader typed: its sentences, and where its model was loaded from (a
// model from an address or the Hub is named by its kind only).
function withoutText(state) {
  const kept = Object.fromEntries(Object.entries(state).filter(([key]) => !TYPED.includes(key)));
  return state.model ? { ...kept, model: { kind: state.model.kind } } : kept;
}

// The parent window of an embed (null for a page that is not one, or not in a frame), and the
// origin it is known to have: the browser's word for it where it gives one, else '*' (the parent
// window alone receives a message posted to it, whatever page it shows).
function parentOf(embed) {
  return embed && window.parent !== window ? window.parent : null;
}
function originOf(origin) {
  return origin && origin !== 'null' ? origin : '*';
}

export function scriptingApi({ getState, setState, link, embed }) {
  const api = Object.assign(new EventTarget(), { getState, setState, link });
  const parent = parentOf(embed);
  let origin = originOf(location.ancestorOrigins?.[0]);
  let reader = null; // the origin that asked for the reader's text, or null

  async function tellParent(state, id) {
    const whole = reader;
    const message = whole ? { attnscope: 'state', state, link: await link(), id } : { attnscope: 'state', state: withoutText(state), link: null, id };
    parent.postMessage(message, whole ?? origin);
  }

  if (parent) {
    addEventListener('message', async (event) => {
      const data = event.data;
      if (event.source !== parent) return;
      if (data?.attnscope === 'subscribe') {
        origin = originOf(event.origin);
        if (data.text === true) reader = origin;
        tellParent(getState(), data.id);
      } else if (data?.attnscope === 'setState') {
        origin = originOf(event.origin);
        const state = await setState(data.partial);
        tellParent(state, data.id);
      }
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

// Reports measure() (the content's natural height in CSS px) to an embed's parent window whenever
// the page's layout may have changed: the iframe resized, or anything in the page added, removed or
// restyled. Measured at most once a frame, and sent only when the rounded height changed.
export function reportHeight(measure) {
  const parent = parentOf(true);
  if (!parent) return;
  const origin = originOf(location.ancestorOrigins?.[0]);
  let sent = 0;
  let frame = 0;
  const check = () => {
    frame = 0;
    const height = Math.ceil(measure());
    if (height === sent) return;
    sent = height;
    parent.postMessage({ attnscope: 'size', height }, origin);
  };
  const schedule = () => {
    if (!frame) frame = requestAnimationFrame(check);
  };
  new ResizeObserver(schedule).observe(document.documentElement);
  new MutationObserver(schedule).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  schedule();
}

// The page's address, both ways: a change of the address (back, forward, an edited link, a tab,
// navigate()) opens what it says, and after each change the address (link.js writes it), the share
// panel and the scripting API follow the state (publish). settled() waits for both to be done.

import { decode as decodeLink, validate, HIDE_FLAGS } from '../state.js';
import { linkTo } from '../link.js';
import { hideBanner, isShowing } from '../panels/banner.js';
import { NAMES_HEAD } from './runs.js';

// settled() waits for a navigation (navigate(), a tab's link, an edited address) until its
// hashchange has arrived and been opened: the address is then one the page has seen (the
// hashchange's, or the link it wrote back).
const HASHCHANGE_WAIT_MS = 2000;

export function address(page) {
  const { state, app, dom } = page;

  function set(patch) {
    if ('layer' in patch || 'head' in patch) page.headOpen = false;
    Object.assign(state, patch);
    page.screen.refresh();
  }

  // Changes fields of the state through the address: plain fields ("view=grid&lesson=qk") change
  // the current state (fromHash), and the address is then rewritten as a whole link.
  // page.navigatedTo is the address it set: a change the page made (a tab, the language button),
  // after which a link's banner stays, unlike after an address the reader typed or went back to.
  // An embed replaces its address instead: a click in a figure adds no entry to the history of the
  // page around it (Back leaves the post, it does not step the figure).
  function navigate(patch) {
    const hash = new URLSearchParams(patch).toString();
    if (page.embed) location.replace(`#${hash}`);
    else location.hash = hash;
    page.navigatedTo = location.hash;
  }

  function go(view) {
    navigate({ view });
  }

  // The state a change of some fields starts from (plain fields in the address, setState): what is
  // on screen, but with the model last asked for, so that a change made while a model is still
  // loading (a tab clicked, the language switched) keeps that model coming rather than asking for
  // the one on screen again.
  function base() {
    return { ...page.opener.shared(), model: structuredClone(page.life.asked()) };
  }

  // A changed address opens what it says: plain fields ("view=grid") change the current state, a
  // whole link ("s3.…") replaces it.
  async function fromHash(hash) {
    if (NAMES_HEAD.test(hash)) page.headOpen = false;
    page.ui.writer.cancel();
    // The address now says what was asked, which may differ from what opens (a layer past the
    // model's, plain fields over the state): the whole link is written back even if nothing changed.
    page.rewrite = true;
    // Text typed in the typing pause is not in the state yet: a tab or the language button clicked
    // now keeps it (the view opens on it), rather than putting the old text back in the box.
    const from = base();
    const typed = page.typed.takePending();
    if (typed !== null) from.text = typed;
    const { state: next, problems, keptBase } = await decodeLink(hash, { base: from, known: page.known, lang: page.reader });
    // An address the page did not set itself (the host page's new state for an embed) is the figure now.
    if (hash !== page.navigatedTo) page.figure = null;
    if (problems.length === 0 && hash !== page.navigatedTo && isShowing(page.linkBanner)) hideBanner();
    // A text longer than a link carries comes back whole from its history entry (link.js linkWriter).
    const whole = history.state?.text;
    if (typeof whole === 'string' && typeof next.text === 'string' && whole.length > next.text.length && whole.startsWith(next.text)) next.text = whole;
    // Plain fields over the page's state, or a whole link too damaged to read (decode kept the
    // page's state then: keptBase): the reader's settings were kept.
    await page.opener.open(next, page.opener.explain(problems, { kept: Boolean(keptBase) || !/(^|&)s\d+\./.test(hash.replace(/^#/, '')), view: next.view }));
  }

  // Opens every address the page is sent to.
  function listen() {
    addEventListener('hashchange', async (event) => {
      page.seenHash = new URL(event.newURL).hash;
      page.opening++;
      try {
        await fromHash(new URL(event.newURL).hash);
      } finally {
        page.opening--;
      }
    });
  }

  // setState(partial) of the scripting API: fields are validated as a link's are, and a field that
  // is not valid as given (out of range for the model too: layer 99 of a 4-layer model) is ignored
  // and keeps its value, unlike a link's, which is clamped; config merges key by key.
  async function setState(partial) {
    const current = base();
    const merged = partial?.config && typeof partial.config === 'object' ? { ...partial, config: { ...current.config, ...partial.config } } : partial;
    const { state: next, problems } = validate(merged, current, page.known);
    // The sizes of the model the change leaves: a random model's config, or the checkpoint on screen
    // (where the change keeps it; a config changes a checkpoint's nothing).
    const keeps = partial && typeof partial === 'object' && !('model' in partial);
    const sizes = next.model.kind === 'random' ? next.config : keeps ? app.model : null;
    const bounds = { layer: sizes?.num_hidden_layers, head: sizes?.num_attention_heads };
    for (const [field, count] of Object.entries(bounds)) {
      if (!count || !(field in partial)) continue;
      const v = partial[field];
      if (!(Number.isInteger(v) && v >= 0 && v < count)) problems.push({ field, reason: 'out of range', asked: v, count });
    }
    for (const p of problems) if (p.field && p.field !== 'config' && p.field in next) next[p.field] = structuredClone(current[p.field]);
    if (problems.length) console.warn('attnscope.setState: ignored', problems);
    page.figure = null; // the host page's script sets the figure
    await page.opener.open(next);
    await settled();
    return page.opener.shared();
  }

  // After each change: the address, the embed's chrome, the share panel and the scripting API follow.
  function publish() {
    for (const flag of HIDE_FLAGS) document.documentElement.classList.toggle(`hide-${flag}`, state.hide.includes(flag));
    if (app.busy || app.phase === 'loading' || app.phase === 'building') return;
    const { writer } = page.ui;
    const now = page.opener.shared();
    page.embedChrome.figure(now);
    const json = JSON.stringify(now);
    if (json === page.published) {
      if (page.rewrite) writer.write(now);
      page.rewrite = false;
      return;
    }
    page.rewrite = false;
    page.published = json;
    writer.write(now);
    page.ui.share.update();
    linkTo(now).then((href) => {
      dom.openFull.href = href;
    });
    page.announce(now);
  }

  // Resolves once no run is in flight, the address says what is on screen (link.js writes it at most
  // every 250 ms) and the active view has drawn, including the redraws it asked for while drawing (a
  // lesson restoring edited cells from the link).
  async function settled() {
    const { writer } = page.ui;
    // An address the page has not seen is waited for until its hashchange has had ample time to
    // arrive (it comes within a task or two); after that it is taken as seen, so settled() can never
    // hang on an address nothing will open.
    const since = Date.now();
    const unseen = () => location.hash !== page.seenHash && Date.now() - since < HASHCHANGE_WAIT_MS;
    for (;;) {
      while (unseen() || page.opening || writer.pending() || app.busy || app.loading || app.phase === 'loading' || app.phase === 'building') await new Promise((r) => setTimeout(r, 20));
      for (let drawn = null; drawn !== page.rendered; ) {
        drawn = page.rendered;
        await drawn;
        await null; // a redraw asked for in a microtask after the drawing
      }
      // The drawing may have changed the state, and the address follows it.
      if (!unseen() && !writer.pending()) return;
    }
  }

  return { set, navigate, go, listen, setState, publish, settled };
}

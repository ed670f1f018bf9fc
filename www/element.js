// <attn-scope state="s3.…" width="100%" height="480"></attn-scope>: an attnscope figure for docs
// sites, loaded by one script tag. It shows the site's embed mode in an iframe (the page, its
// worker and its Content-Security-Policy stay on the attnscope site, however the host page is
// built), sized by the width and height attributes (CSS lengths; plain numbers are pixels).
// Without a height (or with height="auto") the figure is as tall as what it shows: the page reports
// its content's height (api.js) and the element follows it, so no panel is cut off at the bottom.
// Attributes: state (a link's fragment, "s3.…"; "#" optional; may carry "&hide=…"), width, height
// (default auto),
// src (the attnscope page; by default index.html next to this script), label (the iframe's title,
// for screen readers; not `title`, which would put a tooltip over the whole figure).
// Scripting, as on the page (README, "Embedding and scripting"): getState(), setState(partial),
// link(), and a 'statechange' event; the iframe answers through postMessage (api.js). What the
// reader types in the figure (its sentence) stays out of the state the figure reports until the host
// page asks for it with withText(), or for the link that holds it with link(). The element may be
// moved in the host page (a tab widget, a framework re-rendering): it loads its figure again.
// The host page's history never changes from inside a figure: a new state or src replaces the
// iframe's page (location.replace), and the embedded page rewrites its own address in place.
// Height: a `height` attribute is reserved from the start; without one the element keeps the height
// it was given in its style (the Share panel's snippet carries the measured one) or 480 px, and
// changes it once, when its figure has drawn (later, as the reader changes views).
// setState() on a figure not loaded yet (lazy, off-screen) loads it then, and resolves once drawn.
// 'statechange' fires once per change. The element's own children are its fallback: shown where the
// attnscope site cannot be reached (a still picture, a caption, a link), never a 0 px gap.
// A classic script on purpose: a plain <script src> works from any host without CORS headers.
{
  const here = document.currentScript?.src ?? location.href;
  const length = (v, fallback) => (v === null || v === '' ? fallback : /^\d+(\.\d+)?$/.test(v) ? `${v}px` : v);
  // A fragment of base64url, plain fields and separators; anything else is percent-encoded by URL.
  const fragmentOf = (state) => (state ?? '').replace(/^#/, '');
  // The height of an auto-sized figure until its page has reported one.
  const AUTO_START = '480px';
  // A figure's page that has said nothing this long after its iframe loaded is checked for.
  const SILENT_MS = 3000;
  // Size reports of a drawn figure are followed once they have stopped changing for this long.
  const SIZE_STEADY_MS = 300;
  const FALLBACK_CSS = ':host{position:relative}.fallback{box-sizing:border-box;height:100%;min-height:4em;overflow:auto;padding:12px;border:1px solid #8888;border-radius:6px;font:14px/1.4 system-ui,sans-serif}.fallback[hidden]{display:none}.fallback img{max-width:100%}';

  class AttnScope extends HTMLElement {
    static observedAttributes = ['state', 'width', 'height', 'src', 'label'];

    #frame = null;
    #state = null;
    #link = null;
    #pending = new Map(); // setState or withText id -> {resolve, reject}
    #nextId = 1;
    #withText = false; // the host page asked for the reader's text (withText): every new page is asked for it
    #loaded = null;
    #ready = null;
    #isReady = false;
    #page = null; // the URL the iframe was last sent to
    #navigated = false; // the iframe has loaded a page (a new URL then replaces it)
    #heard = false; // the figure's page has said something since it was last sent to a URL
    #lastState = ''; // the state last told in a 'statechange', as JSON
    #size = 0; // the height last reported by the figure's page
    #sizeTimer = 0;
    #silentTimer = 0;
    #fallback = null;

    constructor() {
      super();
      this.#unready();
    }

    // A new page in the frame (first load, another src, the element put back in the page): calls
    // wait for it to report its state, and calls the old page never answered are turned down.
    #unready() {
      // A call already waiting for the first page goes on waiting, for this one.
      if (!this.#ready || this.#isReady) {
        this.#isReady = false;
        this.#ready = new Promise((resolve) => {
          this.#loaded = () => {
            this.#isReady = true;
            resolve();
          };
        });
      }
      for (const { reject } of this.#pending.values()) reject(new Error('attnscope: the figure reloaded before it drew this state'));
      this.#pending.clear();
    }

    connectedCallback() {
      if (!this.#frame) {
        this.#frame = document.createElement('iframe');
        this.#frame.setAttribute('loading', 'lazy');
        this.#frame.style.cssText = 'border:0;display:block;width:100%;height:100%';
        this.#navigated = false;
        this.#page = null;
        this.#heard = false;
        this.#frame.addEventListener('load', this.#onFrameLoad);
        // The element's children (the snippet's still picture, caption and link) are its fallback.
        const style = document.createElement('style');
        style.textContent = FALLBACK_CSS;
        this.#fallback = document.createElement('div');
        this.#fallback.className = 'fallback';
        this.#fallback.hidden = true;
        this.#fallback.append(document.createElement('slot'));
        // Moved in the host page (removed, then put back): the shadow root is still there.
        (this.shadowRoot ?? this.attachShadow({ mode: 'open' })).replaceChildren(style, this.#frame, this.#fallback);
        addEventListener('message', this.#onMessage);
        this.#unready();
      }
      this.#layout();
      this.#load();
    }

    disconnectedCallback() {
      removeEventListener('message', this.#onMessage);
      clearTimeout(this.#silentTimer);
      clearTimeout(this.#sizeTimer);
      this.#frame?.remove();
      this.#frame = null;
      this.shadowRoot?.replaceChildren();
    }

    attributeChangedCallback(name) {
      if (!this.#frame) return;
      if (name === 'width' || name === 'height') this.#layout();
      else if (name === 'label') this.#frame.title = this.#title();
      else this.#load();
    }

    #autoHeight() {
      const height = this.getAttribute('height');
      return height === null || height === '' || height === 'auto';
    }

    #title() {
      return this.getAttribute('label') || 'attnscope figure';
    }

    #layout() {
      this.style.display = 'block';
      this.style.width = length(this.getAttribute('width'), '100%');
      if (!this.#autoHeight()) this.style.height = length(this.getAttribute('height'));
      else if (!this.style.height || this.style.height === 'auto') this.style.height = AUTO_START;
      this.style.minHeight = '4em'; // never a 0 px gap, whatever the host's CSS
      this.style.maxWidth = '100%';
    }

    // Only http(s) pages; a state changes the fragment alone, so the page follows it without reloading.
    #load() {
      const page = new URL(this.getAttribute('src') || 'index.html', here);
      if (page.protocol !== 'https:' && page.protocol !== 'http:') return;
      const flags = fragmentOf(this.getAttribute('state'));
      page.hash = /(^|&)embed(=|&|$)/.test(flags) ? flags : `${flags}${flags ? '&' : ''}embed=1`;
      this.#frame.title = this.#title();
      // Another page (not only another fragment) reloads the frame: its state is not known yet.
      const before = this.#page ? new URL(this.#page) : null;
      if (before && (before.origin !== page.origin || before.pathname !== page.pathname || before.search !== page.search)) {
        this.#unready();
        this.#heard = false;
      }
      this.#page = page.href;
      // A page already in the frame is replaced, not followed by another history entry of the host page's;
      // the first one (from the iframe's blank start) is no entry either.
      if (this.#navigated) this.#frame.contentWindow.location.replace(page.href);
      else this.#frame.src = page.href;
    }

    // The iframe loaded a page (the figure, or the browser's error page): if its page says nothing
    // for a while and the site does not answer, the fallback is shown in its place.
    #onFrameLoad = () => {
      if (!this.#frame?.getAttribute('src')) return;
      this.#navigated = true;
      clearTimeout(this.#silentTimer);
      if (this.#heard) return;
      this.#silentTimer = setTimeout(async () => {
        if (this.#heard || !this.#page) return;
        const reachable = await fetch(this.#page, { mode: 'no-cors', cache: 'no-store' }).then(
          () => true,
          () => false,
        );
        if (!this.#heard && !reachable) this.#offline(true);
      }, SILENT_MS);
    };

    #offline(on) {
      if (!this.#frame) return;
      this.#frame.style.display = on ? 'none' : 'block';
      this.#fallback.hidden = !on;
      this.toggleAttribute('offline', on);
      if (on && !this.children.length) {
        // No fallback in the snippet: a plain box with the figure's label and a link to open it.
        const link = document.createElement('a');
        link.href = this.#page;
        link.target = '_blank';
        link.rel = 'noopener';
        link.textContent = 'Open this figure in attnscope ↗';
        const caption = document.createElement('p');
        caption.textContent = `${this.#title()}: the figure could not be loaded.`;
        this.#fallback.replaceChildren(caption, link);
      }
    }

    // Follows the figure's height once it has drawn, when its reports have stopped changing: one
    // change when it loads, however many layouts it goes through on the way.
    #followSize() {
      clearTimeout(this.#sizeTimer);
      if (!this.#isReady || !this.#size) return;
      this.#sizeTimer = setTimeout(() => {
        if (this.#autoHeight() && this.#size) this.style.height = `${this.#size}px`;
      }, SIZE_STEADY_MS);
    }

    #onMessage = (event) => {
      const data = event.data;
      if (!this.#frame || event.source !== this.#frame.contentWindow) return;
      if (!this.#heard && (data?.attnscope === 'size' || data?.attnscope === 'state')) {
        this.#heard = true;
        clearTimeout(this.#silentTimer);
        this.#offline(false);
      }
      if (data?.attnscope === 'size' && Number.isFinite(data.height) && data.height > 0) {
        this.#size = data.height;
        this.#followSize();
        return;
      }
      if (data?.attnscope !== 'state') return;
      // A new page in the frame, where the host page asked for the reader's text before: it is asked
      // again, and is ready once it answers with it.
      if (!this.#isReady && this.#withText && data.link === null) {
        this.#post({ attnscope: 'subscribe', text: true });
        return;
      }
      this.#state = data.state;
      this.#link = data.link;
      const first = !this.#isReady;
      this.#loaded();
      if (first) this.#followSize();
      this.#pending.get(data.id)?.resolve(data.state);
      this.#pending.delete(data.id);
      // The page tells each change, and answers a setState with the state again: one event per change.
      const json = JSON.stringify(data.state);
      if (json === this.#lastState) return;
      this.#lastState = json;
      this.dispatchEvent(new CustomEvent('statechange', { detail: data.state }));
    };

    /** The embedded figure's state (null until it has loaded). */
    getState() {
      return this.#state && structuredClone(this.#state);
    }

    // Sends the figure a message, to its page's origin only.
    #post(message) {
      this.#frame.contentWindow.postMessage(message, new URL(this.#page).origin);
    }

    // Sends a message once the figure has loaded; resolves to the state the figure answers with.
    async #ask(message) {
      // A lazy figure not loaded yet (off-screen) is loaded now, rather than when the reader scrolls to it.
      if (!this.#isReady) this.#frame?.setAttribute('loading', 'eager');
      await this.#ready;
      if (!this.#frame) throw new Error('attnscope: the figure is not in the page');
      const id = this.#nextId++;
      return new Promise((resolve, reject) => {
        this.#pending.set(id, { resolve, reject });
        this.#post({ ...message, id });
      });
    }

    /** Changes some fields; resolves to the new state once the figure has drawn it. */
    setState(partial) {
      return this.#ask({ attnscope: 'setState', partial });
    }

    /**
     * Asks the figure for what the reader types in it (the sentence), which it leaves out of its
     * state until asked: from now on getState(), link() and 'statechange' carry it. Resolves to the
     * state with it.
     */
    withText() {
      this.#withText = true;
      return this.#ask({ attnscope: 'subscribe', text: true });
    }

    /** The URL that opens the figure's state in attnscope; it holds the reader's text, so it asks for that (withText). */
    async link() {
      if (!this.#withText) await this.withText();
      else await this.#ready;
      return this.#link;
    }
  }

  if (!customElements.get('attn-scope')) customElements.define('attn-scope', AttnScope);
}

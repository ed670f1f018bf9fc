// The height an embedded figure needs at a given width, measured rather than guessed: the embed
// itself (the snippet's link, with the author's hide flags) is laid out in a hidden iframe of this
// page's own origin at that width, and tells its parent the height its content needs, the report
// <attn-scope> grows to (api.js reportHeight). Views lay out at the width they are drawn at, so a
// guess from the full page's layout (wider, with its explanations and controls) misses by hundreds of
// pixels where the embed hides them or wraps.
// One hidden iframe at a time: moved to the next state through its scripting API (no reload, the
// model already built), loaded again for another width, and dropped a minute after its last use,
// since it holds a second copy of the model.

const IDLE_MS = 60_000;
// The height is final once the figure has settled and reported nothing new for this long.
const STEADY_MS = 400;
// A figure not measured by then (a model still downloading) is left to the caller's estimate.
const LIMIT_MS = 45_000;
const START_HEIGHT = 600;

export function embedSizer() {
  let frame = null; // {node, width, ready: Promise<Window>}
  let height = 0; // the last height the hidden embed reported
  let heardAt = 0;
  let idle = 0;
  let queue = Promise.resolve();

  addEventListener('message', (event) => {
    const data = event.data;
    if (!frame || event.source !== frame.node.contentWindow || data?.attnscope !== 'size') return;
    if (Number.isFinite(data.height) && data.height > 0) {
      height = data.height;
      heardAt = performance.now();
    }
  });

  function drop() {
    frame?.node.remove();
    frame = null;
  }

  // The iframe is laid out and drawn (an iframe not displayed lays nothing out, and a browser may
  // hold back the frames of one it takes for hidden, and the size report with them) but never seen,
  // never focused and never read out: transparent, behind the page, inert.
  function open(src, width) {
    drop();
    height = 0;
    const node = document.createElement('iframe');
    node.className = 'embed-sizer';
    node.title = 'embed size';
    node.tabIndex = -1;
    node.inert = true;
    node.setAttribute('aria-hidden', 'true');
    node.style.cssText = `position:fixed;left:0;top:0;width:${width}px;height:${START_HEIGHT}px;border:0;opacity:0;pointer-events:none;z-index:-1`;
    node.src = src;
    document.body.append(node);
    const ready = new Promise((resolve) => {
      const poll = () => {
        const win = node.isConnected ? node.contentWindow : null;
        if (win?.attnscope?.settled) resolve(win);
        else if (node.isConnected) setTimeout(poll, 50);
      };
      poll();
    });
    frame = { node, width, ready };
  }

  async function measure(src, state, width) {
    clearTimeout(idle);
    let fresh = false;
    if (!frame || frame.width !== width) {
      open(src, width);
      fresh = true;
    }
    const mine = frame;
    const win = await mine.ready;
    if (!fresh) await win.attnscope.setState(state);
    await win.attnscope.settled();
    // The views' last paints (a heatmap's, on its resize) follow the drawing: the height is read
    // once the embed has gone quiet.
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, STEADY_MS));
      if (frame !== mine) throw new Error('The figure was measured again meanwhile.');
      if (height > 0 && performance.now() - heardAt >= STEADY_MS) return height;
    }
  }

  return {
    /**
     * Resolves to the height in CSS px that the embed at `src` (a link to `state` with `&embed=1`)
     * needs at `width` px; rejects if it cannot be measured within LIMIT_MS. One measure at a time.
     */
    measure(src, state, width) {
      const run = queue.then(() =>
        Promise.race([
          measure(src, state, width),
          new Promise((_, reject) => setTimeout(() => reject(new Error('The figure took too long to measure.')), LIMIT_MS)),
        ]),
      );
      queue = run.catch(() => drop()).finally(() => {
        clearTimeout(idle);
        idle = setTimeout(drop, IDLE_MS);
      });
      return run;
    },
  };
}

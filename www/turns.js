// The turns a post's figures take for cores (worker_client.js shareCores), kept in a worker of each
// figure's own: a page's main thread can be busy for hundreds of milliseconds while it loads and
// draws, and a figure that asks must hear the others' places within HEAR_MS; this thread is idle.
//
// The figures speak over one BroadcastChannel, which same-origin frames of one post share (and which
// needs no storage: a frame of another site where third-party storage is blocked is refused Web
// Locks and IndexedDB, not a BroadcastChannel). A figure that wants a core says so
// with the time it asked ('want'); every figure keeps the same list of those that want or hold one,
// by that time, and takes a core once it is among the first CORES of the list, HEAR_MS after
// asking, time for the others to answer with their places ('here'). Those that want or hold one say
// 'here' again every BEAT_MS, and a place not heard of for 3 beats is dropped (a figure gone without
// its 'done'), so the list cannot stay blocked.
//
// The page says {kind: 'ask', id} and {kind: 'done'}; this worker answers {kind: 'granted'},
// then {kind: 'wanted'} once more figures want a core than there are (an idle one then goes soon).

// How many of a post's figures hold a core at once.
const CORES = 2;
const HEAR_MS = 60;
const BEAT_MS = 1000;
const channel = new BroadcastChannel('attnscope-cores');
const places = new Map(); // figure id -> {t: when it asked, heard: when last heard of}
let me = null; // this figure's id, once it asks
let asked = null; // when this figure asked for the core it waits for or holds (a time all share); null: neither
let askedAt = 0; // the same, on this worker's clock
let waiting = false;
let told = false; // the page has heard that a figure waits behind this one
let beat = 0;

const placed = (id, t) => places.set(id, { t, heard: performance.now() });

function turn() {
  const now = performance.now();
  for (const [id, place] of places) if (id !== me && now - place.heard > 3 * BEAT_MS) places.delete(id);
  if (waiting && now - askedAt >= HEAR_MS) {
    const order = [...places].sort(([a, x], [b, y]) => x.t - y.t || (a < b ? -1 : 1)).map(([id]) => id);
    if (order.indexOf(me) >= CORES) return;
    waiting = false;
    postMessage({ kind: 'granted' });
  }
  // Holding a core while more figures want one than there are cores: the page lets its worker go
  // once idle, at once rather than after its idle time.
  if (asked !== null && !waiting && !told && places.size > CORES) {
    told = true;
    postMessage({ kind: 'wanted' });
  }
}

channel.onmessage = ({ data }) => {
  if (data?.kind === 'want' || data?.kind === 'here') placed(data.id, data.t);
  if (data?.kind === 'done') places.delete(data.id);
  if (data?.kind === 'want' && asked !== null) channel.postMessage({ kind: 'here', id: me, t: asked });
  turn();
};

onmessage = ({ data }) => {
  if (data.kind === 'ask') {
    me = data.id;
    askedAt = performance.now();
    asked = performance.timeOrigin + askedAt;
    waiting = true;
    told = false;
    placed(me, asked);
    channel.postMessage({ kind: 'want', id: me, t: asked });
    clearInterval(beat);
    beat = setInterval(() => {
      placed(me, asked);
      channel.postMessage({ kind: 'here', id: me, t: asked });
      turn();
    }, BEAT_MS);
    setTimeout(turn, HEAR_MS);
  }
  if (data.kind === 'done' && asked !== null) {
    clearInterval(beat);
    places.delete(me);
    asked = null;
    waiting = false;
    channel.postMessage({ kind: 'done', id: me });
  }
};

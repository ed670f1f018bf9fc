// Which of a post's figures holds the core that all of them share (worker_client.js shareCores),
// kept in a worker of each figure's own: a page's main thread can be busy for hundreds of
// milliseconds while it loads and draws, and a figure that asks must hear the others' places within
// HEAR_MS; this thread is idle.
//
// The figures speak over BroadcastChannels, which same-origin frames of one post share (and which
// need no storage: a frame of another site where third-party storage is blocked is refused Web
// Locks, IndexedDB and a SharedWorker, not a BroadcastChannel). A figure that wants the core says so
// with the time it asked ('want'); every figure keeps the same list of those that want or hold it,
// by that time, and the first of the list, HEAR_MS after asking (time for the others to answer with
// their places, 'here'), is granted it: its worker becomes the post's core (worker.js serve) and says
// so on the news channel ('core', with its epoch). A figure still waiting that hears of a core
// follows it and leaves the list. The host says 'here' every BEAT_MS; a place not heard of for 3
// beats is dropped (a figure gone without its 'done'), and a follower whose host is gone asks again.
//
// The page says {kind: 'ask', id, port?} and {kind: 'done'}; this worker answers {kind: 'granted'}
// (this figure's worker is the core: told on `port` too, where boot.js gave one), {kind: 'host',
// id, epoch} (another figure's is: the epoch changes when its worker is replaced, and the figure
// then sends its model again) or {kind: 'lost'} (the host is gone; asked again, a 'granted' or
// 'host' follows).

const HEAR_MS = 100;
const BEAT_MS = 1000;
// The list's channel is named for this way of sharing: a figure of an earlier release (whose figures
// took turns for cores of their own, on 'attnscope-cores') is never waited on for a core it does not serve.
const channel = new BroadcastChannel('attnscope-core-turns');
const news = new BroadcastChannel('attnscope-core-news');
const places = new Map(); // figure id -> {t: when it asked, heard: when last heard of}
let me = null; // this figure's id, once it asks
let asked = null; // when this figure asked for the core it waits for or holds (a time all share); null: neither
let askedAt = 0; // the same, on this worker's clock
let waiting = false;
let following = null; // {id, epoch}: the figure whose core this one uses
let beat = 0;
let core = null; // a port to this figure's worker, told when it is granted (boot.js)
const cores = new Map(); // figure id -> epoch: the figures heard to serve as a core

const placed = (id, t) => places.set(id, { t, heard: performance.now() });

function forget() {
  const now = performance.now();
  for (const [id, place] of places) if (id !== me && now - place.heard > 3 * BEAT_MS) places.delete(id);
  for (const id of cores.keys()) if (!places.has(id)) cores.delete(id);
}

// Whether figure `a` comes before figure `b` in the list (both placed).
function before(a, b) {
  const [x, y] = [places.get(a), places.get(b)];
  return Boolean(x && y) && (x.t - y.t || (a < b ? -1 : 1)) < 0;
}

// Two figures granted at once (a machine so busy that a figure's place was not heard within
// HEAR_MS): the later one gives way to the earlier one's core once it knows of both, and its page
// sends its model there (a 'host'); the figures that followed it hear it leave and ask again.
function giveWay() {
  if (asked === null || waiting || following) return;
  for (const [id, epoch] of cores) {
    if (!before(id, me)) continue;
    leave();
    following = { id, epoch };
    postMessage({ kind: 'host', id, epoch });
    return;
  }
}

function turn() {
  forget();
  giveWay();
  if (following && !places.has(following.id)) {
    following = null;
    postMessage({ kind: 'lost' });
    ask();
    return;
  }
  if (!waiting || performance.now() - askedAt < HEAR_MS) return;
  const [first] = [...places].sort(([a, x], [b, y]) => x.t - y.t || (a < b ? -1 : 1)).map(([id]) => id);
  if (first !== me) return;
  waiting = false;
  postMessage({ kind: 'granted' });
  core?.postMessage({ kind: 'granted', id: me });
}

// Out of the list: given back, or following another figure's core.
function leave() {
  asked = null;
  waiting = false;
  places.delete(me);
  channel.postMessage({ kind: 'done', id: me });
}

function ask() {
  askedAt = performance.now();
  asked = performance.timeOrigin + askedAt;
  waiting = true;
  placed(me, asked);
  channel.postMessage({ kind: 'want', id: me, t: asked });
  news.postMessage({ kind: 'hello' });
  setTimeout(turn, HEAR_MS);
}

channel.onmessage = ({ data }) => {
  if (data?.kind === 'want' || data?.kind === 'here') placed(data.id, data.t);
  if (data?.kind === 'done') places.delete(data.id);
  if (data?.kind === 'want' && asked !== null) channel.postMessage({ kind: 'here', id: me, t: asked });
  turn();
};

news.onmessage = ({ data }) => {
  if (data?.kind !== 'core' || data.id === me || typeof data.epoch !== 'string') return;
  cores.set(data.id, data.epoch);
  giveWay();
  if (following && following.id !== data.id) return; // one host at a time
  if (following?.epoch === data.epoch) return;
  if (!following && !waiting) return; // this figure holds the core itself
  if (waiting) leave();
  // This figure's own worker, never started, goes at once (boot.js).
  if (!following) core?.postMessage({ kind: 'host' });
  following = { id: data.id, epoch: data.epoch };
  if (!places.has(data.id)) placed(data.id, 0);
  postMessage({ kind: 'host', id: data.id, epoch: data.epoch });
};

onmessage = ({ data }) => {
  if (data.kind === 'ask') {
    me = data.id;
    core = data.port ?? core;
    following = null;
    ask();
    clearInterval(beat);
    beat = setInterval(() => {
      if (asked !== null) {
        placed(me, asked);
        channel.postMessage({ kind: 'here', id: me, t: asked });
      }
      turn();
    }, BEAT_MS);
  }
  if (data.kind === 'done') {
    clearInterval(beat);
    following = null;
    if (asked !== null) leave();
  }
};

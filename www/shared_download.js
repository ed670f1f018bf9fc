// One download of a large file for all of a post's figures: a worker that boot.js starts, in embed
// mode, for the built-in model's weights. Five figures in a post each fetch the weights; a browser
// with a disk cache reads the others' copies from it, but a context with only an in-memory cache
// (a private window, an automated browser) keeps no 6.6 MB file, and five figures sent 34 MB. So the
// figures agree over a BroadcastChannel (which same-origin frames of one post share) who downloads,
// and that one posts the bytes to the others. It runs in a worker because the agreement needs
// answers within HEAR_MS, and a page's main thread is busy for longer while it starts.
//
// - A figure that needs the file says so ('need', with the time it asked) and listens for HEAR_MS.
// - One that has the file answers with its bytes; one that is downloading it says so ('fetching',
//   again every BEAT_MS while it does), and sends the bytes to all once they are in.
// - If neither answered, the figure among those that asked with the earliest time downloads; the
//   others wait for its bytes.
// - A waiter that hears nothing for 3 beats, or hears that the download failed, downloads itself,
//   so that a figure gone mid-download never leaves the others without their weights.
//
// The page says {url}; this worker answers {stream, length} (the network's body as it comes, for
// the figure that downloads: its progress shows) or {bytes} (the others), or {error}. The worker
// that downloaded stays KEEP_MS, holding the bytes for figures that come later; the others end.

const HEAR_MS = 60;
const BEAT_MS = 1000;
const KEEP_MS = 5000;

const channel = new BroadcastChannel('attnscope-files');
const me = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
const askers = new Map(); // those that asked while this figure decides: id -> time asked
let url = null;
let state = 'idle'; // 'deciding' | 'waiting' | 'fetching' | 'done'
let bytes = null; // once this figure's download is in
let lastWord = 0;

const said = (message) => channel.postMessage({ ...message, url });
const first = () => [...askers].sort(([a, x], [b, y]) => x - y || (a < b ? -1 : 1))[0][0];

function take(received) {
  state = 'done';
  postMessage({ bytes: received }, [received]);
  channel.close();
  close();
}

async function download() {
  state = 'fetching';
  said({ kind: 'fetching' });
  const beat = setInterval(() => said({ kind: 'fetching' }), BEAT_MS);
  try {
    const response = await fetch(url, { mode: 'cors', credentials: 'omit' });
    if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
    const [mine, kept] = response.body.tee();
    postMessage({ stream: mine, length: Number(response.headers.get('Content-Length')) || null, status: response.status }, [mine]);
    bytes = await new Response(kept).arrayBuffer();
    said({ kind: 'bytes', bytes });
    // Kept a while for figures still starting, then let go (a later one downloads it again, from
    // the disk cache where the browser has one).
    setTimeout(() => {
      channel.close();
      close();
    }, KEEP_MS);
  } catch (err) {
    said({ kind: 'failed' });
    if (!bytes) postMessage({ error: String(err?.message ?? err) });
    channel.close();
    close();
  } finally {
    clearInterval(beat);
  }
}

channel.onmessage = ({ data }) => {
  if (data?.url !== url || url === null) return;
  if (data.kind === 'need') {
    if (bytes) said({ kind: 'bytes', bytes });
    else if (state === 'fetching') said({ kind: 'fetching' });
    else if (state === 'deciding') askers.set(data.id, data.t);
    return;
  }
  if (state !== 'deciding' && state !== 'waiting') return;
  if (data.kind === 'bytes') take(data.bytes.slice(0));
  else if (data.kind === 'fetching') {
    state = 'waiting';
    lastWord = performance.now();
  } else if (data.kind === 'failed') download();
};

onmessage = ({ data }) => {
  url = data.url;
  const t = performance.timeOrigin + performance.now();
  askers.set(me, t);
  state = 'deciding';
  said({ kind: 'need', id: me, t });
  setTimeout(() => {
    if (state !== 'deciding') return;
    if (first() === me) return download();
    state = 'waiting';
    lastWord = performance.now();
  }, HEAR_MS);
  // A waiter that hears nothing for 3 beats downloads itself.
  const watch = setInterval(() => {
    if (state === 'done' || state === 'fetching') return clearInterval(watch);
    if (state === 'waiting' && performance.now() - lastWord > 3 * BEAT_MS) {
      clearInterval(watch);
      download();
    }
  }, BEAT_MS / 2);
};

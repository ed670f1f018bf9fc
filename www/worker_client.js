// The page's side of www/worker.js: call(type, body, {onProgress, transfer}) returns a Promise of
// the worker's result, rejected with an Error carrying the core's own message; onProgress({done,
// total}) hears how far a long run has come. Buffers in `transfer` move to the worker instead of
// being copied (a checkpoint's weights); those the worker gives back once it is done with them
// (`returned`) are put back into `body`, so the caller holds them again. cancel() stops whatever the worker is doing by replacing the worker
// (a running WebAssembly call cannot be interrupted any other way), rejects what was pending with an
// Error whose `cancelled` is true, and rebuilds the model in the new worker by replaying the last
// message that built one (a type in `sticky`) that succeeded. A call whose answer says the core
// trapped (a panic or failed allocation, after which the instance cannot be trusted) is rejected with
// the sentence `trapped({panic, error})` makes of it, and the worker is replaced the same way,
// rebuilding the last model that loaded (not a load that may have been what trapped). If the worker
// itself dies (its script fails to load), every pending and later call is rejected with that reason.
// kept() is the bytes of the buffers held for that rebuild, which the tab's budget counts.
// releaseWhenIdle(ms) lets an idle worker go the same way, to be started again by the next call.
// shareCores() makes the pages of this site that ask it (a post's figures) share one core: the first
// of them (turns.js) keeps its worker and serves the others over BroadcastChannels (worker.js serve),
// which same-origin frames of one post share; the others start none and send it their calls, each
// with its own model, built-in and random models held once for all (sharesModels()). A figure whose
// host is gone, or whose host's worker was replaced, sends its model and what was pending again.
// The first worker is the one boot.js started for the same address, where it did (its core already
// downloading while the page's modules load).

// The channels a figure reaches another figure's core on (worker.js serve).
const CALLS = 'attnscope-core-calls';
const replies = (id) => `attnscope-core:${id}`;
const TURNS_URL = new URL('./turns.js', import.meta.url);

// Another figure's core, as a worker: calls go to it addressed from this figure, its answers come
// on this figure's own channel (nothing is transferred: a BroadcastChannel copies).
function remoteCore(host, me) {
  const calls = new BroadcastChannel(CALLS);
  const answers = new BroadcastChannel(replies(me));
  return {
    postMessage: (message) => calls.postMessage({ ...message, to: host, client: me }),
    set onmessage(hear) {
      answers.onmessage = hear;
    },
    set onerror(_) {},
    terminate() {
      calls.close();
      answers.close();
    },
  };
}

export function workerClient(url, { sticky = ['session', 'checkpoint', 'builtin'], trapped = ({ panic, error }) => panic ?? error } = {}) {
  const pending = new Map();
  let nextId = 1;
  let dead = null;
  let worker = null; // null: let go while idle (releaseWhenIdle); the next call starts another
  let lastBuilt = null; // the last sticky message the worker answered with a model (its buffers given back)
  let idleMs = 0;
  let idleTimer = 0;
  // 'alone': a worker of its own; sharing a post's core (shareCores): 'host' (this page's worker is
  // the core, serving the others too), 'remote' (another figure's core: `host`) or 'waiting' (to be
  // told which; calls are queued meanwhile).
  let role = 'alone';
  let host = null; // {id, epoch} of the core a 'remote' page uses
  let serves = false; // this page's worker answers other figures: it is not let go while idle
  let queued = null; // while waiting: the messages to post once there is a core, in order
  let turns = null; // this page's place in the turns (turns.js), while sharing
  let gaveUp = false; // waiting with no ask out: the core was let go while idle (release)
  let me = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

  // An idle worker let go (releaseWhenIdle): its core, its WebAssembly memory and its model go, and
  // the next call starts a fresh worker and replays the model into it first, as cancel() does.
  // The post's core goes the same way while it serves no other figure: this figure gives back its
  // turn, and asks again with its next call.
  function release() {
    if (dead || !worker || pending.size > 0 || !lastBuilt || role === 'remote' || serves) return;
    worker.terminate();
    worker = null;
    if (role === 'host') {
      role = 'waiting';
      gaveUp = true;
      turns.postMessage({ kind: 'done' });
    }
  }
  function idle() {
    clearTimeout(idleTimer);
    if (idleMs > 0 && pending.size === 0) idleTimer = setTimeout(release, idleMs);
  }

  // A worker, or another figure's core, for the next message: queued while waiting to be told which.
  function ensure() {
    if (worker || queued) return;
    if (role !== 'waiting') return start();
    queued = [];
    if (gaveUp) turns.postMessage({ kind: 'ask', id: me });
    gaveUp = false;
  }
  function post(message, transfer) {
    if (queued) queued.push([message, transfer]);
    else worker.postMessage(message, transfer);
  }

  function start() {
    dead = null;
    if (role === 'remote') {
      worker = remoteCore(host.id, me);
      worker.onmessage = hear;
      return;
    }
    const boot = globalThis.attnscopeBoot;
    if (boot?.worker && boot.workerUrl === String(url)) {
      worker = boot.worker;
      boot.worker = null;
      if (boot.workerError) dead = new Error(`The worker stopped: ${boot.workerError}.`);
    } else worker = new Worker(url, { type: 'module' });
    // The post's core (boot.js asked the first worker already; a second ask changes nothing).
    if (role === 'host') worker.postMessage({ id: 0, type: 'serve', host: me });
    worker.onmessage = hear;
    worker.onerror = (event) => {
      event.preventDefault();
      dead = new Error(`The worker stopped: ${event.message || 'its script could not be loaded'}.`);
      rejectAll(dead);
    };
  }

  function hear({ data }) {
    // Said by a core serving other figures: that it does, or that one of their calls trapped it.
    if (data.id === 0) {
      if (data.serves) serves = true;
      if (data.poisoned) restart(lastBuilt, new Error(trapped({ error: data.error }))).catch(() => {});
      return;
    }
    const entry = pending.get(data.id);
    if (!entry) return;
    if (data.progress) {
      entry.onProgress?.(data.progress);
      return;
    }
    pending.delete(data.id);
    idle();
    if (data.ok) {
      Object.assign(entry.body, data.returned);
      if (sticky.includes(entry.type)) lastBuilt = { type: entry.type, body: entry.body };
      entry.resolve(data.result);
    } else {
      // A refusal the core said with a code (src/lib.rs `Said`) keeps it, for page/error_text.js.
      const error = Object.assign(new Error(data.trapped ? trapped(data) : data.error), data.code ? { code: data.code, args: data.args } : {});
      entry.reject(error);
      if (data.trapped) restart(lastBuilt, error).catch(() => {});
    }
  }

  function rejectAll(error) {
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  }

  function call(type, body = {}, { onProgress, transfer = [] } = {}) {
    if (dead) return Promise.reject(dead);
    clearTimeout(idleTimer);
    if (!worker && !queued) {
      ensure();
      // The model it held comes back first (the worker answers its messages in order).
      if (lastBuilt && !sticky.includes(type)) call(lastBuilt.type, lastBuilt.body).catch(() => {});
    }
    const id = nextId++;
    const message = { id, type, ...body };
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, onProgress, type, body, message });
      // Another figure's core is sent copies: this page keeps its buffers.
      post(message, role === 'remote' ? [] : transfer);
    });
  }

  // A fresh worker with `model` (a sticky message) rebuilt in it; what was pending gets `error`.
  function restart(model, error) {
    worker?.terminate();
    worker = null;
    rejectAll(error);
    if (queued) queued.length = 0;
    ensure();
    return model ? call(model.type, model.body) : Promise.resolve();
  }

  // Told by the turns which core to use now (`to`: 'host', 'waiting', or {id, epoch} of another
  // figure's): the model and what was pending go to it again, in order.
  function moveTo(to) {
    if (role === 'remote' && host?.id === to?.id && host.epoch === to.epoch) return;
    // Everything not answered yet, queued or sent (a call is pending from the moment it is made).
    const again = [...pending.values()].map((entry) => entry.message);
    worker?.terminate();
    worker = null;
    queued = null;
    serves = false;
    if (to === 'waiting' || to === 'host') {
      role = to;
      host = null;
    } else {
      role = 'remote';
      host = to;
      // boot.js's worker, never told to start: another figure's core serves this one.
      const boot = globalThis.attnscopeBoot;
      boot?.worker?.terminate();
      if (boot) boot.worker = null;
    }
    gaveUp = false;
    ensure();
    // The model first, unless what is pending begins with building one; its replay is answered to
    // no one (an id no call waits for).
    if (lastBuilt && !sticky.includes(again[0]?.type)) post({ id: nextId++, type: lastBuilt.type, ...lastBuilt.body }, []);
    for (const message of again) post(message, []);
  }

  function heardTurns({ data }) {
    if (data.kind === 'granted') moveTo('host');
    if (data.kind === 'host') moveTo({ id: data.id, epoch: data.epoch });
    if (data.kind === 'lost') moveTo('waiting');
  }

  // The first worker: boot.js's, or one started now. A page that shares cores (an embed, where
  // boot.js asked which figure's core to use) waits for shareCores().
  if (!globalThis.attnscopeBoot?.sharesCores) start();
  return {
    call,
    busy: () => pending.size > 0,
    kept: () => Object.values(lastBuilt?.body ?? {}).reduce((sum, v) => sum + (v instanceof ArrayBuffer ? v.byteLength : 0), 0),
    cancel: () => restart(lastBuilt, Object.assign(new Error('Cancelled.'), { cancelled: true })),
    /**
     * Lets the worker go once it has had nothing to do for `ms` (an embed: a figure in a post sits
     * drawn, its tensors already on the page, while the reader reads). The next call starts a worker
     * again and replays the model (tools/bench/figures.mjs). A core that serves other figures stays.
     */
    releaseWhenIdle(ms) {
      idleMs = ms;
      idle();
    },
    /**
     * Shares one core with the other pages of this site that call it (a post's figures: turns.js
     * says which figure's worker it is), carrying on from what boot.js heard; where the browser has
     * no BroadcastChannel or cannot start the turns' worker, a worker of its own. shareCores(false):
     * this page shares none (boot.js asked for a figure), its worker starts now.
     */
    shareCores(on = true) {
      const boot = globalThis.attnscopeBoot;
      const asked = boot?.turns ?? null; // boot.js's ask: {worker, id, granted, host}
      if (boot) boot.turns = null;
      if (!on && asked) {
        // Not a figure after all: boot.js's worker waits for turns that will not come.
        asked.worker.terminate();
        boot.worker?.terminate();
        boot.worker = null;
      }
      if (!on || typeof BroadcastChannel !== 'function' || (worker && !asked)) {
        if (!worker && !queued) start();
        return;
      }
      try {
        turns = asked?.worker ?? new Worker(TURNS_URL);
      } catch {
        if (!worker && !queued) start(); // a worker of its own
        return;
      }
      me = asked?.id ?? me;
      turns.onmessage = heardTurns;
      if (!asked) turns.postMessage({ kind: 'ask', id: me });
      // A page that goes gives its place back at once (the others would drop it after 3 s), and
      // the core it used forgets its model.
      addEventListener('pagehide', () => {
        const channel = new BroadcastChannel('attnscope-core-turns');
        channel.postMessage({ kind: 'done', id: me });
        channel.close();
        turns?.terminate();
        if (role === 'remote') worker?.postMessage({ id: 0, type: 'bye' });
      });
      if (asked?.granted) moveTo('host');
      else if (asked?.host) moveTo(asked.host);
      else moveTo('waiting');
    },
    /** Whether the model is in the built-in model's shared core, rather than sent by the page (model_source.js). */
    sharesModels: () => role !== 'alone',
    /** Whether this page runs a worker of its own (false: let go while idle, waiting, or another figure's core). */
    live: () => worker !== null && role !== 'remote',
  };
}

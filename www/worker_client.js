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
// shareCores() makes the pages of this site that ask it (a post's figures) take turns: at most
// turns.js's CORES of them hold a worker at once (a list they keep over a BroadcastChannel, which
// same-origin frames of one post share), and an idle worker goes after WANTED_IDLE_MS, rather than
// after its idle time, when another page waits.
// The first worker is the one boot.js started for the same address, where it did (its core already
// downloading while the page's modules load).

// How long a worker another figure waits for stays idle before it goes: a view's requests come in
// bursts, a few milliseconds of drawing apart, and a worker let go between two of them would be
// started again, its model replayed, at the back of the turns.
const WANTED_IDLE_MS = 100;
const TURNS_URL = new URL('./turns.js', import.meta.url);

export function workerClient(url, { sticky = ['session', 'checkpoint'], trapped = ({ panic, error }) => panic ?? error } = {}) {
  const pending = new Map();
  let nextId = 1;
  let dead = null;
  let worker = null; // null: let go while idle (releaseWhenIdle); the next call starts another
  let lastBuilt = null; // the last sticky message the worker answered with a model (its buffers given back)
  let idleMs = 0;
  let idleTimer = 0;
  let sharing = false; // shareCores(): this page takes turns for a core with the site's other sharing pages
  let core = null; // while this page holds one of them: the function that gives it back
  let queued = null; // while this page waits for one: the messages to post once it has it, in order
  let wanted = false; // another page waits for a core: an idle worker goes at once

  // An idle worker let go (releaseWhenIdle): its core, its WebAssembly memory and its model go, and
  // the next call starts a fresh worker and replays the model into it first, as cancel() does.
  function release() {
    if (dead || !worker || pending.size > 0 || !lastBuilt) return;
    worker.terminate();
    worker = null;
    wanted = false;
    giveBack();
  }
  function idle() {
    clearTimeout(idleTimer);
    if (idleMs > 0 && pending.size === 0) idleTimer = setTimeout(release, wanted ? Math.min(idleMs, WANTED_IDLE_MS) : idleMs);
  }
  function giveBack() {
    core?.();
    core = null;
  }

  // This page's place in the turns a post's figures take for cores, kept by a worker of its own
  // (turns.js), whose thread answers the others at once while this one is busy loading or drawing.
  let turns = null;
  let granted = null; // resolves the turn awaited once it comes
  let me = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  // A core given back: said to the others from here, and the turns' worker goes until the next ask
  // (an idle figure holds no thread for its turns).
  function leaveTurns() {
    const channel = new BroadcastChannel('attnscope-cores');
    channel.postMessage({ kind: 'done', id: me });
    channel.close();
    turns?.terminate();
    turns = null;
  }
  const turnComes = () => new Promise((resolve) => (granted = () => resolve(leaveTurns)));
  function takeCore() {
    if (!turns) {
      try {
        turns = new Worker(TURNS_URL);
      } catch {
        return Promise.resolve(() => {}); // no turns, no limit
      }
      turns.onmessage = heardTurns;
    }
    turns.postMessage({ kind: 'ask', id: me });
    return turnComes();
  }
  function heardTurns({ data }) {
    if (data.kind === 'granted') {
      const resolve = granted;
      granted = null;
      resolve?.();
    }
    // Another figure waits: an idle worker here goes soon.
    if (data.kind === 'wanted' && core) {
      wanted = true;
      idle();
    }
  }

  // A worker for the next message: started now, or, sharing cores, once this page holds one (`turn`:
  // a turn already asked for).
  function ensure(turn = null) {
    if (worker || queued) return;
    if (!sharing || core) return start();
    queued = [];
    (turn ?? takeCore()).then((done) => {
      core = done;
      const messages = queued;
      queued = null;
      start();
      for (const [message, transfer] of messages) worker.postMessage(message, transfer);
    });
  }
  function post(message, transfer) {
    if (queued) queued.push([message, transfer]);
    else worker.postMessage(message, transfer);
  }

  function start() {
    dead = null;
    const boot = globalThis.attnscopeBoot;
    if (boot?.worker && boot.workerUrl === String(url)) {
      worker = boot.worker;
      boot.worker = null;
      if (boot.workerError) dead = new Error(`The worker stopped: ${boot.workerError}.`);
    } else worker = new Worker(url, { type: 'module' });
    worker.onmessage = ({ data }) => {
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
    };
    worker.onerror = (event) => {
      event.preventDefault();
      dead = new Error(`The worker stopped: ${event.message || 'its script could not be loaded'}.`);
      rejectAll(dead);
      giveBack();
    };
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
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, onProgress, type, body });
      post({ id, type, ...body }, transfer);
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

  // The first worker: boot.js's, or one started now. A page that shares cores (an embed, where
  // boot.js starts its worker once its turn comes) waits for shareCores().
  if (globalThis.attnscopeBoot?.worker || !globalThis.attnscopeBoot?.sharesCores) start();
  return {
    call,
    busy: () => pending.size > 0,
    kept: () => Object.values(lastBuilt?.body ?? {}).reduce((sum, v) => sum + (v instanceof ArrayBuffer ? v.byteLength : 0), 0),
    cancel: () => restart(lastBuilt, Object.assign(new Error('Cancelled.'), { cancelled: true })),
    /**
     * Lets the worker go once it has had nothing to do for `ms` (an embed: a figure in a post sits
     * drawn, its tensors already on the page, while the reader reads; five figures need not hold five
     * cores). The next call starts a worker again and replays the model (tools/bench/figures.mjs).
     */
    releaseWhenIdle(ms) {
      idleMs = ms;
      idle();
    },
    /**
     * Takes turns for a worker with the other pages of this site that call it (a post's figures;
     * turns.js says how many hold one at once), carrying on the turn boot.js asked for; where the
     * browser has no BroadcastChannel or cannot start the turns' worker, no limit. shareCores(false):
     * this page takes no turns (boot.js took it for a figure), its worker starts now.
     */
    shareCores(on = true) {
      const boot = globalThis.attnscopeBoot;
      const asked = boot?.turns ?? null; // boot.js's turn: {worker, id, granted, wanted}
      if (boot) boot.turns = null;
      if (!on) asked?.worker.terminate(); // not a figure after all: no turns
      if (!on || typeof BroadcastChannel !== 'function' || (worker && !asked)) {
        if (!worker && !queued) start();
        return;
      }
      try {
        turns = asked?.worker ?? new Worker(TURNS_URL);
      } catch {
        if (!worker && !queued) start(); // no turns, no limit
        return;
      }
      sharing = true;
      me = asked?.id ?? me;
      turns.onmessage = heardTurns;
      // A page that goes gives its core back, or its place in the list, at once (its turns worker
      // goes with it; the others would drop its place after 3 s).
      addEventListener('pagehide', () => turns && leaveTurns());
      if (asked?.granted) {
        core = leaveTurns;
        wanted = asked.wanted;
        if (!worker) start(); // boot.js's, started when its turn came
      } else if (asked) ensure(turnComes());
      else ensure();
    },
    /** Whether a worker is running (false: let go while idle or waiting for a core). */
    live: () => worker !== null,
  };
}

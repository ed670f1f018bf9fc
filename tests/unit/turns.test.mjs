// www/turns.js, which of a post's figures holds the core they share, run as each figure's worker
// would run it (a context of its own) over BroadcastChannels that the test can cut: figures that
// hear each other agree on one core; two figures granted at once, on a machine too busy for them
// to hear each other in time, end with one core, the later giving way to the earlier.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import vm from 'node:vm';

const SOURCE = readFileSync(new URL('../../www/turns.js', import.meta.url), 'utf8');
const wait = (ms) => new Promise((r) => setTimeout(r, ms));

// BroadcastChannels by name; a cut post delivers only within one figure.
function post() {
  const channels = new Map();
  const net = { connected: true };
  class Channel {
    constructor(name, owner) {
      Object.assign(this, { name, owner, onmessage: null });
      if (!channels.has(name)) channels.set(name, new Set());
      channels.get(name).add(this);
    }
    postMessage(data) {
      for (const other of channels.get(this.name)) if (other !== this && (net.connected || other.owner === this.owner)) setTimeout(() => other.onmessage?.({ data: structuredClone(data) }), 1);
    }
    close() {}
  }
  // A figure: turns.js in a context of its own; what it told its page, in order (copied out of the
  // context, as a page receives it).
  function figure(owner) {
    const told = [];
    const context = { performance, setTimeout, clearTimeout, setInterval, clearInterval, postMessage: (m) => told.push(JSON.parse(JSON.stringify(m))), BroadcastChannel: class extends Channel { constructor(name) { super(name, owner); } } };
    vm.createContext(context);
    vm.runInContext(SOURCE, context);
    return { told, ask: () => context.onmessage({ data: { kind: 'ask', id: owner } }), done: () => context.onmessage({ data: { kind: 'done' } }) };
  }
  // What a figure's worker says once it serves as the core (worker.js serve).
  const core = (id, epoch) => new Channel('attnscope-core-news', id).postMessage({ kind: 'core', id, epoch });
  return { net, figure, core };
}

test('figures that hear each other agree on one core, and the others follow it', async () => {
  const { figure, core } = post();
  const [a, b, c] = ['a', 'b', 'c'].map(figure);
  a.ask();
  await wait(5);
  b.ask();
  c.ask();
  await wait(250);
  assert.deepEqual([a.told, b.told, c.told].map((t) => t.map((m) => m.kind)), [['granted'], [], []]);
  core('a', 'e1');
  await wait(20);
  for (const f of [b, c]) assert.deepEqual(f.told, [{ kind: 'host', id: 'a', epoch: 'e1' }]);
  // Its worker replaced (a trap): the followers hear the new epoch, and send their models again.
  core('a', 'e2');
  await wait(20);
  assert.deepEqual(b.told.at(-1), { kind: 'host', id: 'a', epoch: 'e2' });
  // The core's figure leaves: the followers ask again, and one of them is granted.
  a.done();
  await wait(250);
  assert.deepEqual([b.told.at(-2), b.told.at(-1)].map((m) => m.kind), ['lost', 'granted']);
  assert.deepEqual(c.told.at(-1).kind, 'lost');
  for (const f of [b, c]) f.done();
});

test('two figures granted at once end with one core: the later gives way to the earlier', async () => {
  const { net, figure, core } = post();
  net.connected = false;
  const [a, b] = ['a', 'b'].map(figure);
  a.ask();
  await wait(5);
  b.ask();
  await wait(250);
  assert.deepEqual([a.told, b.told].map((t) => t.map((m) => m.kind)), [['granted'], ['granted']]);
  net.connected = true;
  core('b', 'eb');
  core('a', 'ea');
  // Within a beat each hears the other's place, and b, which asked later, follows a.
  await wait(1500);
  assert.deepEqual(a.told, [{ kind: 'granted' }]);
  assert.deepEqual(b.told.at(-1), { kind: 'host', id: 'a', epoch: 'ea' });
  for (const f of [a, b]) f.done();
});

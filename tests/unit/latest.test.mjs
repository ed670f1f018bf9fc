// www/page/latest.js, the page's one staleness guard: which requests are dropped (aborted) and which
// still speak, for each way a request ends.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { latest } from '../../www/page/latest.js';

test('a new request aborts the one before, and only that one', () => {
  const updates = latest();
  const first = updates.start();
  const second = updates.start();
  assert.equal(first.aborted, true);
  assert.equal(second.aborted, false);
  const third = updates.start();
  assert.equal(second.aborted, true);
  assert.equal(third.aborted, false);
});

test('abort() drops the request under way, and the next one starts live', () => {
  const updates = latest();
  updates.abort(); // nothing under way: nothing happens
  const first = updates.start();
  updates.abort();
  assert.equal(first.aborted, true);
  assert.equal(updates.start().aborted, false);
});

test('two kinds of request do not drop each other', () => {
  const runs = latest();
  const loads = latest();
  const run = runs.start();
  loads.start();
  loads.abort();
  assert.equal(run.aborted, false);
});

test('current() joins the latest request: dropped with it, never dropping it', () => {
  const updates = latest();
  const update = updates.start();
  const joined = updates.current();
  assert.equal(update.aborted, false, 'joining does not supersede');
  assert.equal(joined, update);
  updates.start();
  assert.equal(joined.aborted, true, 'a newer request drops the work that joined the old one');
});

test('current() with nothing under way is live until the next start() or abort()', () => {
  const updates = latest();
  const before = updates.current();
  assert.equal(before.aborted, false);
  assert.equal(updates.current(), before, 'the same request until something changes');
  updates.start();
  assert.equal(before.aborted, true);
  updates.abort();
  const after = updates.current();
  assert.equal(after.aborted, false, 'after abort(), work that joins starts afresh');
  updates.abort();
  assert.equal(after.aborted, true);
});

test('a signal is an AbortSignal: it can be handed to what accepts one', async () => {
  const loads = latest();
  const signal = loads.start();
  assert.ok(signal instanceof AbortSignal);
  const aborted = new Promise((resolve) => signal.addEventListener('abort', resolve));
  loads.start();
  await aborted;
});

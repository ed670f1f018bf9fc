// The window a long attention map is read through (www/parts/map_window.js): which rows and keys it
// holds around the followed query, the first key pinned, the cells sliced from the run's numbers,
// whole-row sums, and the overview's frame around the window.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WINDOW, blockCentre, overview, wholeRowSums, windowAt, windowCells } from '../../www/parts/map_window.js';

test('the window centres on the followed query, its keys ending at the last row, key 0 pinned', () => {
  const w = windowAt({ T: 1000, S: 1000, query: 500 });
  assert.deepEqual([w.r0, w.r1], [500 - WINDOW / 2, 500 + WINDOW / 2]);
  assert.equal(w.cols.length, WINDOW);
  assert.equal(w.cols[0], 0);
  assert.ok(w.pinned);
  assert.equal(w.cols.at(-1), w.r1 - 1, 'the last key shown is the last row’s own');
  assert.deepEqual(w.cols.slice(1), Array.from({ length: WINDOW - 1 }, (_, k) => w.r1 - WINDOW + 1 + k));
});

test('without a query the window holds the last rows; at the start nothing is pinned', () => {
  const end = windowAt({ T: 300, S: 300, query: null });
  assert.deepEqual([end.r0, end.r1], [300 - WINDOW, 300]);
  const start = windowAt({ T: 300, S: 300, query: 3 });
  assert.deepEqual([start.r0, start.r1], [0, WINDOW]);
  assert.equal(start.pinned, false);
  assert.deepEqual(start.cols, Array.from({ length: WINDOW }, (_, k) => k));
});

test('a KV-cache prefix shifts the keys; keyAt centres them; they never run past S', () => {
  const w = windowAt({ T: 100, S: 130, query: 99 });
  assert.equal(w.cols.at(-1), 129);
  const k = windowAt({ T: 200, S: 200, query: 150, keyAt: 20 });
  assert.ok(k.cols.includes(20) && !k.cols.includes(100));
  const late = windowAt({ T: 200, S: 200, query: 150, keyAt: 199 });
  assert.equal(late.cols.at(-1), 199);
});

test('the window’s cells are the run’s numbers at its rows and keys; sums are over whole rows', () => {
  const T = 100;
  const data = Float32Array.from({ length: T * T }, (_, n) => n);
  const w = windowAt({ T, S: T, query: 80 });
  const cells = windowCells(data, T, w);
  assert.equal(cells.length, (w.r1 - w.r0) * w.cols.length);
  for (const [i, k] of [[0, 0], [3, 5], [w.r1 - w.r0 - 1, w.cols.length - 1]]) assert.equal(cells[i * w.cols.length + k], (w.r0 + i) * T + w.cols[k]);
  const probs = new Float32Array(T * T).fill(-Infinity);
  for (let r = 0; r < T; r++) for (let j = 0; j <= r; j++) probs[r * T + j] = 1 / (r + 1);
  for (const s of wholeRowSums(probs, T, w)) assert.ok(Math.abs(s - 1) < 1e-5, `row sum ${s}`);
});

test('the overview frames the window, and a click on a block gives its middle row and key', () => {
  const T = 1000;
  const data = new Float32Array(T * T);
  const w = windowAt({ T, S: T, query: 600 });
  const { pooled, frame } = overview(data, T, T, w);
  assert.ok(pooled.rows <= 160 && pooled.cols <= 160);
  assert.ok(pooled.rowStart[frame.r] <= w.r0 && pooled.rowStart[frame.r + frame.rows] >= w.r1);
  assert.ok(pooled.colStart[frame.c] <= w.cols[1] && pooled.colStart[frame.c + frame.cols] > w.cols.at(-1));
  const { row, key } = blockCentre(pooled, frame.r, frame.c);
  assert.ok(row >= pooled.rowStart[frame.r] && row < pooled.rowStart[frame.r + 1]);
  assert.ok(key >= pooled.colStart[frame.c] && key < pooled.colStart[frame.c + 1]);
});

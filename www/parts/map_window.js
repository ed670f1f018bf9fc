// A long input's attention map, read through a window. Past LONG query rows a whole T x S map
// cannot keep its labels readable (1,076 tokens at 10 px a cell is a 10,760 px square of 9 px
// labels), so the attention map shows WINDOW rows around the followed query (the last token when
// none is followed) over the keys of the same stretch, with the first key pinned at the left (most
// heads keep weight there, far from the window), and beside it the whole map max-pooled
// (parts/pool.js) with the window framed: a click there moves the window. Numbers in the window are
// the run's own, sliced; the overview's cells are each block's largest entry.

import { maxPool } from './pool.js';

/** A map with more query rows than this is read through a window. */
export const LONG = 64;
/** Rows (and keys) a window shows. */
export const WINDOW = 48;
/** The overview's largest side, in blocks. */
export const OVERVIEW = 160;

/**
 * The window over a T x S map (S − T keys before the first query row: a KV-cache prefix) around
 * query row `query` (null: the last row), its keys centred on key `keyAt` when given (a click on
 * the overview), else ending at the window's last row's own key. {r0, r1, cols}: rows [r0, r1), and
 * the keys shown, in order, key 0 pinned first where the run of keys starts later (then `pinned`).
 */
export function windowAt({ T, S, query = null, keyAt = null, size = WINDOW }) {
  const rows = Math.min(size, T);
  const q = query ?? T - 1;
  const r0 = clamp(q - Math.floor(rows / 2), 0, T - rows);
  const r1 = r0 + rows;
  const run = Math.min(size, S);
  const end = keyAt === null ? r1 + (S - T) : keyAt + Math.ceil(run / 2);
  const c0 = clamp(end - run, 0, S - run);
  const cols = [];
  const pinned = c0 > 0;
  if (pinned) cols.push(0);
  for (let c = pinned ? c0 + 1 : c0; c < c0 + run; c++) cols.push(c);
  return { r0, r1, cols, pinned };
}

/** The window's cells of a T x S row-major map `data`: [r1 − r0, cols.length], row-major. */
export function windowCells(data, S, { r0, r1, cols }) {
  const out = new Float32Array((r1 - r0) * cols.length);
  for (let r = r0; r < r1; r++) {
    const line = data.subarray(r * S, (r + 1) * S);
    const at = (r - r0) * cols.length;
    for (let k = 0; k < cols.length; k++) out[at + k] = line[cols[k]];
  }
  return out;
}

/** Each row's sum of its unmasked entries over all S keys (1 for a softmax row), rows [r0, r1). */
export function wholeRowSums(data, S, { r0, r1 }) {
  const sums = [];
  for (let r = r0; r < r1; r++) {
    let s = 0;
    for (let j = 0; j < S; j++) {
      const v = data[r * S + j];
      if (Number.isFinite(v) && v > -1e8) s += v;
    }
    sums.push(s);
  }
  return sums;
}

/**
 * The whole map pooled to at most OVERVIEW blocks a side, with the window's frame in blocks:
 * {pooled (maxPool's result), frame: {r, c, rows, cols}} (the frame covers the window's run of
 * keys, not the pinned first key).
 */
export function overview(data, T, S, win, rowMask = null) {
  const pooled = maxPool(data, T, S, OVERVIEW, OVERVIEW, rowMask);
  const block = (starts, i) => {
    let b = 0;
    while (b + 1 < starts.length - 1 && starts[b + 1] <= i) b++;
    return b;
  };
  const first = win.cols[win.pinned ? 1 : 0];
  const last = win.cols[win.cols.length - 1];
  const r = block(pooled.rowStart, win.r0);
  const c = block(pooled.colStart, first);
  const frame = { r, c, rows: block(pooled.rowStart, win.r1 - 1) - r + 1, cols: block(pooled.colStart, last) - c + 1 };
  return { pooled, frame };
}

const clamp = (v, lo, hi) => (v < lo ? lo : v > hi ? hi : v);

/** The middle row and key of an overview block (a click there): {row, key}. */
export function blockCentre(pooled, pr, pc) {
  const mid = (starts, b) => Math.floor((starts[b] + starts[b + 1] - 1) / 2);
  return { row: mid(pooled.rowStart, pr), key: mid(pooled.colStart, pc) };
}

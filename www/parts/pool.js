// Max pooling of a rows x cols matrix into at most outRows x outCols blocks, so a long input fits a
// picture of fixed size: a cell below one pixel would otherwise be dropped or blended away, and a
// thin pattern (one weight per row on a diagonal) must stay visible in an overview. Masked entries
// (-∞, -1e9) are the smallest values, so a block shows its largest real entry and is masked only when
// all of it is. A padded query row stays marked only when its whole block is padding.

// Block b covers [start[b], start[b + 1]) of n, for outN = min(n, size) blocks of near-equal length.
export function blocks(n, size) {
  const outN = Math.min(n, size);
  const start = new Int32Array(outN + 1);
  for (let b = 0; b <= outN; b++) start[b] = Math.round((b * n) / outN);
  return start;
}

// {data, rows, cols, rowStart, colStart, rowMask}: the pooled matrix and where each block came from.
export function maxPool(data, rows, cols, outRows, outCols, rowMask = null) {
  const rowStart = blocks(rows, outRows);
  const colStart = blocks(cols, outCols);
  const pr = rowStart.length - 1;
  const pc = colStart.length - 1;
  const out = new Float32Array(pr * pc).fill(-Infinity);
  // Each column's block, so the inner loop is one pass along a row.
  const colBlock = new Int32Array(cols);
  for (let b = 0; b < pc; b++) colBlock.fill(b, colStart[b], colStart[b + 1]);
  for (let b = 0; b < pr; b++) {
    const line = out.subarray(b * pc, (b + 1) * pc);
    for (let r = rowStart[b]; r < rowStart[b + 1]; r++) {
      const src = data.subarray(r * cols, (r + 1) * cols);
      for (let k = 0; k < cols; k++) {
        const v = src[k];
        const c = colBlock[k];
        if (v > line[c]) line[c] = v;
      }
    }
  }
  const mask = rowMask && Array.from({ length: pr }, (_, b) => (rowMask.slice(rowStart[b], rowStart[b + 1]).some((m) => m) ? 1 : 0));
  return { data: out, rows: pr, cols: pc, rowStart, colStart, rowMask: mask };
}

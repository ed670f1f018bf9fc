// The trace contract's comparison with a reference (docs/trace-contract.md, "Tolerance"), for the
// numbers the page computes: every entry within atol + rtol·|ref| of the reference, and, as the rule
// before entries were checked one by one said, within ofLargest·max|ref| of the tensor. tests/common
// (Rust) holds the same rule and the same numbers for the wasm32 build; the page runs that build.
import { appendFileSync } from 'node:fs';
import { AssertionError } from 'node:assert';

/** The page (the wasm32 build in Chromium) against PyTorch's and transformers' fixtures. */
export const WASM_VS_PYTORCH = Object.freeze({ name: 'wasm vs PyTorch', rtol: 1e-5, atol: 2e-5, ofLargest: 2e-4 });

/**
 * The worst entry of `ours` against `reference` under `tol`: {what, ratio, index, ours, reference,
 * allowed}, ratio being |ours − ref| over what is allowed there (at most 1 passes); a NaN, or an
 * entry -inf on one side only, is ratio Infinity. ATTNSCOPE_TOLERANCE_LOG=FILE appends one line per
 * call to find a tolerance by (the worst ratio, the old rule's measure, the entries that decide it).
 */
export function closeness(tol, what, ours, reference) {
  if (ours.length !== reference.length) throw new AssertionError({ message: `${what}: ${ours.length} entries against the reference’s ${reference.length}` });
  let scale = 0;
  let worstDiff = 0;
  for (const b of reference) if (Number.isFinite(b)) scale = Math.max(scale, Math.abs(b));
  let worst = { what, ratio: 0, index: -1, ours: NaN, reference: NaN, allowed: 0 };
  const points = [];
  for (let i = 0; i < reference.length; i++) {
    const a = ours[i];
    const b = reference[i];
    let ratio;
    let allowed = 0;
    if (Number.isNaN(a) || Number.isNaN(b)) ratio = Infinity;
    else if (a === -Infinity || b === -Infinity) ratio = a === b ? 0 : Infinity;
    else {
      const diff = Math.abs(a - b);
      worstDiff = Math.max(worstDiff, diff);
      if (diff > 0) points.push([Math.abs(b), diff]);
      allowed = Math.min(tol.atol + tol.rtol * Math.abs(b), tol.ofLargest * scale);
      ratio = diff === 0 ? 0 : allowed > 0 ? diff / allowed : Infinity;
    }
    if (ratio > worst.ratio || worst.index < 0) worst = { what, ratio, index: i, ours: a, reference: b, allowed };
  }
  if (process.env.ATTNSCOPE_TOLERANCE_LOG) {
    // The entries no other outdoes (a smaller |ref| and a larger |diff|), as tests/common logs them.
    points.sort((p, q) => p[0] - q[0] || q[1] - p[1]);
    let most = 0;
    const frontier = [];
    for (const [m, d] of points) {
      if (d <= most) continue;
      most = d;
      frontier.push(`${m.toExponential(3)}:${d.toExponential(3)}`);
    }
    const line = [tol.name, what, `ratio ${worst.ratio.toExponential(3)}`, `old ${(worstDiff / Math.max(scale, 1e-30)).toExponential(3)}`, `max|ref| ${scale.toExponential(3)}`, frontier.join(' ')];
    appendFileSync(process.env.ATTNSCOPE_TOLERANCE_LOG, `${line.join('\t')}\n`);
  }
  return worst;
}

/** closeness, failing with the worst entry (what, index, both values, the allowance) when it is over. */
export function assertClose(tol, what, ours, reference) {
  const w = closeness(tol, what, ours, reference);
  if (!(w.ratio <= 1)) {
    const rule = `${tol.name}: ${tol.atol} + ${tol.rtol}·|ref|, at most ${tol.ofLargest}·max|ref|`;
    throw new AssertionError({ message: `${what}: entry ${w.index} is ${w.ours}, the reference ${w.reference}: |diff| ${Math.abs(w.ours - w.reference).toExponential(3)} over the ${w.allowed.toExponential(3)} allowed (${rule}), ${w.ratio.toFixed(2)}×` });
  }
  return w;
}

//! The wasm32 kernel: C = X · W^T with W packed in panels of `NR` = 12 output columns (three v128).

use core::arch::wasm32::*;

use std::mem::MaybeUninit;

use ndarray::{Array2, ArrayView2};

use super::panels::{Panels, Tile};

/// v128 per panel row.
const V: usize = 3;
/// Output columns per panel.
pub const NR: usize = 4 * V;

/// Rows of x per micro-kernel call: MR x V = 9 accumulators, V panel vectors, a broadcast x and a
/// product temporary (without FMA) stay within V8's 15 allocatable xmm registers, and 9 independent
/// multiply-adds per step cover the FMA's latency on two ports (4 x 8 had 8, just enough; this tile
/// takes 0.93-0.96x its forward time in the page; 4 x 12, 5 x 8 and 6 x 8 spill or measured slower:
/// BENCHMARKS.md section 4).
const MR: usize = 3;
/// Inner-dimension block: one panel slice (KC x NR f32 = 12 KiB) stays in L1 while the rows of
/// x stream past it.
const KC: usize = 256;
/// Rows of x per pass over the panels, a multiple of MR: their KC-long slices (192 KiB) stay in L2
/// while every panel of W goes by. Each pass streams all of W from memory, which for the 6400 x 768
/// output weight (19.7 MB) is what costs: at T = 128 one pass rather than three takes the output
/// matmul from 39 to 45 GFLOP/s and the four matmul shapes together to 0.93x their time (48 rows
/// before; BENCHMARKS.md section 4). With the c block below, 372 KiB: within a 512 KiB L2.
const MC: usize = 192;
/// Output columns per block, a multiple of NR: the block's MC x NC cells of c (180 KiB) stay in L2
/// across the k blocks, rather than leaving for L3 between them when a row of c is long (2432 or
/// 6400 columns): 0.89-0.93x the forward's time at T = 128 on AMD Zen 3 (BENCHMARKS.md section 4).
const NC: usize = 240;

/// a * b + c, lane by lane: one fused `f32x4.relaxed_madd` in the relaxed-simd build (which
/// rounds once where the CPU has FMA, twice where it has not: both are within the contract).
#[cfg(feature = "relaxed-simd")]
#[target_feature(enable = "relaxed-simd")]
#[inline]
fn madd(a: v128, b: v128, c: v128) -> v128 {
    f32x4_relaxed_madd(a, b, c)
}

#[cfg(not(feature = "relaxed-simd"))]
#[inline(always)]
fn madd(a: v128, b: v128, c: v128) -> v128 {
    f32x4_add(f32x4_mul(a, b), c)
}

/// x: [M, k] -> [M, n]. The output is not zeroed first: the first k block stores every cell
/// (its tiles cover all M rows and every panel's columns), the later blocks add to them.
pub fn linear(x: ArrayView2<f32>, w: &Panels<NR>) -> Array2<f32> {
    // SAFETY: `rows_of` stores every cell of its rows (the note at its end says how).
    unsafe { w.product(x, MR, rows_of) }
}

/// The `m` rows of c (row-major [m, n]) from the `m` rows of x ([m, k] row-major) by the panels:
/// every cell is stored.
fn rows_of(xs: &[f32], m: usize, w: &Panels<NR>, cs: &mut [MaybeUninit<f32>]) {
    let (n, k) = (w.n, w.k);
    for i0 in (0..m).step_by(MC) {
        let rows_here = MC.min(m - i0);
        for j0 in (0..n).step_by(NC) {
            for k0 in (0..k).step_by(KC) {
                let kc = KC.min(k - k0);
                for j in (j0..n.min(j0 + NC)).step_by(NR) {
                    let panel = &w.data()[j * k + k0 * NR..][..kc * NR];
                    let cols = NR.min(n - j);
                    let mut i = i0;
                    while i < i0 + rows_here {
                        let rows = MR.min(i0 + rows_here - i);
                        let tile = Tile { x: &xs[i * k + k0..], k, panel, kc, c: &mut cs[i * n + j..], n, cols, first: k0 == 0 };
                        match rows {
                            3 => tile.run::<3>(),
                            2 => tile.run::<2>(),
                            _ => tile.run::<1>(),
                        }
                        i += rows;
                    }
                }
            }
        }
    }
    // In every block of rows (i0 over 0..m by MC) and columns (j0 over 0..n by NC) the k0 = 0 pass
    // ran a tile on every row (i over the block by at most MR) and every panel (j over the block by
    // NR), each storing its `cols` columns of its rows: all of [m, n].
}

impl Tile<'_> {
    // With relaxed-simd the micro-kernel carries the feature, so that `madd` inlines into it.
    #[cfg_attr(feature = "relaxed-simd", target_feature(enable = "relaxed-simd"))]
    #[cfg_attr(not(feature = "relaxed-simd"), inline(always))]
    fn run<const R: usize>(self) {
        assert!(self.panel.len() >= self.kc * NR && self.x.len() >= (R - 1) * self.k + self.kc);
        assert!(self.c.len() >= (R - 1) * self.n + self.cols);
        let mut acc = [[f32x4_splat(0.0); V]; R];
        let (xp, bp) = (self.x.as_ptr(), self.panel.as_ptr());
        for kk in 0..self.kc {
            // SAFETY: kk < kc, so the panel reads stay in panel[..kc*NR] and the x reads at
            // r*k + kk stay in x[..(R-1)*k + kc], both checked above; v128 loads need no alignment.
            unsafe {
                let mut b = [f32x4_splat(0.0); V];
                for (v, b) in b.iter_mut().enumerate() {
                    *b = v128_load(bp.add(kk * NR + 4 * v) as *const v128);
                }
                for (r, acc) in acc.iter_mut().enumerate() {
                    let a = v128_load32_splat(xp.add(r * self.k + kk) as *const u32);
                    for (acc, &b) in acc.iter_mut().zip(&b) {
                        *acc = madd(a, b, *acc);
                    }
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            let row = &mut self.c[r * self.n..][..self.cols];
            if self.cols == NR {
                // A whole panel's columns: the accumulators go to c as V vectors.
                // SAFETY: row holds NR = 4 * V f32 (MaybeUninit<f32> has f32's layout), V v128;
                // they are only read after the first k block stored them; v128 loads and stores
                // need no alignment.
                unsafe {
                    let p = row.as_mut_ptr() as *mut v128;
                    for (v, &acc) in acc.iter().enumerate() {
                        let sum = if self.first { acc } else { f32x4_add(v128_load(p.add(v)), acc) };
                        v128_store(p.add(v), sum);
                    }
                }
                continue;
            }
            let mut sum = [0.0f32; NR];
            // SAFETY: sum is NR = 4 * V f32, V v128 stores fill it.
            unsafe {
                for (v, &acc) in acc.iter().enumerate() {
                    v128_store(sum.as_mut_ptr().add(4 * v) as *mut v128, acc);
                }
            }
            if self.first {
                row.iter_mut().zip(sum).for_each(|(c, s)| {
                    c.write(s);
                });
            } else {
                // SAFETY: the first k block stored these cells.
                row.iter_mut().zip(sum).for_each(|(c, s)| unsafe { *c.assume_init_mut() += s });
            }
        }
    }
}

//! The native kernel on x86-64 CPUs with AVX-512F: C = X · W^T with W packed once, at load, in
//! panels of `NR` = 64 output columns (four zmm), so that no call repacks a weight (gemm packs its
//! right-hand side on every call). A 6-row x 64-column register tile: per step of the inner
//! dimension 4 panel loads, 6 broadcasts of x read in place, 24 fused multiply-adds into 24 zmm
//! accumulators. The tile shape, the blocks and reading x in place rather than packing it were
//! chosen by measurement (BENCHMARKS.md section 2). Where the CPU lacks AVX-512F, `Weight` holds the
//! weight for gemm instead.

use std::arch::x86_64::*;

use std::mem::MaybeUninit;

use ndarray::{Array2, ArrayView2};

use super::panels::{Panels, Tile, k_block, row_groups};

/// zmm per panel row.
const V: usize = 4;
/// Output columns per panel.
pub const NR: usize = 16 * V;
/// Rows of x per micro-kernel call: MR x V accumulators, V panel vectors and a broadcast in 32 zmm.
const MR: usize = 6;
/// Inner-dimension block: MR rows' KC-long slices of x (9 KiB) stay in L1 while NB panel slices go
/// by them.
const KC: usize = 384;
/// Panels per pass over the rows of x: their KC-long slices (NB x KC x NR f32 = 384 KiB) stay in
/// L2 while every group of MR rows goes by them all.
const NB: usize = 4;
/// Steps of the inner dimension ahead that a tile asks for its panel's lines (`prefetcht0`, 2 KiB
/// ahead). The slice comes from L2, or from L3 on its first pass, and the hardware's prefetchers
/// stop at every 4 KiB page: asking ahead took a MiniMind-3 layer at T = 128 to 0.92x its time on
/// an Intel Xeon (BENCHMARKS.md section 1). Past the slice's end the addresses are only hints.
const PF: usize = 8;

/// Whether this CPU runs the kernel (checked once by std, then a load).
pub fn available() -> bool {
    is_x86_feature_detected!("avx512f")
}

/// x: [M, k] -> [M, n]. The output is not zeroed first: the first k block stores every cell (its
/// tiles cover all M rows and every panel's columns), the later blocks add to them.
pub fn linear(x: ArrayView2<f32>, w: &Panels<NR>) -> Array2<f32> {
    assert!(available(), "the AVX-512 kernel on a CPU without AVX-512F");
    // SAFETY: `rows_of` stores every cell of its rows (the note at its end says how).
    unsafe { w.product(x, MR, rows_of) }
}

/// The `m` rows of c (row-major [m, n]) from the `m` rows of x ([m, k] row-major) by the panels:
/// every cell is stored. The CPU has AVX-512F (checked by `linear`).
fn rows_of(xs: &[f32], m: usize, w: &Panels<NR>, cs: &mut [MaybeUninit<f32>]) {
    let (n, k) = (w.n, w.k);
    let data = w.data();
    let panels = n.div_ceil(NR);
    let kb = k_block(k, KC);
    let groups = row_groups(m, MR);
    for k0 in (0..k).step_by(kb) {
        let kc = kb.min(k - k0);
        for p0 in (0..panels).step_by(NB) {
            for (g, rows) in groups.clone() {
                let x = &xs[g * k + k0..];
                for p in p0..panels.min(p0 + NB) {
                    let panel = &data[p * k * NR + k0 * NR..][..kc * NR];
                    let cols = NR.min(n - p * NR);
                    let tile = Tile { x, k, panel, kc, c: &mut cs[g * n + p * NR..], n, cols, first: k0 == 0 };
                    // SAFETY: `linear` checked available(), so the CPU has AVX-512F.
                    unsafe {
                        match rows {
                            MR => tile.run::<MR>(),
                            5 => tile.run::<5>(),
                            4 => tile.run::<4>(),
                            3 => tile.run::<3>(),
                            2 => tile.run::<2>(),
                            _ => tile.run::<1>(),
                        }
                    }
                }
            }
        }
    }
    // The k0 = 0 pass ran a tile on every group of rows (g over 0..m by MR) and every panel (p0
    // over the panels by NB, p over each block), each storing its `cols` columns of its rows: all
    // of [m, n].
}

impl Tile<'_> {
    /// # Safety
    /// The CPU must have AVX-512F.
    #[target_feature(enable = "avx512f")]
    unsafe fn run<const R: usize>(self) {
        assert!(self.x.len() >= (R - 1) * self.k + self.kc && self.panel.len() >= self.kc * NR);
        assert!(self.c.len() >= (R - 1) * self.n + self.cols);
        let mut acc = [[_mm512_setzero_ps(); V]; R];
        let (xp, bp) = (self.x.as_ptr(), self.panel.as_ptr());
        for kk in 0..self.kc {
            // SAFETY: kk < kc, so the panel reads stay in panel[..kc*NR] and the x reads at
            // r*k + kk in x[..(R-1)*k + kc], both checked above; the loads need no alignment.
            unsafe {
                // A prefetch reads nothing the program sees and never faults, so the address
                // may lie past the panel (wrapping_add: no promise that it is in bounds).
                for v in 0..V {
                    _mm_prefetch::<_MM_HINT_T0>(bp.wrapping_add((kk + PF) * NR + 16 * v) as *const i8);
                }
                let mut b = [_mm512_setzero_ps(); V];
                for (v, b) in b.iter_mut().enumerate() {
                    *b = _mm512_loadu_ps(bp.add(kk * NR + 16 * v));
                }
                for (r, acc) in acc.iter_mut().enumerate() {
                    let a = _mm512_set1_ps(*xp.add(r * self.k + kk));
                    for (acc, &b) in acc.iter_mut().zip(&b) {
                        *acc = _mm512_fmadd_ps(a, b, *acc);
                    }
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            for (v, &acc) in acc.iter().enumerate() {
                let real = self.cols.saturating_sub(16 * v).min(16);
                if real == 0 {
                    break; // past the last real column of a partial panel
                }
                // SAFETY: row r's cells r*n .. r*n + cols lie in c (checked above; MaybeUninit<f32>
                // has f32's layout): 16 whole lanes are written and read as one zmm, a partial
                // vector's through a mask that keeps every access to its real cells (a masked-off
                // lane is never touched). Cells are only read after the first k block stored them.
                unsafe {
                    let p = (self.c.as_mut_ptr().add(r * self.n) as *mut f32).add(16 * v);
                    if real == 16 {
                        let sum = if self.first { acc } else { _mm512_add_ps(_mm512_loadu_ps(p), acc) };
                        _mm512_storeu_ps(p, sum);
                    } else {
                        let mask = ((1u32 << real) - 1) as __mmask16;
                        let sum = if self.first { acc } else { _mm512_add_ps(_mm512_maskz_loadu_ps(mask, p), acc) };
                        _mm512_mask_storeu_ps(p, mask, sum);
                    }
                }
            }
        }
    }
}

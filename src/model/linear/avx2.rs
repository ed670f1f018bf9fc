//! The native kernel on x86-64 CPUs with AVX2 and FMA but no AVX-512F (AMD before Zen 4, Intel
//! client cores): C = X · W^T with W packed once, at load, in panels of `NR` = 16 output columns
//! (two ymm, one cache line per step of the inner dimension). A 6-row x 16-column register tile: per
//! step 2 panel loads, 6 broadcasts of x, 12 fused multiply-adds into 12 ymm accumulators (15 of the
//! 16 registers). Unlike the AVX-512 kernel it packs x, per block of rows, 6 rows interleaved, and it
//! keeps a block of c in L2 across the k blocks: reading x in place, or sweeping all of c per k
//! block, left it behind gemm on this kind of CPU (Zen 3's L1 is 32 KiB, its L2 512 KiB). Where the
//! CPU has neither kernel's features, `Weight` holds the weight for gemm instead. BENCHMARKS.md
//! section 1 has the measurements.

use std::arch::x86_64::*;

use std::mem::MaybeUninit;

use ndarray::{Array2, ArrayView2};

use super::panels::{Panels, Tile, k_block, row_groups};

/// Output columns per panel and tile: two ymm.
pub const NR: usize = 16;
/// Rows of x per micro-kernel call: MR x 2 accumulators, 2 panel vectors and a broadcast in 16 ymm.
const MR: usize = 6;
/// Inner-dimension block: a panel's KC-long slice (KC x 64 bytes, 24 KiB) stays in L1 while every
/// group of 6 rows of the block goes by it (192 and 256 measured slower on Zen 3).
const KC: usize = 384;
/// Rows of x per block, packed once for all of k: a block's KC-long slice (MC x KC x 4 bytes,
/// 198 KiB) stays in L2 while the panels go by it. 132 takes T = 128 in one block.
const MC: usize = 132;
/// Output columns per block: the block's MC x NC cells of c (132 KiB) stay in L2 across the k
/// blocks, rather than leaving for L3 between them when a row of c is longer (2432 columns).
const NC: usize = 256;
/// Steps of the inner dimension ahead that a tile asks for its panel's lines (`prefetcht0`, 2 KiB
/// ahead). The first group of rows meets each panel slice in L2 or L3, and the hardware's
/// prefetchers stop at every 4 KiB page. Measured on an Intel Xeon held to AVX2 (BENCHMARKS.md
/// section 1): +4-9 % on the layer's matmuls; 16 steps gained less, 64 no more, and asking for x's
/// next steps as well (from L2) lost some of it.
const PF: usize = 32;

/// Whether this CPU runs the kernel (checked once by std, then a load).
pub fn available() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

/// x: [M, k] -> [M, n]. The output is not zeroed first: the first k block stores every cell (its
/// tiles cover all M rows and every panel's columns), the later blocks add to them.
pub fn linear(x: ArrayView2<f32>, w: &Panels<NR>) -> Array2<f32> {
    assert!(available(), "the AVX2 kernel on a CPU without AVX2 and FMA");
    // SAFETY: `rows_of` stores every cell of its rows (the note at its end says how).
    unsafe { w.product(x, MR, rows_of) }
}

/// The `m` rows of c (row-major [m, n]) from the `m` rows of x ([m, k] row-major) by the panels:
/// every cell is stored. The CPU has AVX2 and FMA (checked by `linear`).
fn rows_of(xs: &[f32], m: usize, w: &Panels<NR>, cs: &mut [MaybeUninit<f32>]) {
    let (n, k) = (w.n, w.k);
    let data = w.data();
    let kb = k_block(k, KC);
    // x's rows g0..g0 + mc, k block by k block (at mc * k0), each as `pack_rows` lays it out
    let mut packed = vec![0.0f32; MC.min(m) * k];
    for g0 in (0..m).step_by(MC) {
        let mc = MC.min(m - g0);
        let groups = row_groups(mc, MR);
        for k0 in (0..k).step_by(kb) {
            pack_rows(&xs[g0 * k + k0..], k, groups.clone(), kb.min(k - k0), &mut packed[mc * k0..]);
        }
        for j0 in (0..n).step_by(NC) {
            for k0 in (0..k).step_by(kb) {
                let kc = kb.min(k - k0);
                for j in (j0..n.min(j0 + NC)).step_by(NR) {
                    let panel = &data[j * k + k0 * NR..][..kc * NR];
                    let cols = NR.min(n - j);
                    for (g, rows) in groups.clone() {
                        let x = &packed[mc * k0 + g * kc..][..kc * rows];
                        let tile = Tile { x, k: rows, panel, kc, c: &mut cs[(g0 + g) * n + j..], n, cols, first: k0 == 0 };
                        // SAFETY: `linear` checked available(), so the CPU has AVX2 and FMA.
                        unsafe {
                            match rows {
                                MR => run::<MR>(tile),
                                5 => run::<5>(tile),
                                4 => run::<4>(tile),
                                3 => run::<3>(tile),
                                2 => run::<2>(tile),
                                _ => run::<1>(tile),
                            }
                        }
                    }
                }
            }
        }
    }
    // In every block of rows and columns the k0 = 0 pass ran a tile on every group of rows (g over
    // 0..mc, `row_groups`) and every panel (j over the block by NR), each storing its `cols` columns
    // of its rows: all of [m, n] (g0 over 0..m by MC, j0 over 0..n by NC).
}

/// x's rows 0..mc, columns 0..kc (row stride k) into `packed` group by group, each group of R rows
/// kc steps of R numbers (x[g + r, kk] at g * kc + kk * R + r).
fn pack_rows(xs: &[f32], k: usize, groups: impl Iterator<Item = (usize, usize)>, kc: usize, packed: &mut [f32]) {
    for (g, rows) in groups {
        let group = &mut packed[g * kc..][..kc * rows];
        for r in 0..rows {
            let row = &xs[(g + r) * k..][..kc];
            for (kk, &x) in row.iter().enumerate() {
                group[kk * rows + r] = x;
            }
        }
    }
}

/// One tile: R rows of x (packed, R numbers per step; `t.k` is R) times a panel's slice, into R
/// rows of c.
///
/// # Safety
/// The CPU must have AVX2 and FMA.
#[target_feature(enable = "avx2,fma")]
unsafe fn run<const R: usize>(t: Tile<'_>) {
    assert!(t.k == R && t.kc > 0 && t.x.len() >= t.kc * R && t.panel.len() >= t.kc * NR);
    assert!(t.cols <= NR && t.c.len() >= (R - 1) * t.n + t.cols);
    let mut acc = [[_mm256_setzero_ps(); 2]; R];
    let (xp, bp) = (t.x.as_ptr(), t.panel.as_ptr());
    for kk in 0..t.kc {
        // SAFETY: kk < kc, so the panel reads at kk*NR .. kk*NR + 16 stay in panel[..kc*NR] and the
        // x reads at kk*R + r (r < R) in x[..kc*R], both checked above; the loads need no
        // alignment.
        unsafe {
            // A prefetch reads nothing the program sees and never faults, so the address may lie
            // past the panel (wrapping_add: no promise that it is in bounds).
            _mm_prefetch::<_MM_HINT_T0>(bp.wrapping_add((kk + PF) * NR) as *const i8);
            let b = [_mm256_loadu_ps(bp.add(kk * NR)), _mm256_loadu_ps(bp.add(kk * NR + 8))];
            for (r, acc) in acc.iter_mut().enumerate() {
                let a = _mm256_broadcast_ss(&*xp.add(kk * R + r));
                acc[0] = _mm256_fmadd_ps(a, b[0], acc[0]);
                acc[1] = _mm256_fmadd_ps(a, b[1], acc[1]);
            }
        }
    }
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (r, acc) in acc.iter().enumerate() {
        for (v, &acc) in acc.iter().enumerate() {
            let real = t.cols.saturating_sub(8 * v).min(8);
            if real == 0 {
                break; // past the last real column of a partial panel
            }
            // SAFETY: row r's cells r*n .. r*n + cols lie in c (checked above; MaybeUninit<f32> has
            // f32's layout): 8 whole lanes are written and read as one ymm, a partial vector's
            // through a mask that keeps every access to its real cells (a masked-off lane is never
            // touched). Cells are only read after the first k block stored them.
            unsafe {
                let p = (t.c.as_mut_ptr().add(r * t.n) as *mut f32).add(8 * v);
                if real == 8 {
                    let sum = if t.first { acc } else { _mm256_add_ps(_mm256_loadu_ps(p), acc) };
                    _mm256_storeu_ps(p, sum);
                } else {
                    let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(real as i32), lanes);
                    let sum = if t.first { acc } else { _mm256_add_ps(_mm256_maskload_ps(p, mask), acc) };
                    _mm256_maskstore_ps(p, mask, sum);
                }
            }
        }
    }
}

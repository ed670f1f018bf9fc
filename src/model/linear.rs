//! Every matrix product of the model goes through here: `linear` is `nn.Linear` without bias
//! (y = x W^T with W stored `[out, in]` as in the checkpoint), `matmul` serves attention's q·K^T and
//! probs·V.
//!
//! Natively every product is the `gemm` crate on one thread, picked over ndarray's `.dot`
//! (matrixmultiply) by measurement at MiniMind-3's shapes (BENCHMARKS.md, `cargo bench --bench layer
//! -- matmul`): about 2x with its AVX-512 kernels (the `x86-v4` feature; chosen at run time, AVX2
//! machines get its AVX2 kernels).
//!
//! In wasm32 every product runs this file's own simd128 kernel instead (module `wasm`): a weight
//! never changes, so `Weight` packs it once, at load, into the column panels the micro-kernel reads,
//! and the kernel is register-blocked for V8's 16 xmm registers. Built with the `relaxed-simd`
//! feature (build.sh's second wasm, www/pkg-relaxed) its multiply-add is `f32x4.relaxed_madd`, one
//! fused instruction where the CPU has FMA; the plain simd128 build multiplies and adds.
//! BENCHMARKS.md (sections 2 and 4) has the measurements.

use std::ops::Deref;

use gemm::{gemm, Parallelism};
use ndarray::{Array2, ArrayView2};

/// A linear layer's weight `[out, in]`, as the checkpoint has it (every reader of the raw numbers,
/// the GPU upload, the export and the views, sees it through `Deref`); in wasm32 also packed for the
/// kernel, once, when the weight is built.
#[derive(Clone, Debug)]
pub struct Weight {
    w: Array2<f32>,
    #[cfg(target_arch = "wasm32")]
    packed: Option<wasm::Packed>,
}

impl Weight {
    /// A weight `linear` multiplies by: packed in wasm32.
    pub fn new(w: Array2<f32>) -> Self {
        #[cfg(target_arch = "wasm32")]
        let packed = Some(wasm::Packed::new(w.view()));
        Weight {
            w,
            #[cfg(target_arch = "wasm32")]
            packed,
        }
    }

    /// A matrix that is only read by rows (an untied embedding table): nothing packed (`linear` by
    /// it would pack it per call).
    pub fn unpacked(w: Array2<f32>) -> Self {
        Weight {
            w,
            #[cfg(target_arch = "wasm32")]
            packed: None,
        }
    }
}

impl Deref for Weight {
    type Target = Array2<f32>;
    fn deref(&self) -> &Array2<f32> {
        &self.w
    }
}

impl PartialEq for Weight {
    /// The numbers decide; the packed copy follows from them.
    fn eq(&self, other: &Self) -> bool {
        self.w == other.w
    }
}

/// a: [M, K], b: [K, N] -> [M, N]. Any strides. In wasm32 b is packed for the kernel on each call
/// (K x N copies against M x K x N multiply-adds: attention's products have M = T rows).
pub fn matmul(a: ArrayView2<f32>, b: ArrayView2<f32>) -> Array2<f32> {
    assert_eq!(a.ncols(), b.nrows(), "matmul of {:?} by {:?}", a.dim(), b.dim());
    #[cfg(target_arch = "wasm32")]
    let c = wasm::linear(a, &wasm::Packed::new(b.t()));
    #[cfg(not(target_arch = "wasm32"))]
    let c = gemm_matmul(a, b);
    c
}

/// `matmul` through the `gemm` crate; transposed and sliced views are read in place.
pub fn gemm_matmul(a: ArrayView2<f32>, b: ArrayView2<f32>) -> Array2<f32> {
    let ((m, k), (k_b, n)) = (a.dim(), b.dim());
    assert_eq!(k, k_b, "matmul of [{m}, {k}] by [{k_b}, {n}]");
    let mut c = Array2::<f32>::zeros((m, n));
    if m == 0 || n == 0 || k == 0 {
        return c;
    }
    let (sa, sb) = (a.strides(), b.strides());
    // SAFETY: each pointer is the [0, 0] element of a live view whose strides are passed with it, so
    // every (row, col) the kernel forms stays inside that view; c is contiguous [m, n] and only written
    // (read_dst = false), and nothing else touches it meanwhile.
    unsafe {
        gemm(
            m, n, k,
            c.as_mut_ptr(), 1, n as isize, false, // dst: column stride, row stride, read_dst
            a.as_ptr(), sa[1], sa[0],
            b.as_ptr(), sb[1], sb[0],
            0.0, 1.0, // dst = 0 * dst + 1 * a b
            false, false, false,
            Parallelism::None,
        );
    }
    c
}

/// x: [N, in], w: [out, in] -> [N, out].
pub fn linear(x: ArrayView2<f32>, w: &Weight) -> Array2<f32> {
    #[cfg(target_arch = "wasm32")]
    if let Some(packed) = &w.packed {
        return wasm::linear(x, packed);
    }
    matmul(x, w.t())
}

/// The wasm32 kernel: C = X · W^T with W packed in panels of `NR` output columns.
#[cfg(target_arch = "wasm32")]
mod wasm {
    use core::arch::wasm32::*;

    use ndarray::{Array2, ArrayView2};

    /// Output columns per panel: two v128.
    const NR: usize = 8;
    /// Rows of x per micro-kernel call: MR x 2 accumulators, 2 panel vectors, a broadcast x and a
    /// product temporary (without FMA) stay within V8's 15 allocatable xmm registers; 6 rows measured
    /// slower (BENCHMARKS.md).
    const MR: usize = 4;
    /// Inner-dimension block: one panel slice (KC x NR f32 = 8 KiB) stays in L1 while the rows of
    /// x stream past it.
    const KC: usize = 256;
    /// Rows of x per pass over the panels: their KC-long slices (64 KiB) stay in L2 while every
    /// panel of W goes by.
    const MC: usize = 64;

    /// W `[n, k]` as panels: panel p holds `W[p*NR + j, kk]` at `p*k*NR + kk*NR + j`, the last panel
    /// zero-padded to NR columns.
    #[derive(Clone, Debug)]
    pub struct Packed {
        n: usize,
        k: usize,
        data: Vec<f32>,
    }

    impl Packed {
        pub fn new(w: ArrayView2<f32>) -> Self {
            let (n, k) = w.dim();
            let mut data = vec![0.0; n.div_ceil(NR) * k * NR];
            for (j, row) in w.outer_iter().enumerate() {
                let base = (j / NR) * k * NR + j % NR;
                for (kk, &x) in row.iter().enumerate() {
                    data[base + kk * NR] = x;
                }
            }
            Packed { n, k, data }
        }
    }

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

    /// x: [M, k] -> [M, n].
    pub fn linear(x: ArrayView2<f32>, w: &Packed) -> Array2<f32> {
        let (m, k) = x.dim();
        assert_eq!(k, w.k, "linear of [{m}, {k}] by a weight [{}, {}]", w.n, w.k);
        let x = x.as_standard_layout();
        let mut c = Array2::<f32>::zeros((m, w.n));
        if m == 0 || w.n == 0 || k == 0 {
            return c;
        }
        let (xs, cs) = (x.as_slice().expect("standard layout"), c.as_slice_mut().expect("fresh array"));
        for k0 in (0..k).step_by(KC) {
            let kc = KC.min(k - k0);
            for i0 in (0..m).step_by(MC) {
                let rows_here = MC.min(m - i0);
                for p in 0..w.n.div_ceil(NR) {
                    let panel = &w.data[p * k * NR + k0 * NR..][..kc * NR];
                    let cols = NR.min(w.n - p * NR);
                    let mut i = i0;
                    while i < i0 + rows_here {
                        let rows = MR.min(i0 + rows_here - i);
                        let tile = Tile { x: &xs[i * k + k0..], k, panel, kc, c: &mut cs[i * w.n + p * NR..], n: w.n, cols, first: k0 == 0 };
                        match rows {
                            4 => tile.run::<4>(),
                            3 => tile.run::<3>(),
                            2 => tile.run::<2>(),
                            _ => tile.run::<1>(),
                        }
                        i += rows;
                    }
                }
            }
        }
        c
    }

    /// One micro-kernel call: R rows of x (from column k0, row stride k) times one panel slice,
    /// into R rows of c (from the panel's first column, row stride n), `cols` of them real.
    struct Tile<'a> {
        x: &'a [f32],
        k: usize,
        panel: &'a [f32],
        kc: usize,
        c: &'a mut [f32],
        n: usize,
        cols: usize,
        /// the first k block writes c, later ones add to it
        first: bool,
    }

    impl Tile<'_> {
        // With relaxed-simd the micro-kernel carries the feature, so that `madd` inlines into it.
        #[cfg_attr(feature = "relaxed-simd", target_feature(enable = "relaxed-simd"))]
        #[cfg_attr(not(feature = "relaxed-simd"), inline(always))]
        fn run<const R: usize>(self) {
            assert!(self.panel.len() >= self.kc * NR && self.x.len() >= (R - 1) * self.k + self.kc);
            assert!(self.c.len() >= (R - 1) * self.n + self.cols);
            let mut acc = [[f32x4_splat(0.0); 2]; R];
            let (xp, bp) = (self.x.as_ptr(), self.panel.as_ptr());
            for kk in 0..self.kc {
                // SAFETY: kk < kc, so the panel reads stay in panel[..kc*NR] and the x reads at
                // r*k + kk stay in x[..(R-1)*k + kc], both checked above; v128 loads need no alignment.
                unsafe {
                    let b0 = v128_load(bp.add(kk * NR) as *const v128);
                    let b1 = v128_load(bp.add(kk * NR + 4) as *const v128);
                    for (r, acc) in acc.iter_mut().enumerate() {
                        let a = v128_load32_splat(xp.add(r * self.k + kk) as *const u32);
                        acc[0] = madd(a, b0, acc[0]);
                        acc[1] = madd(a, b1, acc[1]);
                    }
                }
            }
            for (r, acc) in acc.iter().enumerate() {
                let row = &mut self.c[r * self.n..][..self.cols];
                if self.cols == NR {
                    // A whole panel's columns: the accumulators go to c as two vectors.
                    // SAFETY: row holds NR = 8 f32, two v128; v128 loads and stores need no alignment.
                    unsafe {
                        let p = row.as_mut_ptr() as *mut v128;
                        let (lo, hi) = if self.first {
                            (acc[0], acc[1])
                        } else {
                            (f32x4_add(v128_load(p), acc[0]), f32x4_add(v128_load(p.add(1)), acc[1]))
                        };
                        v128_store(p, lo);
                        v128_store(p.add(1), hi);
                    }
                    continue;
                }
                let mut sum = [0.0f32; NR];
                // SAFETY: sum is NR = 8 f32, two v128 stores fill it.
                unsafe {
                    v128_store(sum.as_mut_ptr() as *mut v128, acc[0]);
                    v128_store(sum.as_mut_ptr().add(4) as *mut v128, acc[1]);
                }
                if self.first {
                    row.copy_from_slice(&sum[..self.cols]);
                } else {
                    row.iter_mut().zip(&sum).for_each(|(c, s)| *c += s);
                }
            }
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, s, Array3};

    /// Plain triple loop in f64: the definition the kernel must meet.
    fn reference(a: ArrayView2<f32>, b: ArrayView2<f32>) -> Array2<f32> {
        Array2::from_shape_fn((a.nrows(), b.ncols()), |(i, j)| {
            (0..a.ncols()).map(|p| a[[i, p]] as f64 * b[[p, j]] as f64).sum::<f64>() as f32
        })
    }

    fn assert_close(got: &Array2<f32>, want: &Array2<f32>) {
        assert_eq!(got.dim(), want.dim());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{g} vs {w}");
        }
    }

    fn filled(shape: (usize, usize, usize)) -> Array3<f32> {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        Array3::from_shape_fn(shape, |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
    }

    #[test]
    fn small_product_by_hand() {
        let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let b = array![[1.0f32, 0.0], [0.0, 1.0], [1.0, 1.0]];
        assert_eq!(matmul(a.view(), b.view()), array![[4.0, 5.0], [10.0, 11.0]]);
    }

    #[test]
    fn linear_is_x_times_w_transposed() {
        let x = filled((1, 37, 53)).index_axis_move(ndarray::Axis(0), 0);
        let w = filled((1, 29, 53)).index_axis_move(ndarray::Axis(0), 0);
        assert_close(&linear(x.view(), &Weight::new(w.clone())), &reference(x.view(), w.t()));
    }

    /// Attention reads one head out of [T, heads, d] and multiplies by K^T or by V in place.
    #[test]
    fn strided_head_slices_and_transposes() {
        let q = filled((13, 4, 8)); // (T, nH, d)
        let k = filled((17, 2, 8)); // (S, nKV, d)
        let (q1, k1) = (q.slice(s![.., 3, ..]), k.slice(s![.., 1, ..]));
        assert_close(&matmul(q1, k1.t()), &reference(q1, k1.t()));
        let probs = filled((1, 13, 17)).index_axis_move(ndarray::Axis(0), 0);
        assert_close(&matmul(probs.view(), k1), &reference(probs.view(), k1));
    }

    #[test]
    fn empty_sizes() {
        let a = Array2::<f32>::zeros((3, 0));
        let b = Array2::<f32>::zeros((0, 4));
        assert_eq!(matmul(a.view(), b.view()), Array2::<f32>::zeros((3, 4)));
        assert_eq!(matmul(b.t(), a.t()).dim(), (4, 3));
        assert_eq!(matmul(Array2::<f32>::zeros((0, 5)).view(), Array2::<f32>::zeros((5, 2)).view()).dim(), (0, 2));
    }
}

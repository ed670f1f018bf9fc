//! Every matrix product of the model goes through here: `linear` is `nn.Linear` without bias
//! (y = x W^T with W stored `[out, in]` as in the checkpoint), `matmul` serves attention's q·K^T and
//! probs·V.
//!
//! A weight never changes, so `Weight` lays it out once, at load, the way this build's kernel reads
//! it fastest, and keeps only that copy: whoever reads a weight's numbers (the embedding lookup,
//! head attribution, the GPU upload, the export) goes through `Weight`'s accessors.
//!
//! - Natively every product is the `gemm` crate on one thread, picked over ndarray's `.dot`
//!   (matrixmultiply) by measurement at MiniMind-3's shapes (about 2x with its AVX-512 kernels, the
//!   `x86-v4` feature; chosen at run time, AVX2 machines get its AVX2 kernels). A weight is held
//!   transposed, `[in, out]` row-major: gemm reads that in rows, and multiplies by it 1.14-1.2x faster
//!   than by the checkpoint's `[out, in]` read as its transpose at T = 128 (BENCHMARKS.md section 2).
//! - In wasm32 every product runs this file's own simd128 kernel (`linear/wasm.rs`): the weight is
//!   packed into the column panels its micro-kernel reads (`Panels`), register-blocked for V8's 16
//!   xmm registers. Built with the `relaxed-simd` feature (build.sh's second wasm, www/pkg-relaxed)
//!   its multiply-add is `f32x4.relaxed_madd`, one fused instruction where the CPU has FMA; the plain
//!   simd128 build multiplies and adds.
//!
//! BENCHMARKS.md (sections 1, 2 and 4) has the measurements.

use ndarray::{Array2, ArrayView2, Axis, CowArray, Ix2};

use gemm::{gemm, Parallelism};

/// A linear layer's weight `[out, in]`, as the checkpoint has it, held once in the layout this
/// build's kernel reads (natively transposed, in wasm32 as panels) and read through the accessors.
#[derive(Clone, Debug)]
pub struct Weight(Store);

#[derive(Clone, Debug)]
enum Store {
    /// Row-major `[out, in]`: an untied embedding table, only ever read by rows.
    Rows(Array2<f32>),
    /// Natively: W^T, row-major `[in, out]`.
    #[cfg(not(target_arch = "wasm32"))]
    Transposed(Array2<f32>),
    /// wasm32: the panels the kernel multiplies by.
    #[cfg(target_arch = "wasm32")]
    Panels(Panels),
}

impl Weight {
    /// A weight `linear` multiplies by, laid out for this build's kernel (the array given is dropped).
    pub fn new(w: Array2<f32>) -> Self {
        #[cfg(target_arch = "wasm32")]
        return Weight(Store::Panels(Panels::new(w.view())));
        #[cfg(not(target_arch = "wasm32"))]
        Weight(Store::Transposed(w.reversed_axes().as_standard_layout().into_owned()))
    }

    /// A matrix that is only read by rows (an untied embedding table): kept row-major in every build.
    pub fn unpacked(w: Array2<f32>) -> Self {
        Weight(Store::Rows(w))
    }

    /// `[out, in]`.
    pub fn dim(&self) -> (usize, usize) {
        match &self.0 {
            Store::Rows(w) => w.dim(),
            #[cfg(not(target_arch = "wasm32"))]
            Store::Transposed(t) => (t.ncols(), t.nrows()),
            #[cfg(target_arch = "wasm32")]
            Store::Panels(p) => (p.n, p.k),
        }
    }

    /// The rows `ids` (each below `dim().0`), `[ids.len(), in]`: the embedding lookup, lm_head's rows
    /// for attribution targets.
    pub fn rows(&self, ids: &[usize]) -> Array2<f32> {
        match &self.0 {
            Store::Rows(w) => w.select(Axis(0), ids),
            #[cfg(not(target_arch = "wasm32"))]
            Store::Transposed(t) => t.select(Axis(1), ids).reversed_axes().as_standard_layout().into_owned(),
            #[cfg(target_arch = "wasm32")]
            Store::Panels(p) => p.rows(ids),
        }
    }

    /// The whole matrix `[out, in]`: borrowed where it is held so (natively a transposed view, not
    /// in standard layout), unpacked into a fresh array from panels (for a reader of every number:
    /// the GPU upload, the export).
    pub fn to_array(&self) -> CowArray<'_, f32, Ix2> {
        match &self.0 {
            Store::Rows(w) => w.view().into(),
            #[cfg(not(target_arch = "wasm32"))]
            Store::Transposed(t) => t.t().into(),
            #[cfg(target_arch = "wasm32")]
            Store::Panels(p) => p.to_array().into(),
        }
    }

    /// How many f32 `Weight::new` of `[out, in]` holds in this build: natively out × in; in wasm32
    /// its panels, out rounded up to whole panels (the padding is zeros).
    pub fn held_floats(out: u64, inp: u64) -> u64 {
        #[cfg(target_arch = "wasm32")]
        return out.div_ceil(NR as u64).saturating_mul(NR as u64).saturating_mul(inp);
        #[cfg(not(target_arch = "wasm32"))]
        out.saturating_mul(inp)
    }
}

impl PartialEq for Weight {
    /// The numbers decide, whatever the layout.
    fn eq(&self, other: &Self) -> bool {
        self.to_array() == other.to_array()
    }
}

/// Output columns per panel: two v128.
#[cfg(any(test, target_arch = "wasm32"))]
const NR: usize = 8;

/// W `[n, k]` as the wasm kernel's panels: panel p holds `W[p*NR + j, kk]` at `p*k*NR + kk*NR + j`,
/// the last panel zero-padded to NR columns. Compiled natively for the tests of the layout only.
#[cfg(any(test, target_arch = "wasm32"))]
#[derive(Clone, Debug)]
struct Panels {
    n: usize,
    k: usize,
    data: Vec<f32>,
}

#[cfg(any(test, target_arch = "wasm32"))]
impl Panels {
    fn new(w: ArrayView2<f32>) -> Self {
        let (n, k) = w.dim();
        Self::pack(n, k, w.outer_iter().map(|row| row.into_iter().copied()))
    }

    /// Panels of an `[n, k]` matrix given row by row.
    fn pack<R: Iterator<Item = f32>>(n: usize, k: usize, rows: impl Iterator<Item = R>) -> Self {
        let mut data = vec![0.0; n.div_ceil(NR) * k * NR];
        for (j, row) in rows.enumerate() {
            let base = Self::at(k, j);
            for (kk, x) in row.enumerate() {
                data[base + kk * NR] = x;
            }
        }
        Panels { n, k, data }
    }

    /// Where `W[j, 0]` is in the data of an `[_, k]` matrix; `W[j, kk]` follows at every NR-th place.
    fn at(k: usize, j: usize) -> usize {
        (j / NR) * k * NR + j % NR
    }

    /// Row j, W[j, ..], read in place.
    fn row(&self, j: usize) -> impl Iterator<Item = f32> + '_ {
        assert!(j < self.n, "row {j} of a [{}, {}] weight", self.n, self.k);
        self.data[Self::at(self.k, j)..].iter().step_by(NR).take(self.k).copied()
    }

    fn rows(&self, ids: &[usize]) -> Array2<f32> {
        let mut out = Array2::zeros((ids.len(), self.k));
        for (mut out, &j) in out.outer_iter_mut().zip(ids) {
            out.iter_mut().zip(self.row(j)).for_each(|(o, x)| *o = x);
        }
        out
    }

    fn to_array(&self) -> Array2<f32> {
        self.rows(&(0..self.n).collect::<Vec<_>>())
    }

    /// The panels of W^T `[k, n]`, read from these: its row j is W's column j.
    fn transposed(&self) -> Panels {
        Self::pack(self.k, self.n, (0..self.k).map(|j| (0..self.n).map(move |r| self.data[Self::at(self.k, r) + j * NR])))
    }
}

/// a: [M, K], b: [K, N] -> [M, N]. Any strides. In wasm32 b is packed for the kernel on each call
/// (K x N copies against M x K x N multiply-adds: attention's products have M = T rows).
pub fn matmul(a: ArrayView2<f32>, b: ArrayView2<f32>) -> Array2<f32> {
    assert_eq!(a.ncols(), b.nrows(), "matmul of {:?} by {:?}", a.dim(), b.dim());
    #[cfg(target_arch = "wasm32")]
    let c = wasm::linear(a, &Panels::new(b.t()));
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
    match &w.0 {
        Store::Rows(w) => matmul(x, w.t()),
        #[cfg(not(target_arch = "wasm32"))]
        Store::Transposed(t) => matmul(x, t.view()),
        #[cfg(target_arch = "wasm32")]
        Store::Panels(p) => wasm::linear(x, p),
    }
}

/// x: [N, out], w: [out, in] -> x · W, [N, in]: a direction pulled back through the weight (head
/// attribution through o_proj). In wasm32 the kernel reads W^T's panels, built from W's for the call.
pub fn linear_back(x: ArrayView2<f32>, w: &Weight) -> Array2<f32> {
    match &w.0 {
        Store::Rows(w) => matmul(x, w.view()),
        #[cfg(not(target_arch = "wasm32"))]
        Store::Transposed(t) => matmul(x, t.t()),
        #[cfg(target_arch = "wasm32")]
        Store::Panels(p) => wasm::linear(x, &p.transposed()),
    }
}


#[cfg(target_arch = "wasm32")]
mod wasm;

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

    /// `linear` by a weight as `Weight::new` holds it, at sizes that end mid-tile, mid-panel and
    /// mid-block of the wasm kernel (rows under, at and past its 4-row tiles and 64-row blocks,
    /// columns under, at and over its 8-column panels, the inner dimension under, at and over its
    /// 256-long k blocks), from a standard-layout and a transposed-storage x.
    #[test]
    fn linear_at_awkward_sizes() {
        for m in [1, 2, 5, 11, 12, 13, 25, 200] {
            for n in [1, 15, 16, 17, 31, 32, 33, 70] {
                for k in [1, 3, 256, 300, 520] {
                    let x = filled((1, m, k)).index_axis_move(ndarray::Axis(0), 0);
                    let w = filled((1, n, k + 1)).index_axis_move(ndarray::Axis(0), 0).slice(s![.., ..k]).to_owned();
                    let weight = Weight::new(w.clone());
                    assert_eq!(weight.dim(), (n, k));
                    assert_close(&linear(x.view(), &weight), &reference(x.view(), w.t()));
                    assert_close(&linear(x.t().as_standard_layout().t(), &weight), &reference(x.view(), w.t()));
                }
            }
        }
    }

    #[test]
    fn linear_back_is_x_times_w() {
        let x = filled((1, 9, 29)).index_axis_move(ndarray::Axis(0), 0);
        let w = filled((1, 29, 53)).index_axis_move(ndarray::Axis(0), 0);
        assert_close(&linear_back(x.view(), &Weight::new(w.clone())), &reference(x.view(), w.view()));
    }

    #[test]
    fn weight_readers_give_back_the_matrix() {
        let w = filled((1, 13, 7)).index_axis_move(ndarray::Axis(0), 0);
        for weight in [Weight::new(w.clone()), Weight::unpacked(w.clone())] {
            assert_eq!(weight.dim(), (13, 7));
            assert_eq!(weight.to_array(), w);
            assert_eq!(weight.rows(&[12, 0, 5, 5]), w.select(ndarray::Axis(0), &[12, 0, 5, 5]));
        }
        assert_ne!(Weight::new(w.clone()), Weight::new(w.t().as_standard_layout().into_owned().into_shape_with_order((13, 7)).unwrap()));
    }

    /// The panels' layout: every number where the micro-kernel reads it,
    /// zeros past the last real column, and the rows, the whole matrix and the transpose read back
    /// exactly, at sizes that fill panels partly, exactly and over several.
    #[test]
    fn panels_layout_and_readers() {
        for (n, k) in [(1, 1), (7, 5), (8, 3), (13, 11), (17, 300)] {
            let w = filled((1, n, k)).index_axis_move(ndarray::Axis(0), 0);
            let p = Panels::new(w.view());
            assert_eq!(p.data.len(), n.div_ceil(NR) * k * NR);
            for (i, &x) in p.data.iter().enumerate() {
                let (panel, kk, col) = (i / (k * NR), i / NR % k, i % NR);
                let j = panel * NR + col;
                assert_eq!(x, if j < n { w[[j, kk]] } else { 0.0 }, "[{n}, {k}] panel {panel} row {kk} lane {col}");
            }
            assert_eq!(p.to_array(), w);
            assert_eq!(p.rows(&[n - 1, 0, n / 2]), w.select(ndarray::Axis(0), &[n - 1, 0, n / 2]));
            let t = p.transposed();
            assert_eq!((t.n, t.k), (k, n));
            assert_eq!(t.to_array(), w.t());
        }
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

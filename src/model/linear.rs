//! Every matrix product of the model goes through here: `linear` is `nn.Linear` without bias
//! (y = x W^T with W stored `[out, in]` as in the checkpoint), `matmul` serves attention's q·K^T and
//! probs·V.
//!
//! A weight never changes, so `Weight` lays it out once, at load, the way this build's kernel reads
//! it fastest, and keeps only that copy: whoever reads a weight's numbers (the embedding lookup,
//! head attribution, the GPU upload, the export) goes through `Weight`'s accessors.
//!
//! - Natively, on a CPU with AVX-512F, a weight is packed at load into 64-column panels and
//!   `linear` runs this file's own kernel (`linear/avx512.rs`): a 6-row x 64-column register tile
//!   of fused multiply-adds, with no per-call repacking of the weight (gemm packs its right-hand side
//!   on every call, a fifth of a layer's time at T = 128; BENCHMARKS.md section 2). On a CPU with
//!   AVX2 and FMA but not AVX-512F, 16-column panels and `linear/avx2.rs`, a 6-row x 16-column tile.
//! - Natively on any other CPU, and for attention's products everywhere natively, the `gemm` crate on one
//!   thread, picked over ndarray's `.dot` (matrixmultiply) by measurement at MiniMind-3's shapes
//!   (its AVX-512 kernels with the `x86-v4` feature, its AVX2 ones where the CPU has no more). There
//!   a weight is held transposed, `[in, out]` row-major: gemm reads that in rows, 1.14-1.2x faster
//!   than the checkpoint's `[out, in]` read as its transpose at T = 128.
//! - In wasm32 every product runs this file's own simd128 kernel (`linear/wasm.rs`): the weight is
//!   packed into 12-column panels, register-blocked for V8's 16 xmm registers. Built with the
//!   `relaxed-simd` feature (build.sh's second wasm, www/pkg-relaxed) its multiply-add is
//!   `f32x4.relaxed_madd`, one fused instruction where the CPU has FMA; the plain simd128 build
//!   multiplies and adds.
//!
//! BENCHMARKS.md (sections 1, 2 and 4) has the measurements.

use ndarray::{Array2, ArrayView2, Axis, CowArray, Ix2};

use gemm::{gemm, Parallelism};

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(any(target_arch = "x86_64", target_arch = "wasm32"))]
mod panels;
#[cfg(target_arch = "wasm32")]
mod wasm;

#[cfg(any(target_arch = "x86_64", target_arch = "wasm32"))]
use panels::Panels;

/// A linear layer's weight `[out, in]`, as the checkpoint has it, held once in the layout this
/// build's kernel reads (natively packed or transposed, in wasm32 as panels) and read through the
/// accessors.
#[derive(Clone, Debug)]
pub struct Weight(Store);

#[derive(Clone, Debug)]
enum Store {
    /// Row-major `[out, in]`: an untied embedding table, only ever read by rows.
    Rows(Array2<f32>),
    /// Natively where neither x86-64 kernel runs: W^T, row-major `[in, out]`, for gemm.
    #[cfg(not(target_arch = "wasm32"))]
    Transposed(Array2<f32>),
    /// x86-64 with AVX-512F: the AVX-512 kernel's 64-column panels.
    #[cfg(target_arch = "x86_64")]
    Avx512(Panels<{ avx512::NR }>),
    /// x86-64 with AVX2 and FMA but not AVX-512F: the AVX2 kernel's 16-column panels.
    #[cfg(target_arch = "x86_64")]
    Avx2(Panels<{ avx2::NR }>),
    /// wasm32: the simd128 kernel's 12-column panels.
    #[cfg(target_arch = "wasm32")]
    Panels(Panels<{ wasm::NR }>),
}

/// The x86-64 kernels that read packed panels.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    Avx512,
    Avx2,
}

#[cfg(target_arch = "x86_64")]
impl Kernel {
    /// The fastest this CPU runs, if any. `ATTNSCOPE_X86_KERNEL=avx2` (read once) picks the AVX2
    /// kernel on a CPU that also has AVX-512F, so that a benchmark can measure it there
    /// (tools/bench/run.sh `KERNEL=avx2`); any other value, or a CPU without AVX2, leaves the choice
    /// to the CPU.
    fn best() -> Option<Kernel> {
        static BEST: std::sync::OnceLock<Option<Kernel>> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| {
            let asked = std::env::var("ATTNSCOPE_X86_KERNEL").ok();
            if asked.as_deref() == Some("avx2") && avx2::available() {
                Some(Kernel::Avx2)
            } else if avx512::available() {
                Some(Kernel::Avx512)
            } else if avx2::available() {
                Some(Kernel::Avx2)
            } else {
                None
            }
        })
    }

    /// `w` packed for this kernel.
    fn pack(self, w: ArrayView2<f32>) -> Store {
        match self {
            Kernel::Avx512 => Store::Avx512(Panels::new(w)),
            Kernel::Avx2 => Store::Avx2(Panels::new(w)),
        }
    }
}

/// Whether `Weight::new` packs weights into panels in this build on this CPU (otherwise, natively,
/// it holds them transposed for gemm).
fn packs() -> bool {
    #[cfg(target_arch = "x86_64")]
    let packs = Kernel::best().is_some();
    #[cfg(not(target_arch = "x86_64"))]
    let packs = cfg!(target_arch = "wasm32");
    packs
}

/// What `Weight::new` packs for in this build on this CPU: "avx512", "avx2", "simd128" (wasm32) or
/// "gemm" (held transposed). Benchmarks print it next to their figures.
pub fn kernel_name() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    let name = match Kernel::best() {
        Some(Kernel::Avx512) => "avx512",
        Some(Kernel::Avx2) => "avx2",
        None => "gemm",
    };
    #[cfg(target_arch = "wasm32")]
    let name = "simd128";
    #[cfg(not(any(target_arch = "x86_64", target_arch = "wasm32")))]
    let name = "gemm";
    name
}

impl Weight {
    /// A weight `linear` multiplies by, laid out for this build's kernel (the array given is dropped).
    pub fn new(w: Array2<f32>) -> Self {
        #[cfg(target_arch = "wasm32")]
        let held = Store::Panels(Panels::new(w.view()));
        #[cfg(target_arch = "x86_64")]
        let held = match Kernel::best() {
            Some(kernel) => kernel.pack(w.view()),
            None => Weight::transposed(w).0,
        };
        #[cfg(not(any(target_arch = "x86_64", target_arch = "wasm32")))]
        let held = Weight::transposed(w).0;
        Weight(held)
    }

    /// The weight held transposed for gemm, as `new` holds it natively on a CPU that runs neither
    /// x86-64 kernel.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn transposed(w: Array2<f32>) -> Self {
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
            #[cfg(target_arch = "x86_64")]
            Store::Avx512(p) => (p.n, p.k),
            #[cfg(target_arch = "x86_64")]
            Store::Avx2(p) => (p.n, p.k),
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
            #[cfg(target_arch = "x86_64")]
            Store::Avx512(p) => p.rows(ids),
            #[cfg(target_arch = "x86_64")]
            Store::Avx2(p) => p.rows(ids),
            #[cfg(target_arch = "wasm32")]
            Store::Panels(p) => p.rows(ids),
        }
    }

    /// The whole matrix `[out, in]`: borrowed where it is held so (natively transposed: a view, not
    /// in standard layout), unpacked into a fresh array from panels (for a reader of every number:
    /// the GPU upload, the export).
    pub fn to_array(&self) -> CowArray<'_, f32, Ix2> {
        match &self.0 {
            Store::Rows(w) => w.view().into(),
            #[cfg(not(target_arch = "wasm32"))]
            Store::Transposed(t) => t.t().into(),
            #[cfg(target_arch = "x86_64")]
            Store::Avx512(p) => p.to_array().into(),
            #[cfg(target_arch = "x86_64")]
            Store::Avx2(p) => p.to_array().into(),
            #[cfg(target_arch = "wasm32")]
            Store::Panels(p) => p.to_array().into(),
        }
    }

    /// How many f32 `Weight::new` of `[out, in]` holds in this build on this CPU: out x in, or where
    /// it packs, out rounded up to whole panels (the padding is zeros) times in.
    pub fn held_floats(out: u64, inp: u64) -> u64 {
        #[cfg(target_arch = "wasm32")]
        let floats = Panels::<{ wasm::NR }>::floats(out, inp);
        #[cfg(target_arch = "x86_64")]
        let floats = match Kernel::best() {
            Some(Kernel::Avx512) => Panels::<{ avx512::NR }>::floats(out, inp),
            Some(Kernel::Avx2) => Panels::<{ avx2::NR }>::floats(out, inp),
            None => out.saturating_mul(inp),
        };
        #[cfg(not(any(target_arch = "x86_64", target_arch = "wasm32")))]
        let floats = out.saturating_mul(inp);
        floats
    }

    /// Floats `linear_back` by a weight `[out, in]` builds for the call besides its output: the
    /// transposed panels where weights are packed, nothing where they are held transposed.
    pub fn back_floats(out: u64, inp: u64) -> u64 {
        if packs() { Weight::held_floats(inp, out) } else { 0 }
    }
}

impl PartialEq for Weight {
    /// The numbers decide, whatever the layout.
    fn eq(&self, other: &Self) -> bool {
        self.to_array() == other.to_array()
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
        #[cfg(target_arch = "x86_64")]
        Store::Avx512(p) => avx512::linear(x, p),
        #[cfg(target_arch = "x86_64")]
        Store::Avx2(p) => avx2::linear(x, p),
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
        #[cfg(target_arch = "x86_64")]
        Store::Avx512(p) => avx512::linear(x, &p.transposed()),
        #[cfg(target_arch = "x86_64")]
        Store::Avx2(p) => avx2::linear(x, &p.transposed()),
        #[cfg(target_arch = "wasm32")]
        Store::Panels(p) => wasm::linear(x, &p.transposed()),
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

    /// `w` as `Weight::new` holds it on this CPU and, natively, also transposed for gemm (what
    /// `new` holds on a CPU that runs neither x86-64 kernel) and, on x86-64 with AVX-512F, packed for
    /// the AVX2 kernel too, so that every native kernel is tested on a CPU that has AVX-512F (on one
    /// with only AVX2 the AVX-512 kernel goes untested).
    fn held_both_ways(w: &Array2<f32>) -> Vec<Weight> {
        #[allow(unused_mut)]
        let mut held = vec![Weight::new(w.clone())];
        #[cfg(not(target_arch = "wasm32"))]
        held.push(Weight::transposed(w.clone()));
        #[cfg(target_arch = "x86_64")]
        if Kernel::best() == Some(Kernel::Avx512) && avx2::available() {
            held.push(Weight(Kernel::Avx2.pack(w.view())));
        }
        held
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

    /// `linear` by a weight as `Weight::new` holds it (and natively also transposed for gemm, and for
    /// the AVX2 kernel), at sizes that end mid-tile, mid-panel and mid-block of the panel kernels: rows
    /// under, at and past the wasm kernel's 3-row tiles and 48-row blocks, the x86 kernels' 6-row tiles
    /// and the AVX2 kernel's 132-row blocks; columns under, at and over 12-, 16- (one zmm, an AVX2
    /// panel) and 64-column panels, several panels, and past the AVX-512 kernel's 4 panels per pass
    /// and the AVX2 kernel's 256-column blocks; the inner
    /// dimension under, at and over 256- and 384-long k blocks; from a standard-layout and a
    /// transposed-storage x.
    #[test]
    fn linear_at_awkward_sizes() {
        for m in [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 25, 200] {
            for n in [1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 70, 129, 257] {
                for k in [1, 3, 256, 300, 384, 385, 520, 769] {
                    let x = filled((1, m, k)).index_axis_move(ndarray::Axis(0), 0);
                    let w = filled((1, n, k + 1)).index_axis_move(ndarray::Axis(0), 0).slice(s![.., ..k]).to_owned();
                    for weight in held_both_ways(&w) {
                        assert_eq!(weight.dim(), (n, k));
                        assert_close(&linear(x.view(), &weight), &reference(x.view(), w.t()));
                        assert_close(&linear(x.t().as_standard_layout().t(), &weight), &reference(x.view(), w.t()));
                    }
                }
            }
        }
    }

    /// With `threads`, the rows split across a pool: every cell the same bits as on one thread, at
    /// row counts that split into whole tiles, partial tiles and fewer rows than threads.
    #[cfg(feature = "threads")]
    #[test]
    fn threads_give_one_threads_bits() {
        let pool = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        let (one, three, eight) = (pool(1), pool(3), pool(8));
        assert_eq!(three.install(crate::model::par::threads), 3);
        for m in [1, 5, 7, 13, 128, 200] {
            for (n, k) in [(70, 300), (257, 769)] {
                let x = filled((1, m, k)).index_axis_move(ndarray::Axis(0), 0);
                let w = filled((1, n, k)).index_axis_move(ndarray::Axis(0), 0);
                for weight in held_both_ways(&w) {
                    let want = one.install(|| linear(x.view(), &weight));
                    for pool in [&three, &eight] {
                        let got = pool.install(|| linear(x.view(), &weight));
                        assert!(got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()), "[{m}, {k}] x [{n}, {k}]");
                    }
                }
            }
        }
    }

    #[test]
    fn linear_back_is_x_times_w() {
        let x = filled((1, 9, 29)).index_axis_move(ndarray::Axis(0), 0);
        let w = filled((1, 29, 53)).index_axis_move(ndarray::Axis(0), 0);
        for weight in held_both_ways(&w) {
            assert_close(&linear_back(x.view(), &weight), &reference(x.view(), w.view()));
        }
    }

    #[test]
    fn weight_readers_give_back_the_matrix() {
        let w = filled((1, 13, 7)).index_axis_move(ndarray::Axis(0), 0);
        for weight in held_both_ways(&w).into_iter().chain([Weight::unpacked(w.clone())]) {
            assert_eq!(weight.dim(), (13, 7));
            assert_eq!(weight.to_array(), w);
            assert_eq!(weight.rows(&[12, 0, 5, 5]), w.select(ndarray::Axis(0), &[12, 0, 5, 5]));
        }
        assert_ne!(Weight::new(w.clone()), Weight::new(w.t().as_standard_layout().into_owned().into_shape_with_order((13, 7)).unwrap()));
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

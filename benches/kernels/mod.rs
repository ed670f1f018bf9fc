//! The matmul kernels weighed for `src/model/linear.rs` (y = x W^T, W stored [out, in] as nn.Linear
//! does), one thread each: ndarray's `.dot`, which calls matrixmultiply's sgemm (linear.rs ran it
//! until the measurements in BENCHMARKS.md), the `gemm` crate with `Parallelism::None` (what
//! `linear` ran natively before weights were held transposed, and what attention's products run),
//! gemm on W^T held row-major (natively, "transposed": what `linear` runs on a CPU with neither
//! AVX-512F nor AVX2 and FMA, and ran everywhere natively before the x86-64 kernels), and `linear`
//! itself on the weight as the model holds it ("packed": natively the AVX-512 kernel on its panels
//! where the CPU has AVX-512F, the AVX2 kernel where it has AVX2 and FMA, else the same as
//! "transposed"; in wasm32 the packed simd128 kernel). Shared by
//! benches/layer.rs (native) and examples/matmul_wasm.rs (wasm32), so both targets time the same code.
//! Each reads the weight as it would hold it, prepared once before timing (`Operand`).

use attnscope::model::linear::Weight;
use attnscope::model::linear::gemm_matmul;
use ndarray::{Array2, ArrayView2};

/// One weight `[out, in]` as each kernel reads it: row-major for ndarray and gemm, and as the model
/// holds it for `linear` (`Weight`: where it packs, only the kernel's panels, which cannot lend the
/// rows to the others).
pub struct Operand {
    pub rows: Array2<f32>,
    pub weight: Weight,
    #[cfg(not(target_arch = "wasm32"))]
    pub transposed: Weight,
}

impl Operand {
    pub fn new(w: Array2<f32>) -> Self {
        Operand {
            weight: Weight::new(w.clone()),
            #[cfg(not(target_arch = "wasm32"))]
            transposed: Weight::transposed(w.clone()),
            rows: w,
        }
    }
}

type Kernel = fn(ArrayView2<f32>, &Operand) -> Array2<f32>;

/// Kernels in the order benches report them; the first is the baseline of the ratios.
#[cfg(not(target_arch = "wasm32"))]
pub const KERNELS: [(&str, Kernel); 4] =
    [("matrixmultiply", matrixmultiply), ("gemm", gemm), ("transposed", transposed), ("packed", packed)];
#[cfg(target_arch = "wasm32")]
pub const KERNELS: [(&str, Kernel); 3] = [("matrixmultiply", matrixmultiply), ("gemm", gemm), ("packed", packed)];

/// The shapes of one MiniMind-3 layer's matmuls, as (in, out) of y[T, out] = x[T, in] W^T:
/// q_proj (768 -> 768), gate_proj / up_proj (768 -> 2432), down_proj (2432 -> 768); and the
/// output head over the vocabulary (768 -> 6400), whose weight (19.7 MB) is too big for any cache.
pub const SHAPES: [(usize, usize); 4] = [(768, 768), (768, 2432), (2432, 768), (768, 6400)];

/// x: [N, in], w: [out, in] -> [N, out] with ndarray's `.dot`.
pub fn matrixmultiply(x: ArrayView2<f32>, w: &Operand) -> Array2<f32> {
    x.dot(&w.rows.t())
}

/// x: [N, in], w: [out, in] -> [N, out] through the `gemm` crate on the checkpoint's layout (W read
/// as its transpose), as `linear` ran natively until weights were held transposed.
pub fn gemm(x: ArrayView2<f32>, w: &Operand) -> Array2<f32> {
    gemm_matmul(x, w.rows.t())
}

/// x: [N, in], w: [out, in] -> [N, out] through `linear` by W^T held row-major for gemm.
#[cfg(not(target_arch = "wasm32"))]
pub fn transposed(x: ArrayView2<f32>, w: &Operand) -> Array2<f32> {
    attnscope::model::linear::linear(x, &w.transposed)
}

/// x: [N, in], w: [out, in] -> [N, out] through `linear`, as the model runs it.
pub fn packed(x: ArrayView2<f32>, w: &Operand) -> Array2<f32> {
    attnscope::model::linear::linear(x, &w.weight)
}

/// Deterministic values in [-1, 1), so no bench needs a rand crate.
pub fn filled(rows: usize, cols: usize, seed: u64) -> Array2<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    Array2::from_shape_fn((rows, cols), |_| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    })
}

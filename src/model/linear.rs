//! Every matrix product of the model goes through `matmul`: `nn.Linear` without bias (y = x W^T with
//! W stored `[out, in]` as in the checkpoint) and attention's q·K^T and probs·V.
//!
//! The kernel is the `gemm` crate on one thread, picked over ndarray's `.dot` (matrixmultiply) by
//! measurement at MiniMind-3's shapes (BENCHMARKS.md, `cargo bench --bench layer -- matmul`): about 2x
//! natively with its AVX-512 kernels (the `x86-v4` feature; chosen at run time, AVX2 machines get
//! its AVX2 kernels), and on a par in wasm32 + simd128, where neither has more than 128-bit lanes.

use gemm::{gemm, Parallelism};
use ndarray::{Array2, ArrayView2};

/// a: [M, K], b: [K, N] -> [M, N]. Any strides: transposed and sliced views are read in place.
pub fn matmul(a: ArrayView2<f32>, b: ArrayView2<f32>) -> Array2<f32> {
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
pub fn linear(x: ArrayView2<f32>, w: &Array2<f32>) -> Array2<f32> {
    matmul(x, w.t())
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
        assert_close(&linear(x.view(), &w), &reference(x.view(), w.t()));
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

//! `nn.Linear` without bias: y = x W^T with W stored `[out, in]` as in the checkpoint.

use ndarray::{Array2, ArrayView2};

/// x: [N, in], w: [out, in] -> [N, out].
pub fn linear(x: ArrayView2<f32>, w: &Array2<f32>) -> Array2<f32> {
    x.dot(&w.t())
}

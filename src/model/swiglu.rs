//! MiniMind's FeedForward: `down_proj(silu(gate_proj(x)) * up_proj(x))`, silu(z) = z * sigmoid(z).
//! The dense FFN of a layer, and each expert of a mixture of experts (moe.rs).

use ndarray::{Array2, ArrayView2, Zip};

use super::exp::exp;
use super::linear::linear;
use crate::weights::FeedForward;

pub struct FfnOut {
    pub gate: Array2<f32>, // [T, I]
    pub up: Array2<f32>,   // [T, I]
    pub act: Array2<f32>,  // [T, I] silu(gate) * up
    pub out: Array2<f32>,  // [T, H]
}

pub fn silu(z: f32) -> f32 {
    z / (1.0 + exp(-z))
}

/// g: [T, H], the post-attention-normed hidden state.
pub fn swiglu(g: ArrayView2<f32>, w: &FeedForward) -> FfnOut {
    let gate = linear(g, &w.gate_proj);
    let up = linear(g, &w.up_proj);
    let mut act = Array2::zeros(gate.raw_dim());
    Zip::from(&mut act).and(&gate).and(&up).for_each(|a, &g, &u| *a = silu(g) * u);
    let out = linear(act.view(), &w.down_proj);
    FfnOut { gate, up, act, out }
}

#[cfg(test)]
mod tests {
    use super::silu;

    #[test]
    fn silu_matches_definition() {
        for z in [-20.0f32, -1.0, 0.0, 0.5, 3.0, 90.0] {
            let expect = (z as f64) / (1.0 + (-(z as f64)).exp());
            assert!((silu(z) as f64 - expect).abs() < 1e-6 * (1.0 + expect.abs()), "{z}");
        }
    }
}

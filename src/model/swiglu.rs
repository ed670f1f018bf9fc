//! MiniMind's FeedForward: `down_proj(silu(gate_proj(x)) * up_proj(x))`, silu(z) = z * sigmoid(z).
//! The dense FFN of a layer, and each expert of a mixture of experts (moe.rs).

use ndarray::{Array2, ArrayView2};

use super::exp::exp;
use super::linear::linear;
use super::scratch;
use super::wide::wide;
use crate::weights::FeedForward;

pub struct FfnOut {
    pub gate: Array2<f32>, // [T, I]
    pub up: Array2<f32>,   // [T, I]
    pub act: Array2<f32>,  // [T, I] silu(gate) * up
    pub out: Array2<f32>,  // [T, H]
}

#[inline(always)]
pub fn silu(z: f32) -> f32 {
    z / (1.0 + exp(-z))
}

/// silu(g) * u, entry by entry, into an unwritten vector (`scratch::take`); a loop that vectorises.
#[inline(always)]
fn silu_times(g: &[f32], u: &[f32]) -> Vec<f32> {
    assert_eq!(g.len(), u.len());
    let mut out = scratch::take(g.len());
    for (o, (&g, &u)) in out.iter_mut().zip(g.iter().zip(u)) {
        o.write(silu(g) * u);
    }
    // SAFETY: the loop wrote all g.len() entries (u and out are as long).
    unsafe { scratch::assume_init(out) }
}

/// g: [T, H], the post-attention-normed hidden state.
pub fn swiglu(g: ArrayView2<f32>, w: &FeedForward) -> FfnOut {
    let gate = linear(g, &w.gate_proj);
    let up = linear(g, &w.up_proj);
    let (g, u) = (gate.as_slice().expect("a fresh product"), up.as_slice().expect("a fresh product"));
    let act = Array2::from_shape_vec(gate.raw_dim(), wide(#[inline(always)] || silu_times(g, u))).expect("[T, I]");
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

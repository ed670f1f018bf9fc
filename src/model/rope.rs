//! Rotary position embedding, "rotate half" layout, as MiniMind's `precompute_freqs_cis` and
//! `apply_rotary_pos_emb`. Frequencies and angles are computed in f32 exactly as PyTorch does
//! (inv_freq in f32, angle = f32(p) * inv_freq rounded to f32), so tables match at large positions.

use std::mem::MaybeUninit;

use ndarray::{Array2, Array3, ArrayView3};

use super::scratch;
use super::wide::wide;

use super::config::{
    Config, YARN_ATTENTION_FACTOR, YARN_BETA_FAST, YARN_BETA_SLOW, YARN_FACTOR, YARN_ORIGINAL_MAX,
};

/// Whether YaRN changes the frequencies: on, and the context is longer than YaRN's original one.
pub fn yarn_active(cfg: &Config) -> bool {
    cfg.inference_rope_scaling && cfg.max_position_embeddings as f64 / YARN_ORIGINAL_MAX > 1.0
}

/// inv_freq[i] for i < d/2, YaRN applied when active.
pub fn inv_freq(head_dim: usize, theta: f64, yarn: bool) -> Vec<f32> {
    let half = head_dim / 2;
    let base = theta as f32;
    let mut f: Vec<f32> = (0..half)
        .map(|i| 1.0 / base.powf((2 * i) as f32 / head_dim as f32))
        .collect();
    if yarn {
        let d = head_dim as f64;
        let inv_dim = |b: f64| d * (YARN_ORIGINAL_MAX / (b * 2.0 * std::f64::consts::PI)).ln() / (2.0 * theta.ln());
        let low = inv_dim(YARN_BETA_FAST).floor().max(0.0);
        let high = inv_dim(YARN_BETA_SLOW).ceil().min((half - 1) as f64);
        let span = (high - low).max(0.001) as f32;
        for (i, fi) in f.iter_mut().enumerate() {
            let ramp = ((i as f32 - low as f32) / span).clamp(0.0, 1.0);
            *fi *= (1.0 - ramp) + ramp / YARN_FACTOR as f32;
        }
    }
    f
}

/// cos and sin tables, each [n, d], for positions start..start+n (halves repeated).
pub struct RopeTable {
    pub cos: Array2<f32>,
    pub sin: Array2<f32>,
}

impl RopeTable {
    pub fn new(cfg: &Config, start: usize, n: usize) -> RopeTable {
        Self::with(cfg.head_dim(), cfg.rope_theta, yarn_active(cfg), start, n)
    }

    pub fn with(head_dim: usize, theta: f64, yarn: bool, start: usize, n: usize) -> RopeTable {
        let freqs = inv_freq(head_dim, theta, yarn);
        let half = head_dim / 2;
        let factor = if yarn { YARN_ATTENTION_FACTOR as f32 } else { 1.0 };
        let mut cos = Array2::zeros((n, head_dim));
        let mut sin = Array2::zeros((n, head_dim));
        for r in 0..n {
            let p = (start + r) as f32;
            for (i, &f) in freqs.iter().enumerate() {
                let angle = (p * f) as f64;
                let (c, s) = (angle.cos() as f32 * factor, angle.sin() as f32 * factor);
                cos[[r, i]] = c;
                cos[[r, i + half]] = c;
                sin[[r, i]] = s;
                sin[[r, i + half]] = s;
            }
        }
        RopeTable { cos, sin }
    }

    /// x: [n, heads, d] -> x*cos + rotate_half(x)*sin, where rotate_half(u) = [-u[d/2:], u[:d/2]].
    pub fn apply(&self, x: ArrayView3<f32>) -> Array3<f32> {
        let (n, heads, d) = x.dim();
        assert!(n <= self.cos.nrows() && d == self.cos.ncols(), "RoPE of {:?} by a table {:?}", x.dim(), self.cos.dim());
        assert!(d % 2 == 0, "RoPE rotates pairs: head_dim {d} is odd");
        let x = x.as_standard_layout();
        let xs = x.as_slice().expect("standard layout");
        let (cos, sin) = (self.cos.as_slice().expect("a fresh table"), self.sin.as_slice().expect("a fresh table"));
        let mut out = scratch::take(n * heads * d);
        if d > 0 {
            wide(#[inline(always)] || {
                for (r, (x, out)) in xs.chunks_exact(heads * d).zip(out.chunks_exact_mut(heads * d)).enumerate() {
                    let (cos, sin) = (&cos[r * d..][..d], &sin[r * d..][..d]);
                    for (x, out) in x.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
                        rotate(x, cos, sin, out);
                    }
                }
            });
        }
        // SAFETY: `rotate` wrote every entry of every head of every row (d > 0), or there are none.
        let out = unsafe { scratch::assume_init(out) };
        Array3::from_shape_vec((n, heads, d), out).expect("[n, heads, d]")
    }
}

/// One head's vector: out[i] = x[i] cos[i] + rotate_half(x)[i] sin[i].
#[inline(always)]
fn rotate(x: &[f32], cos: &[f32], sin: &[f32], out: &mut [MaybeUninit<f32>]) {
    let half = x.len() / 2;
    let (first, second) = out.split_at_mut(half);
    for (i, o) in first.iter_mut().enumerate() {
        o.write(x[i] * cos[i] + -x[i + half] * sin[i]);
    }
    for (i, o) in second.iter_mut().enumerate() {
        let i = i + half;
        o.write(x[i] * cos[i] + x[i - half] * sin[i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array3;

    #[test]
    fn position_zero_is_identity() {
        let t = RopeTable::with(8, 1e6, false, 0, 1);
        let x = Array3::from_shape_fn((1, 2, 8), |(_, h, i)| (h * 8 + i) as f32 * 0.1 - 0.3);
        assert_eq!(t.apply(x.view()), x);
    }

    #[test]
    fn rotation_keeps_each_pair_length() {
        let t = RopeTable::with(8, 1e4, false, 37, 1);
        let x = Array3::from_shape_fn((1, 1, 8), |(_, _, i)| i as f32 + 1.0);
        let y = t.apply(x.view());
        for i in 0..4 {
            let before = x[[0, 0, i]].hypot(x[[0, 0, i + 4]]);
            let after = y[[0, 0, i]].hypot(y[[0, 0, i + 4]]);
            assert!((before - after).abs() < 1e-4);
        }
    }

    #[test]
    fn score_depends_only_on_relative_distance() {
        let q = Array3::from_shape_fn((1, 1, 8), |(_, _, i)| (i as f32 * 0.7).sin());
        let k = Array3::from_shape_fn((1, 1, 8), |(_, _, i)| (i as f32 * 1.3).cos());
        let dot = |pq: usize, pk: usize| {
            let a = RopeTable::with(8, 1e4, false, pq, 1).apply(q.view());
            let b = RopeTable::with(8, 1e4, false, pk, 1).apply(k.view());
            (&a * &b).sum()
        };
        assert!((dot(5, 2) - dot(13, 10)).abs() < 1e-4);
    }

    #[test]
    fn yarn_slows_low_frequencies_only() {
        let plain = inv_freq(64, 1e6, false);
        let yarn = inv_freq(64, 1e6, true);
        assert_eq!(plain[0], yarn[0]);
        assert!((yarn[31] - plain[31] / 16.0).abs() <= plain[31] * 1e-6);
    }
}

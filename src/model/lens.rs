//! Reading the residual stream in the vocabulary: the logit lens (nostalgebraist, 2020) and direct logit
//! attribution per head (Elhage et al., "A Mathematical Framework for Transformer Circuits", 2021), both
//! through the model's own final RMSNorm (`model.norm`) and `lm_head`.

use ndarray::{Array1, Array2, ArrayView2, Axis};

use super::linear::{linear, linear_back, Weight};
use super::rms_norm::rms_norm;

/// What the model would predict if it stopped after a layer: lm_head(norm(x)), x: [T, H] -> [T, V].
/// The same two calls as the model's last step, so after the last layer it is `logits` exactly.
pub fn logit_lens(x: ArrayView2<f32>, norm: &Array1<f32>, eps: f64, lm_head: &Weight) -> Array2<f32> {
    linear(rms_norm(x, norm, eps).view(), lm_head)
}

/// The final RMSNorm as it acts on the residual stream `resid` [T, H] of the real run: row t is scaled
/// by norm.weight / rms(resid[t]) (rms with eps, as `rms_norm` takes it), so each head's output can be
/// pushed through the norm alone, the standard linearisation of direct logit attribution.
pub struct FrozenNorm<'a> {
    pub resid: ArrayView2<'a, f32>,
    pub weight: &'a Array1<f32>,
    pub eps: f64,
}

impl FrozenNorm<'_> {
    fn inv_rms(&self) -> Vec<f32> {
        let eps = self.eps as f32;
        self.resid.axis_iter(Axis(0)).map(|row| 1.0 / (row.iter().map(|v| v * v).sum::<f32>() / row.len() as f32 + eps).sqrt()).collect()
    }
}

/// How much each head's output pushes the target token's logit, per position: [T, nH] with
/// head_logit[t, h] = (context[t, h-slice] @ o_proj[:, h-slice]^T) · (norm.weight / rms_t ⊙ lm_head[target_t]).
/// context: [T, nH·d] as o_proj reads it (after any intervention); o_proj: [H, nH·d]; targets: one id per
/// position. Computed as the target's direction pulled back through o_proj (u_t @ o_proj, [T, nH·d]) and
/// summed against each head's slice of the context: the same sum, by one matrix product instead of one
/// hidden vector per position and head.
pub fn head_logit(context: ArrayView2<f32>, o_proj: &Weight, n_heads: usize, norm: &FrozenNorm, lm_head: &Weight, targets: &[u32]) -> Array2<f32> {
    let (t, width) = context.dim();
    let d = width / n_heads;
    let inv_rms = norm.inv_rms();
    let mut u = lm_head.rows(&targets.iter().map(|&id| id as usize).collect::<Vec<_>>()); // (T, H)
    for (mut row, scale) in u.outer_iter_mut().zip(inv_rms) {
        row.zip_mut_with(norm.weight, |u, &w| *u = *u * w * scale);
    }
    let pulled = linear_back(u.view(), o_proj); // (T, nH*d)
    Array2::from_shape_fn((t, n_heads), |(i, h)| (h * d..(h + 1) * d).map(|k| context[[i, k]] * pulled[[i, k]]).sum())
}

/// The top-1 id of each logits row (the first of equal maxima), the default target of `head_logit`.
pub fn top1(logits: ArrayView2<f32>) -> Vec<u32> {
    logits.axis_iter(Axis(0)).map(|row| row.iter().enumerate().fold((0, f32::NEG_INFINITY), |best, (i, &v)| if v > best.1 { (i, v) } else { best }).0 as u32).collect()
}

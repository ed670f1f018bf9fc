//! RMSNorm as MiniMind writes it: `weight * (x * rsqrt(mean(x^2) + eps))`, in f32, over the last dim.
//! Used for input_layernorm, post_attention_layernorm, the final norm, and per head for Q/K norm.

use ndarray::{Array1, Array2, ArrayView2, Axis};

use super::scratch;
use super::wide::wide;

/// x: [N, D] normalised row by row; weight: [D].
pub fn rms_norm(x: ArrayView2<f32>, weight: &Array1<f32>, eps: f64) -> Array2<f32> {
    let copy = match x.as_slice() {
        Some(xs) => {
            let mut v = scratch::take(xs.len());
            v.iter_mut().zip(xs).for_each(|(o, &x)| {
                o.write(x);
            });
            // SAFETY: the zip wrote every entry (v is as long as xs).
            Array2::from_shape_vec(x.raw_dim(), unsafe { scratch::assume_init(v) }).expect("x's shape")
        }
        None => x.to_owned(),
    };
    rms_norm_owned(copy, weight, eps)
}

/// `rms_norm` in place, on an array the caller gives up.
pub fn rms_norm_owned(mut out: Array2<f32>, weight: &Array1<f32>, eps: f64) -> Array2<f32> {
    let eps = eps as f32;
    let d = out.ncols();
    assert_eq!(weight.len(), d, "RMSNorm of rows of {d} by a weight of {}", weight.len());
    if let (Some(rows), Some(weight)) = (out.as_slice_mut(), weight.as_slice()) {
        if d > 0 {
            wide(#[inline(always)] || rows.chunks_exact_mut(d).for_each(|row| norm_row(row, weight, eps)));
            return out;
        }
    }
    for mut row in out.axis_iter_mut(Axis(0)) {
        let mean_sq = row.iter().map(|v| v * v).sum::<f32>() / row.len() as f32;
        let inv = 1.0 / (mean_sq + eps).sqrt();
        row.zip_mut_with(weight, |v, w| *v = *w * (*v * inv));
    }
    out
}

/// One row, in place: the same sums in the same order as the general loop above.
#[inline(always)]
fn norm_row(row: &mut [f32], weight: &[f32], eps: f32) {
    let mean_sq = row.iter().map(|v| v * v).sum::<f32>() / row.len() as f32;
    let inv = 1.0 / (mean_sq + eps).sqrt();
    row.iter_mut().zip(weight).for_each(|(v, w)| *v = *w * (*v * inv));
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn unit_rms_after_norm_with_unit_weight() {
        let x = array![[3.0f32, 4.0], [0.0, 0.0]];
        let y = rms_norm(x.view(), &array![1.0, 1.0], 1e-6);
        let rms = (y.row(0).iter().map(|v| v * v).sum::<f32>() / 2.0).sqrt();
        assert!((rms - 1.0).abs() < 1e-5);
        // an all-zero row stays zero instead of dividing by zero
        assert_eq!(y.row(1).to_vec(), vec![0.0, 0.0]);
    }

    #[test]
    fn weight_multiplies_after_normalising() {
        let x = array![[1.0f32, -1.0]];
        let y = rms_norm(x.view(), &array![2.0, 0.5], 0.0);
        assert!((y[[0, 0]] - 2.0).abs() < 1e-6 && (y[[0, 1]] + 0.5).abs() < 1e-6);
    }
}

//! Lesson math: the core's attention pieces (attend, maskedSoftmax, dotTerms, silu) on hand-set numbers,
//! computed by the same functions the model uses, for the lessons and the views that vary one knob.

use js_sys::Reflect;
use ndarray::{Array3, ArrayView2, ArrayView3};
use serde::Deserialize;
use wasm_bindgen::prelude::*;

use super::{entries, expect_len, from_js, typed_fields};
use crate::model::attention::{mask_in_place, naive_attention, softmax_rows, MaskSpec};
use crate::model::config::{MAX_HEADS, MAX_HEAD_DIM, MAX_TOKENS};
use crate::model::swiglu;

/// Largest [heads, t, s] block the hand-set functions compute (64 MB of f32 per tensor).
const MAX_HAND_SET_SCORES: usize = 1 << 24;

/// Sizes and masks of attention on hand-set numbers: q [t, heads, d], k and v [s, kv_heads, d],
/// scores [heads, t, s]. The masks are the model's: causal -inf for key j after query position
/// prefix_len + i, padding (0 = padding key) -1e9.
#[derive(Deserialize)]
#[serde(default)]
struct AttendSpec {
    t: usize,
    s: usize,
    heads: usize,
    kv_heads: usize,
    d: usize,
    /// Multiplies q·k in `attend` (default 1/sqrt(d), the model's), the given scores in `maskedSoftmax` (default 1).
    scale: Option<f32>,
    causal: bool,
    prefix_len: usize,
    padding: Option<Vec<u8>>,
}

impl Default for AttendSpec {
    fn default() -> Self {
        AttendSpec { t: 0, s: 0, heads: 1, kv_heads: 1, d: 0, scale: None, causal: true, prefix_len: 0, padding: None }
    }
}

impl AttendSpec {
    fn parse(value: JsValue) -> Result<AttendSpec, JsError> {
        let spec: AttendSpec = from_js(value, "attention spec")?;
        let bad = |m: String| Err(JsError::new(&m));
        if spec.t == 0 || spec.s == 0 || spec.t > MAX_TOKENS || spec.s > MAX_TOKENS {
            return bad(format!("t ({}) and s ({}) must be between 1 and {MAX_TOKENS}", spec.t, spec.s));
        }
        if spec.heads == 0 || spec.kv_heads == 0 || spec.heads > MAX_HEADS || !spec.heads.is_multiple_of(spec.kv_heads) {
            return bad(format!("heads ({}) must be a multiple of kv_heads ({}), at most {MAX_HEADS}", spec.heads, spec.kv_heads));
        }
        if spec.d > MAX_HEAD_DIM {
            return bad(format!("d ({}) is over the limit of {MAX_HEAD_DIM}", spec.d));
        }
        if entries(&[spec.heads, spec.t, spec.s], "[heads, t, s]").map_or(true, |n| n > MAX_HAND_SET_SCORES) {
            return bad(format!("{} x {} x {} scores is over the limit of {MAX_HAND_SET_SCORES}", spec.heads, spec.t, spec.s));
        }
        if let Some(p) = &spec.padding {
            if p.len() != spec.s {
                return bad(format!("padding has {} entries but there are {} keys", p.len(), spec.s));
            }
            if p.iter().any(|&b| b > 1) {
                return bad("padding must hold only 0 (padding) and 1 (real token)".into());
            }
        }
        Ok(spec)
    }

    fn mask(&self) -> MaskSpec<'_> {
        MaskSpec { causal: self.causal, prefix_len: self.prefix_len, padding: self.padding.as_deref() }
    }
}

/// Attention on hand-set numbers by the model's explicit path: `{scores, masked, probs}`, each
/// [heads, t, s], and `context` [t, heads, d] when `v` is given (an empty `v` leaves it out).
#[wasm_bindgen]
pub fn attend(q: &[f32], k: &[f32], v: &[f32], spec: JsValue) -> Result<JsValue, JsError> {
    let spec = AttendSpec::parse(spec)?;
    let (t, s, nh, nkv, d) = (spec.t, spec.s, spec.heads, spec.kv_heads, spec.d);
    if d == 0 {
        return Err(JsError::new("d must be at least 1"));
    }
    let (q_len, kv_len) = (entries(&[t, nh, d], "[t, heads, d]")?, entries(&[s, nkv, d], "[s, kv_heads, d]")?);
    expect_len("q", q.len(), q_len, "[t, heads, d]")?;
    expect_len("k", k.len(), kv_len, "[s, kv_heads, d]")?;
    if !v.is_empty() {
        expect_len("v", v.len(), kv_len, "[s, kv_heads, d]")?;
    }
    let q = ArrayView3::from_shape((t, nh, d), q).expect("length checked");
    let k = ArrayView3::from_shape((s, nkv, d), k).expect("length checked");
    let zeros;
    let vv = if v.is_empty() {
        zeros = Array3::zeros((s, nkv, d));
        zeros.view()
    } else {
        ArrayView3::from_shape((s, nkv, d), v).expect("length checked")
    };
    let out = naive_attention(q, k, vv, &spec.mask(), spec.scale.unwrap_or(1.0 / (d as f32).sqrt()));
    let mut fields = vec![
        ("scores", out.scores.as_slice().expect("standard layout")),
        ("masked", out.masked.as_slice().expect("standard layout")),
        ("probs", out.probs.as_slice().expect("standard layout")),
    ];
    if !v.is_empty() {
        fields.push(("context", out.context.as_slice().expect("standard layout")));
    }
    Ok(typed_fields(&fields)?.into())
}

/// Scores given directly, [heads, t, s]: `{masked, probs}`, masked = scores · scale (default 1) plus
/// the masks, probs its row softmax, exactly as the model continues after q·k.
#[wasm_bindgen(js_name = maskedSoftmax)]
pub fn masked_softmax(scores: &[f32], spec: JsValue) -> Result<JsValue, JsError> {
    let spec = AttendSpec::parse(spec)?;
    let (t, s) = (spec.t, spec.s);
    expect_len("scores", scores.len(), entries(&[spec.heads, t, s], "[heads, t, s]")?, "[heads, t, s]")?;
    let scale = spec.scale.unwrap_or(1.0);
    let mask = spec.mask();
    let mut masked = Vec::with_capacity(scores.len());
    let mut probs = Vec::with_capacity(scores.len());
    for block in scores.chunks_exact(t * s) {
        let mut m = ArrayView2::from_shape((t, s), block).expect("length checked").mapv(|x| x * scale);
        mask_in_place(&mut m, &mask);
        probs.extend(softmax_rows(&m).iter());
        masked.extend(m.iter());
    }
    Ok(typed_fields(&[("masked", &masked), ("probs", &probs)])?.into())
}

/// The element-wise products a_i · b_i and their sum: the dot product behind one attention score.
/// `{terms: Float32Array, sum}`.
#[wasm_bindgen(js_name = dotTerms)]
pub fn dot_terms(a: &[f32], b: &[f32]) -> Result<JsValue, JsError> {
    if a.len() != b.len() {
        return Err(JsError::new(&format!("the vectors have {} and {} numbers; a dot product needs the same length", a.len(), b.len())));
    }
    let terms: Vec<f32> = a.iter().zip(b).map(|(x, y)| x * y).collect();
    let sum: f32 = terms.iter().sum();
    let obj = typed_fields(&[("terms", &terms)])?;
    Reflect::set(&obj, &JsValue::from_str("sum"), &JsValue::from_f64(sum as f64)).map_err(|_| JsError::new("cannot pass result to JS"))?;
    Ok(obj.into())
}

/// silu(z) = z · sigmoid(z) of each entry, as the FFN applies it to the gate.
#[wasm_bindgen]
pub fn silu(z: &[f32]) -> Vec<f32> {
    z.iter().map(|&v| swiglu::silu(v)).collect()
}

//! RoPE teaching helpers: the loaded model's rotary tables (its head_dim, rope_theta, YaRN) applied to
//! hand-set head vectors, for the views that show what position alone does to a score.

use ndarray::{Array3, ArrayView2, ArrayView3};
use wasm_bindgen::prelude::*;

use super::expect_len;
use super::session::Session;
use crate::model::attention::head_scores;
use crate::model::config::MAX_TOKENS;
use crate::model::rope::{inv_freq, yarn_active, RopeTable};
use crate::Config;

#[wasm_bindgen]
impl Session {
    /// RoPE's angle p · inv_freq[i] for positions 0..positions and pairs i < d/2, as [positions, d/2],
    /// in f32 as the tables are built. `yarn` turns YaRN on, as inference_rope_scaling does.
    #[wasm_bindgen(js_name = ropeAngles)]
    pub fn rope_angles(&self, positions: usize, yarn: bool) -> Result<Vec<f32>, JsError> {
        self.check_positions(positions)?;
        let c = &self.model.config;
        let freqs = inv_freq(c.head_dim(), c.rope_theta, self.yarn(yarn));
        Ok((0..positions).flat_map(|p| freqs.iter().map(move |&f| p as f32 * f)).collect())
    }

    /// `x`, one or more head vectors ([n, d]), rotated to `position`: x·cos + rotate_half(x)·sin.
    #[wasm_bindgen(js_name = ropeRotate)]
    pub fn rope_rotate(&self, x: &[f32], position: usize, yarn: bool) -> Result<Vec<f32>, JsError> {
        let c = &self.model.config;
        let d = c.head_dim();
        if x.is_empty() || !x.len().is_multiple_of(d) {
            return Err(JsError::new(&format!("x must hold whole vectors of head_dim = {d} numbers, not {}", x.len())));
        }
        self.check_positions(position.saturating_add(1))?;
        let table = RopeTable::with(d, c.rope_theta, self.yarn(yarn), position, 1);
        let x = ArrayView3::from_shape((1, x.len() / d, d), x).expect("length checked");
        Ok(table.apply(x).into_raw_vec_and_offset().0)
    }

    /// The score q·k / sqrt(d) of the same two head vectors after RoPE with q `distance` positions after
    /// k, for distance = 0..=max_distance: what position alone does to attention.
    #[wasm_bindgen(js_name = ropeScores)]
    pub fn rope_scores(&self, q: &[f32], k: &[f32], max_distance: usize, yarn: bool) -> Result<Vec<f32>, JsError> {
        let c = &self.model.config;
        let d = c.head_dim();
        expect_len("q", q.len(), d, "one head vector")?;
        expect_len("k", k.len(), d, "one head vector")?;
        let n = max_distance.saturating_add(1);
        self.check_positions(n)?;
        let table = RopeTable::with(d, c.rope_theta, self.yarn(yarn), 0, n);
        let qs = Array3::from_shape_fn((n, 1, d), |(_, _, i)| q[i]);
        let q_rot = table.apply(qs.view()).into_shape_with_order((n, d)).expect("n x 1 x d"); // (n, d): q at 0..n
        let k_rot = ArrayView2::from_shape((1, d), k).expect("length checked"); // k at position 0: unrotated
        Ok(head_scores(q_rot.view(), k_rot, 1.0 / (d as f32).sqrt()).into_raw_vec_and_offset().0)
    }
}

impl Session {
    /// Whether YaRN changes the frequencies when turned on for this model (its context must exceed YaRN's original one).
    fn yarn(&self, on: bool) -> bool {
        on && yarn_active(&Config { inference_rope_scaling: true, ..self.model.config.clone() })
    }

    fn check_positions(&self, n: usize) -> Result<(), JsError> {
        let limit = self.model.config.max_position_embeddings.min(MAX_TOKENS);
        if n == 0 || n > limit {
            return Err(JsError::new(&format!("positions must be between 1 and {limit}, not {n}")));
        }
        Ok(())
    }
}

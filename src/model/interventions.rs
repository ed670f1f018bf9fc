//! Interventions: changes made to the forward pass on purpose, to see what a part of the model is for.
//! Zero-ablation of attention heads, as TransformerLens and the interpretability literature do it: a
//! knocked-out head's slice of `attn.context` is set to zero at every position, before `o_proj` mixes the
//! heads back into the hidden size, so the head adds nothing to the residual stream. Everything computed
//! after that point is the ablated run's. Activation patching's head patch enters at the same point:
//! a head's slice of the context taken from another run (`ContextPatch`). `block::decoder_layer` applies
//! them in one place.

use std::sync::Arc;

use ndarray::{s, Array3};
use serde::{Deserialize, Serialize};

use super::config::Config;
use crate::Error;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Interventions {
    /// (layer, head) pairs whose attention output is zeroed; a pair given twice is zeroed once.
    pub ablate: Vec<(usize, usize)>,
    /// Heads of one layer whose context comes from another run (activation patching).
    #[serde(skip)]
    pub patch: Option<ContextPatch>,
}

/// In `layer`, each of `heads`' slice of attn.context replaced, at every position, by `source`'s
/// ([T, nH, d], the context of another run over as many tokens).
#[derive(Clone, Debug, PartialEq)]
pub struct ContextPatch {
    pub layer: usize,
    pub heads: Vec<usize>,
    pub source: Arc<Array3<f32>>,
}

impl Interventions {
    /// Knocks out the heads `ablate` names, (layer, head) pairs.
    pub fn ablating(ablate: Vec<(usize, usize)>) -> Interventions {
        Interventions { ablate, patch: None }
    }

    pub fn is_empty(&self) -> bool {
        self.ablate.is_empty() && self.patch.is_none()
    }

    /// Refuses a layer or head the model does not have, naming it and the model's sizes.
    pub fn check(&self, cfg: &Config) -> Result<(), Error> {
        let (layers, heads) = (cfg.num_hidden_layers, cfg.num_attention_heads);
        match self.ablate.iter().find(|&&(l, h)| l >= layers || h >= heads) {
            Some(&(l, h)) => Err(Error::Input(format!(
                "cannot knock out head {l}:{h}: the model has layers 0..{} and heads 0..{} per layer",
                layers - 1,
                heads - 1
            ))),
            None => Ok(()),
        }
    }

    /// Zeroes this layer's ablated heads in context: [T, nH, d], then puts in the patched heads' slices.
    pub fn apply(&self, layer: usize, context: &mut Array3<f32>) {
        for &(_, h) in self.ablate.iter().filter(|&&(l, _)| l == layer) {
            context.slice_mut(s![.., h, ..]).fill(0.0);
        }
        if let Some(patch) = self.patch.as_ref().filter(|p| p.layer == layer) {
            assert_eq!(patch.source.dim(), context.dim(), "a context patch has the shape of the context it replaces");
            for &h in &patch.heads {
                context.slice_mut(s![.., h, ..]).assign(&patch.source.slice(s![.., h, ..]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_heads_of_the_named_layer_are_zeroed() {
        let mut ctx = Array3::from_shape_fn((3, 4, 2), |(t, h, i)| (t * 8 + h * 2 + i + 1) as f32);
        let before = ctx.clone();
        Interventions::ablating(vec![(1, 2), (0, 3), (1, 0)]).apply(1, &mut ctx);
        for ((t, h, i), v) in ctx.indexed_iter() {
            let want = if h == 2 || h == 0 { 0.0 } else { before[[t, h, i]] };
            assert_eq!(*v, want, "t {t} head {h} dim {i}");
        }
    }

    #[test]
    fn a_head_outside_the_model_is_refused_by_name() {
        let cfg = Config::from_json(r#"{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 32}"#).unwrap();
        Interventions::ablating(vec![(1, 3)]).check(&cfg).unwrap();
        let e = Interventions::ablating(vec![(0, 1), (2, 0)]).check(&cfg).unwrap_err().to_string();
        assert!(e.contains("2:0") && e.contains("layers 0..1") && e.contains("heads 0..3"), "{e}");
        let e = Interventions::ablating(vec![(0, 4)]).check(&cfg).unwrap_err().to_string();
        assert!(e.contains("0:4"), "{e}");
    }
}

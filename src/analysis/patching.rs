//! Activation patching (Meng et al. 2022; Wang et al. 2022's path patching in its simplest form): run a
//! corrupted input, put back one activation from the clean run, and see how much of the clean answer
//! returns. The metric is logit[target] − logit[against] at the last position.
//!
//! - `resid_out[l, p]`: the corrupted run with `layers.{l}.out` at position p taken from the clean run;
//! - `head_context[l, h]`: the corrupted run with head h's slice of `attn.context` (before o_proj, every
//!   position) taken from the clean run, through the knock-out's intervention point (`ContextPatch`).
//!
//! Nothing a patch cannot change is computed again: every layer before the patched one is the corrupted
//! run's, so each patched run starts from the corrupted run's residual stream at its layer and runs only
//! the layers from there (L·T + L·nH partial runs instead of as many whole ones; BENCHMARKS.md section 7).
//! The metric reads two rows of lm_head, the same function for every run, so patching the last layer's
//! output at the last position gives the clean metric exactly.

use std::sync::Arc;

use ndarray::{Array2, Array3, ArrayView1};
use serde::Serialize;

use crate::model::attention::MaskSpec;
use crate::model::block::{decoder_layer, LayerRun};
use crate::model::interventions::{ContextPatch, Interventions};
use crate::model::rms_norm::rms_norm;
use crate::model::rope::RopeTable;
use crate::model::{AttentionPath, Model};
use crate::trace::Recorder;
use crate::{Error, Said};

/// What patching measured.
#[derive(Clone, Debug, Serialize)]
pub struct Patching {
    pub clean_metric: f32,
    pub corrupt_metric: f32,
    /// [L, T], row-major.
    pub resid_out: Vec<f32>,
    /// [L, nH], row-major.
    pub head_context: Vec<f32>,
    pub layers: usize,
    pub positions: usize,
    pub heads: usize,
}

/// Most tokens patching takes: it runs L·(T + nH) partial forwards, each of up to L layers over T tokens,
/// so its work grows as T² and a long text would hold the tab for minutes (T = 14 on SmolLM2: 690 partial
/// runs). Within this length both runs' kept activations stay under 1 GB for any model the core takes.
pub const MAX_PATCH_TOKENS: usize = 128;

fn refused(key: &'static str, args: Vec<(&'static str, String)>, text: String) -> Error {
    Error::Refused(Said { key, args, text })
}

/// One run's activations, layer by layer: the residual stream entering each layer (and the last one
/// leaving it), and each layer's context as o_proj reads it.
struct Run {
    resid: Vec<Array2<f32>>,  // L + 1 of (T, H)
    context: Vec<Array3<f32>>, // L of (T, nH, d)
}

/// The pieces every partial run shares.
struct Runner<'a> {
    model: &'a Model,
    rope: RopeTable,
    t: usize,
    target: u32,
    against: u32,
}

impl Runner<'_> {
    /// Layers `from..` on `x`, the residual stream entering layer `from`; `interventions` act in them.
    /// With `keep`, every layer's input and context are kept.
    fn run_from(&self, from: usize, mut x: Array2<f32>, interventions: &Interventions, keep: bool) -> (Array2<f32>, Option<Run>) {
        let cfg = &self.model.config;
        let mut cache = self.model.new_cache();
        let mut kept = keep.then(|| Run { resid: Vec::new(), context: Vec::new() });
        let (n_h, d) = (cfg.num_attention_heads, cfg.head_dim());
        for l in from..cfg.num_hidden_layers {
            let run = LayerRun {
                layer: l,
                rope: &self.rope,
                mask: MaskSpec { causal: true, prefix_len: 0, padding: None },
                flash_tile: AttentionPath::Auto.flash_tile(self.t),
                probe: None,
                interventions,
                keep_context: keep,
            };
            if let Some(k) = kept.as_mut() {
                k.resid.push(x.clone());
            }
            let out = decoder_layer(cfg, &self.model.weights.layers[l], x, &mut cache.layers[l], &run, &mut Recorder::off());
            if let (Some(k), Some(ctx)) = (kept.as_mut(), out.context) {
                k.context.push(ctx.into_shape_with_order((self.t, n_h, d)).expect("[T, nH*d]"));
            }
            x = out.x;
        }
        if let Some(k) = kept.as_mut() {
            k.resid.push(x.clone());
        }
        (x, kept)
    }

    /// logit[target] − logit[against] at the last position of the final residual stream `x`.
    fn metric(&self, x: &Array2<f32>) -> f32 {
        let w = &self.model.weights;
        let last = x.slice(ndarray::s![self.t - 1..self.t, ..]);
        let normed = rms_norm(last, &w.norm, self.model.config.rms_norm_eps); // (1, H)
        let rows = w.lm_head().rows(&[self.target as usize, self.against as usize]); // (2, H)
        let dot = |r: ArrayView1<f32>| normed.row(0).iter().zip(r).map(|(a, b)| a * b).sum::<f32>();
        dot(rows.row(0)) - dot(rows.row(1))
    }
}

/// Patches the clean run's activations into the corrupted run, one at a time; `progress(done, total)`
/// after each partial run.
pub fn patch(model: &Model, clean: &[u32], corrupt: &[u32], target: u32, against: u32, mut progress: impl FnMut(usize, usize)) -> Result<Patching, Error> {
    let cfg = &model.config;
    let (l_n, n_h) = (cfg.num_hidden_layers, cfg.num_attention_heads);
    if clean.len() != corrupt.len() {
        return Err(refused(
            "patch.lengths",
            vec![("clean", clean.len().to_string()), ("corrupt", corrupt.len().to_string())],
            format!("patching needs two inputs of the same length, but the clean one has {} tokens and the corrupted one {}", clean.len(), corrupt.len()),
        ));
    }
    for (name, id) in [("target", target), ("against", against)] {
        if id as usize >= cfg.vocab_size {
            return Err(refused(
                "patch.token",
                vec![("name", name.into()), ("id", id.to_string()), ("vocab", cfg.vocab_size.to_string())],
                format!("the {name} token {id} is outside the model's vocabulary of {} tokens", cfg.vocab_size),
            ));
        }
    }
    let t = clean.len();
    if t > MAX_PATCH_TOKENS {
        return Err(refused(
            "patch.tooLong",
            vec![("tokens", t.to_string()), ("most", MAX_PATCH_TOKENS.to_string())],
            format!("patching runs the model again for every layer and position: {t} tokens is over its limit of {MAX_PATCH_TOKENS}; use a shorter text"),
        ));
    }
    // Each input once through the forward itself, for its checks (empty, ids outside the vocabulary,
    // past the positions, over the memory budget), which name the problem: two runs of the L·(T + nH)
    // partial ones.
    for ids in [clean, corrupt] {
        model.forward(&mut model.new_cache(), ids, None, &Default::default(), &mut Recorder::off())?;
    }
    let none = Interventions::default();
    let runner = Runner { model, rope: RopeTable::new(cfg, 0, t), t, target, against };
    let embed = |ids: &[u32]| model.weights.embed_tokens.rows(&ids.iter().map(|&i| i as usize).collect::<Vec<_>>());
    let (clean_x, clean_run) = runner.run_from(0, embed(clean), &none, true);
    let (corrupt_x, corrupt_run) = runner.run_from(0, embed(corrupt), &none, true);
    let (clean_run, corrupt_run) = (clean_run.expect("kept"), corrupt_run.expect("kept"));
    let (clean_metric, corrupt_metric) = (runner.metric(&clean_x), runner.metric(&corrupt_x));
    let total = l_n * t + l_n * n_h;
    let mut done = 0;

    let mut resid_out = vec![0.0; l_n * t];
    for l in 0..l_n {
        for p in 0..t {
            let mut x = corrupt_run.resid[l + 1].clone();
            x.row_mut(p).assign(&clean_run.resid[l + 1].row(p));
            let (out, _) = runner.run_from(l + 1, x, &none, false);
            resid_out[l * t + p] = runner.metric(&out);
            done += 1;
            progress(done, total);
        }
    }
    let mut head_context = vec![0.0; l_n * n_h];
    for l in 0..l_n {
        let source = Arc::new(clean_run.context[l].clone());
        for hh in 0..n_h {
            let patch = Interventions { ablate: Vec::new(), patch: Some(ContextPatch { layer: l, heads: vec![hh], source: source.clone() }) };
            let (out, _) = runner.run_from(l, corrupt_run.resid[l].clone(), &patch, false);
            head_context[l * n_h + hh] = runner.metric(&out);
            done += 1;
            progress(done, total);
        }
    }
    Ok(Patching { clean_metric, corrupt_metric, resid_out, head_context, layers: l_n, positions: t, heads: n_h })
}

/// Patches `heads` of `layer` at once (every head: the layer's whole context), for the check that this
/// equals patching the context whole; the metric.
pub fn patch_heads(model: &Model, clean: &[u32], corrupt: &[u32], target: u32, against: u32, layer: usize, heads: Vec<usize>) -> Result<f32, Error> {
    let cfg = &model.config;
    let runner = Runner { model, rope: RopeTable::new(cfg, 0, clean.len()), t: clean.len(), target, against };
    let embed = |ids: &[u32]| model.weights.embed_tokens.rows(&ids.iter().map(|&i| i as usize).collect::<Vec<_>>());
    let none = Interventions::default();
    let (_, clean_run) = runner.run_from(0, embed(clean), &none, true);
    let (_, corrupt_run) = runner.run_from(0, embed(corrupt), &none, true);
    let source = Arc::new(clean_run.expect("kept").context[layer].clone());
    let patch = Interventions { ablate: Vec::new(), patch: Some(ContextPatch { layer, heads, source }) };
    let (out, _) = runner.run_from(layer, corrupt_run.expect("kept").resid[layer].clone(), &patch, false);
    Ok(runner.metric(&out))
}

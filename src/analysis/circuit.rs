//! "Find the circuit": the three standard moves of circuit analysis on one prompt, measured live on the
//! loaded model (never written down in advance): direct logit attribution names the heads that push the
//! answer (Elhage et al. 2021; `lens::head_logit`), knocking those heads out says how much the answer
//! depends on them, against knocking out as many heads that push it least (zero-ablation, the page's
//! knock-out), and the logit lens says after which layer the answer is already the top prediction
//! (nostalgebraist 2020). On SmolLM2-135M, "When Mary and John went to the store, John gave a drink to"
//! is the indirect-object identification prompt of Wang et al. (2022).

use ndarray::{s, Array2, ArrayView2};
use serde::Serialize;

use crate::model::lens::logit_lens;
use crate::model::{Interventions, Model, RunOptions};
use crate::trace::{Recorder, Selection};
use crate::Error;

/// One head's direct push on the answer's logit at the last position.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Push {
    pub layer: usize,
    pub head: usize,
    pub push: f32,
}

/// The answer as the logit lens reads it after one layer, at the last position.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LensStep {
    pub layer: usize,
    /// 1 when the answer is the top prediction there.
    pub rank: usize,
    pub probability: f32,
}

#[derive(Clone, Debug, Serialize)]
pub struct Circuit {
    /// The answer: the given token, or the model's top-1 after the last position.
    pub target: u32,
    /// Its probability in the real run.
    pub probability: f32,
    /// The `k` heads that push it most, most first.
    pub heads: Vec<Push>,
    /// Its probability with those heads knocked out.
    pub knocked_out: f32,
    /// The `k` heads whose push is smallest in size, the control.
    pub control_heads: Vec<Push>,
    /// Its probability with the control heads knocked out.
    pub control_knocked_out: f32,
    /// The logit lens after every layer.
    pub lens: Vec<LensStep>,
    /// The first layer from which the answer stays the top prediction to the end, if it is the model's top-1.
    pub answer_layer: Option<usize>,
}

/// Softmax of one logits row, in f64 for the sum; the target's probability and rank.
fn read(row: &[f32], target: u32) -> (f32, usize) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = row.iter().map(|&v| ((v - max) as f64).exp()).sum();
    let t = row[target as usize];
    let rank = 1 + row.iter().filter(|&&v| v > t).count();
    ((((t - max) as f64).exp() / sum) as f32, rank)
}

/// The last row of the logits with `ablate` knocked out.
fn last_logits(model: &Model, ids: &[u32], ablate: Vec<(usize, usize)>) -> Result<Vec<f32>, Error> {
    let opts = RunOptions { interventions: Interventions::ablating(ablate), ..RunOptions::default() };
    let (logits, _) = model.forward(&mut model.new_cache(), ids, None, &opts, &mut Recorder::new(Selection::none()))?;
    Ok(logits.row(logits.nrows() - 1).to_vec())
}

/// Runs the three moves on `ids` toward `target` (None: the model's own top-1 after the last token),
/// with the `k` heads that push it most.
pub fn find(model: &Model, ids: &[u32], target: Option<u32>, k: usize) -> Result<Circuit, Error> {
    let cfg = &model.config;
    if let Some(t) = target.filter(|&t| t as usize >= cfg.vocab_size) {
        return Err(Error::Input(format!("target token {t} is outside the vocabulary of {} tokens", cfg.vocab_size)));
    }
    let (n_layers, n_heads) = (cfg.num_hidden_layers, cfg.num_attention_heads);
    let clean = last_logits(model, ids, Vec::new())?;
    let target = target.unwrap_or_else(|| crate::model::lens::top1(ArrayView2::from_shape((1, clean.len()), &clean).expect("one row"))[0]);
    let (probability, _) = read(&clean, target);

    // Each layer's output and each head's push toward the target at every position; the last row is read.
    let selection = Selection { head_logit: true, target_token: Some(target), heads: Some(Vec::new()), ..Selection::all() };
    let trace = model.trace(ids, None, 0, &RunOptions::default(), selection)?.trace;
    let entry = |name: String| trace.get(&name).ok_or_else(|| Error::Input(format!("the run recorded no {name}")));
    let last = ids.len() - 1;
    let mut pushes = Vec::with_capacity(n_layers * n_heads);
    let mut outs = Array2::<f32>::zeros((n_layers, cfg.hidden_size));
    for l in 0..n_layers {
        let hl = entry(format!("layers.{l}.attn.head_logit"))?;
        pushes.extend((0..n_heads).map(|h| Push { layer: l, head: h, push: hl.data[last * n_heads + h] }));
        let out = entry(format!("layers.{l}.out"))?;
        outs.row_mut(l).assign(&ndarray::ArrayView1::from(&out.data[last * cfg.hidden_size..(last + 1) * cfg.hidden_size]));
    }
    let k = k.clamp(1, pushes.len());
    let mut ranked = pushes.clone();
    ranked.sort_by(|a, b| b.push.total_cmp(&a.push));
    let heads: Vec<Push> = ranked[..k].to_vec();
    ranked.sort_by(|a, b| a.push.abs().total_cmp(&b.push.abs()));
    let control_heads: Vec<Push> = ranked[..k].to_vec();
    let pairs = |hs: &[Push]| hs.iter().map(|p| (p.layer, p.head)).collect::<Vec<_>>();
    let (knocked_out, _) = read(&last_logits(model, ids, pairs(&heads))?, target);
    let (control_knocked_out, _) = read(&last_logits(model, ids, pairs(&control_heads))?, target);

    let lens_logits = logit_lens(outs.slice(s![.., ..]), &model.weights.norm, cfg.rms_norm_eps, model.weights.lm_head()); // (L, V)
    let lens: Vec<LensStep> = lens_logits
        .outer_iter()
        .enumerate()
        .map(|(layer, row)| {
            let (probability, rank) = read(row.as_slice().expect("a row of an owned array"), target);
            LensStep { layer, rank, probability }
        })
        .collect();
    let answer_layer = lens.iter().rposition(|s| s.rank != 1).map_or(Some(0), |l| (l + 1 < n_layers).then_some(l + 1));
    Ok(Circuit { target, probability, heads, knocked_out, control_heads, control_knocked_out, lens, answer_layer })
}

//! One MiniMind decoder layer (MiniMindBlock): input_layernorm -> attention (q/k/v proj, Q/K norm,
//! RoPE, KV cache, repeat_kv, scores, masks, softmax, probs @ V, o_proj) -> residual ->
//! post_attention_layernorm -> SwiGLU FFN -> residual. Records each intermediate by contract name.
//! Interventions enter in one place: on the context, after attention and before o_proj.

use ndarray::{Array2, Array3, Axis};

use super::attention::{self, MaskSpec};
use super::config::Config;
use super::flash::{flash_attention, FlashRecord};
use super::interventions::Interventions;
use super::kv_cache::LayerCache;
use super::linear::linear;
use super::rms_norm::{rms_norm, rms_norm_owned};
use super::rope::RopeTable;
use super::scratch;
use super::moe::moe_feed_forward;
use super::swiglu::swiglu;
use crate::trace::Recorder;
use crate::weights::{LayerWeights, Mlp};

/// How this layer's attention runs and what extra it reports.
pub struct LayerRun<'a> {
    pub layer: usize,
    pub rope: &'a RopeTable,
    pub mask: MaskSpec<'a>,
    /// Some(tile): the flash path; None: the explicit path.
    pub flash_tile: Option<usize>,
    /// (head, row, tile): record the flash walk of this row (for the flash view).
    pub probe: Option<(usize, usize, usize)>,
    pub interventions: &'a Interventions,
    /// Hand back the context o_proj read (for direct logit attribution).
    pub keep_context: bool,
}

pub struct LayerOut {
    pub x: Array2<f32>,
    pub flash: Option<(FlashRecord, f32)>,
    /// [T, nH*d], after the interventions; when `keep_context` asked for it.
    pub context: Option<Array2<f32>>,
}

/// x: [T, H] -> [T, H]. The cache grows by T positions.
pub fn decoder_layer(cfg: &Config, w: &LayerWeights, x: Array2<f32>, cache: &mut LayerCache, run: &LayerRun, rec: &mut Recorder) -> LayerOut {
    let (t, _) = x.dim();
    let (n_h, n_kv, d) = (cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim());
    let l = run.layer;
    let on = rec.wants(Some(l));
    let put = |rec: &mut Recorder, name: &str, shape: &[usize], data: &[f32]| {
        if on {
            rec.put(format!("layers.{l}.{name}"), shape, data.to_vec());
        }
    };

    let h = rms_norm(x.view(), &w.input_layernorm, cfg.rms_norm_eps);
    put(rec, "input_norm", &[t, cfg.hidden_size], h.as_slice().unwrap());

    let (mut q, mut k, mut v) = (linear(h.view(), &w.q_proj), linear(h.view(), &w.k_proj), linear(h.view(), &w.v_proj));
    if let Some([q_bias, k_bias, v_bias]) = &w.qkv_bias {
        // Qwen2's projections are nn.Linear with bias: y = x W^T + b, b added to every row.
        q += q_bias;
        k += k_bias;
        v += v_bias;
    }
    let q = q.into_shape_with_order((t, n_h, d)).unwrap(); // (T, nH, d)
    let k = k.into_shape_with_order((t, n_kv, d)).unwrap(); // (T, nKV, d)
    let v = v.into_shape_with_order((t, n_kv, d)).unwrap(); // (T, nKV, d)
    put(rec, "attn.q", &[t, n_h, d], q.as_slice().unwrap());
    put(rec, "attn.k", &[t, n_kv, d], k.as_slice().unwrap());
    put(rec, "attn.v", &[t, n_kv, d], v.as_slice().unwrap());
    // Each large intermediate goes back to the scratch pool once read for the last time (recorded
    // ones have been copied by then), for the next product or norm to write into.
    scratch::recycle(h);

    let head_norm = |x: Array3<f32>, weight: &Option<ndarray::Array1<f32>>| -> Array3<f32> {
        match weight {
            Some(wn) => {
                let (a, b, c) = x.dim();
                let flat = x.into_shape_with_order((a * b, c)).unwrap(); // (T*heads, d)
                rms_norm_owned(flat, wn, cfg.rms_norm_eps).into_shape_with_order((a, b, c)).unwrap()
            }
            None => x,
        }
    };
    let q = head_norm(q, &w.q_norm);
    let k = head_norm(k, &w.k_norm);
    put(rec, "attn.q_norm", &[t, n_h, d], q.as_slice().unwrap());
    put(rec, "attn.k_norm", &[t, n_kv, d], k.as_slice().unwrap());

    let (q_rope, k_rope) = (run.rope.apply(q.view()), run.rope.apply(k.view()));
    scratch::recycle(q);
    scratch::recycle(k);
    let (q, k) = (q_rope, k_rope);
    put(rec, "attn.q_rope", &[t, n_h, d], q.as_slice().unwrap());
    put(rec, "attn.k_rope", &[t, n_kv, d], k.as_slice().unwrap());

    cache.append(
        k.view().into_shape_with_order((t, n_kv * d)).unwrap(),
        v.view().into_shape_with_order((t, n_kv * d)).unwrap(),
    );
    scratch::recycle(k);
    scratch::recycle(v);
    let (k_all, v_all) = (cache.k(), cache.v()); // (S, nKV, d)
    let s_len = k_all.dim().0;
    put(rec, "attn.k_cache", &[s_len, n_kv, d], k_all.as_slice().unwrap());
    put(rec, "attn.v_cache", &[s_len, n_kv, d], v_all.as_slice().unwrap());

    let scale = 1.0 / (d as f32).sqrt();
    let n_rep = cfg.n_rep();
    // The [nH, T, S] tables exist only for the heads the caller asked for: the explicit path picks
    // them from its full tables, the flash path (which never builds them) computes them head by head.
    let heads = rec.heads(n_h);
    let (mut context, tables) = match run.flash_tile {
        None => {
            let all = attention::naive_attention(q.view(), k_all, v_all, &run.mask, scale);
            // Every head in order (the default) hands the arrays over; a choice copies head by head,
            // contiguous slices (ndarray's `select` took 30 % of a T = 512 run in wasm).
            let pick = |a: Array3<f32>| -> Vec<f32> {
                if heads.iter().copied().eq(0..n_h) {
                    return a.into_raw_vec_and_offset().0;
                }
                let mut v = Vec::with_capacity(heads.len() * t * s_len);
                for &hh in &heads {
                    v.extend(a.index_axis(Axis(0), hh).iter());
                }
                v
            };
            let tables = on.then(|| [pick(all.scores), pick(all.masked), pick(all.probs)]);
            (all.context, tables)
        }
        Some(tile) => {
            let (ctx, _) = flash_attention(q.view(), k_all, v_all, &run.mask, scale, tile, None);
            let tables = on.then(|| {
                let mut parts = [Vec::new(), Vec::new(), Vec::new()];
                for &hh in &heads {
                    let one = attention::head(q.view(), k_all, v_all, hh, n_rep, &run.mask, scale);
                    parts[0].extend(one.scores.iter());
                    parts[1].extend(one.masked.iter());
                    parts[2].extend(one.probs.iter());
                }
                parts
            });
            (ctx, tables)
        }
    };
    if let Some(parts) = tables {
        let tag = (heads.len() != n_h).then(|| heads.clone());
        let shape = [heads.len(), t, s_len];
        for (name, data) in ["attn.scores", "attn.masked_scores", "attn.probs"].into_iter().zip(parts) {
            rec.put_heads(format!("layers.{l}.{name}"), &shape, data, tag.clone());
        }
    }
    // The one place interventions enter the forward pass: everything from attn.context on is the
    // intervened run's.
    run.interventions.apply(l, &mut context);
    put(rec, "attn.context", &[t, n_h, d], context.as_slice().unwrap());

    let flash = run.probe.filter(|&(hh, row, _)| hh < n_h && row < t).map(|(hh, row, tile)| {
        let (_, record) = flash_attention(q.view(), k_all, v_all, &run.mask, scale, tile, Some((hh, row)));
        let record = record.expect("probe is in range");
        let naive = attention::head(q.view(), k_all, v_all, hh, n_rep, &run.mask, scale);
        let diff = naive.context.row(row).iter().zip(&record.output).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
        (record, diff)
    });

    scratch::recycle(q);

    let ctx_flat = context.into_shape_with_order((t, n_h * d)).unwrap(); // (T, nH*d)
    let attn_out = linear(ctx_flat.view(), &w.o_proj);
    let kept = run.keep_context.then(|| ctx_flat.clone());
    scratch::recycle(ctx_flat);
    put(rec, "attn.out", &[t, cfg.hidden_size], attn_out.as_slice().unwrap());
    let x = x + &attn_out;
    scratch::recycle(attn_out);
    put(rec, "attn.residual", &[t, cfg.hidden_size], x.as_slice().unwrap());

    let g = rms_norm(x.view(), &w.post_attention_layernorm, cfg.rms_norm_eps);
    put(rec, "post_norm", &[t, cfg.hidden_size], g.as_slice().unwrap());
    // The dense FFN, or MiniMind's mixture of experts (moe.rs), which records its routing instead.
    let ffn_out = match &w.mlp {
        Mlp::Dense(f) => {
            let ffn = swiglu(g.view(), f);
            let inter = cfg.intermediate_size();
            put(rec, "ffn.gate", &[t, inter], ffn.gate.as_slice().unwrap());
            put(rec, "ffn.up", &[t, inter], ffn.up.as_slice().unwrap());
            put(rec, "ffn.act", &[t, inter], ffn.act.as_slice().unwrap());
            [ffn.gate, ffn.up, ffn.act].into_iter().for_each(scratch::recycle);
            ffn.out
        }
        Mlp::Moe(m) => {
            let (e, k) = (cfg.num_experts, cfg.num_experts_per_tok);
            let moe = moe_feed_forward(g.view(), m, k, cfg.norm_topk_prob);
            let index: Vec<f32> = moe.expert_index.iter().map(|&i| i as f32).collect();
            put(rec, "ffn.router_logits", &[t, e], moe.router_logits.as_slice().unwrap());
            put(rec, "ffn.router_probs", &[t, e], moe.router_probs.as_slice().unwrap());
            put(rec, "ffn.expert_index", &[t, k], &index);
            put(rec, "ffn.expert_weight", &[t, k], moe.expert_weight.as_slice().unwrap());
            put(rec, "ffn.expert_out", &[t, k, cfg.hidden_size], moe.expert_out.as_slice().unwrap());
            moe.out
        }
    };
    scratch::recycle(g);
    put(rec, "ffn.out", &[t, cfg.hidden_size], ffn_out.as_slice().unwrap());
    let x = x + &ffn_out;
    scratch::recycle(ffn_out);
    put(rec, "out", &[t, cfg.hidden_size], x.as_slice().unwrap());
    LayerOut { x, flash, context: kept }
}

//! The whole model (MiniMindForCausalLM): embed_tokens -> decoder layers -> norm -> lm_head, for T new
//! tokens after P cached ones. `Model::trace` runs the contract's two-call protocol (prefix, then traced).

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::attention::MaskSpec;
use super::block::{decoder_layer, LayerRun};
use super::config::{Config, MAX_TOKENS};
use super::flash::FlashRecord;
use super::interventions::Interventions;
use super::kv_cache::KvCache;
use super::lens::{self, FrozenNorm};
use super::linear::{linear, Weight};
use super::rms_norm::rms_norm;
use super::rope::RopeTable;
use crate::trace::{Recorder, Selection, Trace};
use crate::weights::Weights;
use crate::{Error, Said};

/// From this many keys on, `Auto` takes the flash path.
pub const AUTO_FLASH_MIN_KEYS: usize = 1024;
pub const DEFAULT_TILE: usize = 64;
/// Largest trace one call may record, in bytes of f32; past it the caller must select layers or heads.
pub const MAX_TRACE_BYTES: u64 = 1 << 30;
/// What one run may hold at once: the model's weights, the trace it records and its working set
/// together. wasm32 addresses 4 GiB in all; the last GiB is left to the code, the tokenizer, the
/// allocator's slack and the page's own copies of what a run hands over.
pub const MAX_MEMORY_BYTES: u64 = 3 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum AttentionPath {
    /// Explicit below AUTO_FLASH_MIN_KEYS keys, flash from there on.
    Auto,
    Naive,
    Flash { tile: usize },
}

impl AttentionPath {
    /// Some(tile) when a call over `s_len` keys takes the flash path, None for the explicit one.
    pub fn flash_tile(self, s_len: usize) -> Option<usize> {
        match self {
            AttentionPath::Naive => None,
            AttentionPath::Flash { tile } => Some(tile.max(1)),
            AttentionPath::Auto => (s_len >= AUTO_FLASH_MIN_KEYS).then_some(DEFAULT_TILE),
        }
    }
}

/// Record how one query row of one head walks the key tiles on the flash path.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct FlashProbe {
    pub layer: usize,
    pub head: usize,
    pub row: usize,
    pub tile: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct RunOptions {
    /// MiniMind is always causal; turning it off shows the "peeking at the future" leak.
    pub causal: bool,
    pub path: AttentionPath,
    pub probe: Option<FlashProbe>,
    pub interventions: Interventions,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { causal: true, path: AttentionPath::Auto, probe: None, interventions: Interventions::default() }
    }
}

/// A probe's walk and its max |flash - naive| over the row's context vector.
#[derive(Clone, Debug, Serialize)]
pub struct FlashReport {
    pub layer: usize,
    pub record: FlashRecord,
    pub max_abs_diff: f32,
}

pub struct TraceOut {
    pub trace: Trace,
    pub logits: Array2<f32>, // (T, V)
    pub flash: Option<FlashReport>,
    pub cache: KvCache,
}

#[derive(Clone, Debug)]
pub struct Model {
    pub config: Config,
    pub weights: Weights,
}

impl Model {
    pub fn new(config: Config, weights: Weights) -> Model {
        Model { config, weights }
    }

    pub fn new_cache(&self) -> KvCache {
        KvCache::new(&self.config)
    }

    /// Runs `ids` (T new tokens) after the cache's P positions; `mask` covers all P + T positions.
    pub fn forward(&self, cache: &mut KvCache, ids: &[u32], mask: Option<&[u8]>, opts: &RunOptions, rec: &mut Recorder) -> Result<(Array2<f32>, Option<FlashReport>), Error> {
        let cfg = &self.config;
        let p = cache.len();
        check_input(cfg, p, ids, mask, rec)?;
        opts.interventions.check(cfg)?;
        let (t, s_len) = (ids.len(), p + ids.len());
        let flash_tile = opts.path.flash_tile(s_len);
        check_memory(cfg, t, s_len, rec, flash_tile)?;
        let hsz = cfg.hidden_size;

        let mut x = self.weights.embed_tokens.rows(&ids.iter().map(|&i| i as usize).collect::<Vec<_>>()); // (T, H)
        let rope = RopeTable::new(cfg, p, t);
        if rec.wants(None) {
            rec.put("embed".into(), &[t, hsz], x.as_slice().unwrap().to_vec());
            rec.put("rope.cos".into(), &[t, cfg.head_dim()], rope.cos.as_slice().unwrap().to_vec());
            rec.put("rope.sin".into(), &[t, cfg.head_dim()], rope.sin.as_slice().unwrap().to_vec());
        }
        let mut report = None;
        let mut contexts = Vec::new(); // (layer, [T, nH*d]) for head_logit, which needs the final residual
        for (l, w) in self.weights.layers.iter().enumerate() {
            let run = LayerRun {
                layer: l,
                rope: &rope,
                mask: MaskSpec { causal: opts.causal, prefix_len: p, padding: mask },
                flash_tile,
                probe: opts.probe.filter(|pr| pr.layer == l).map(|pr| (pr.head, pr.row, pr.tile.max(1))),
                interventions: &opts.interventions,
                keep_context: rec.wants_head_logit(l),
            };
            let out = decoder_layer(cfg, w, x, &mut cache.layers[l], &run, rec);
            x = out.x;
            finite(&format!("layers.{l}.out"), &x)?;
            if rec.wants_logit_lens(l) {
                let lens = lens::logit_lens(x.view(), &self.weights.norm, cfg.rms_norm_eps, self.weights.lm_head()); // (T, V)
                rec.put(format!("layers.{l}.logit_lens"), &[t, cfg.vocab_size], lens.into_raw_vec_and_offset().0);
            }
            rec.layer_done(l + 1, cfg.num_hidden_layers);
            if let Some(ctx) = out.context {
                contexts.push((l, ctx));
            }
            if let Some((record, max_abs_diff)) = out.flash {
                report = Some(FlashReport { layer: l, record, max_abs_diff });
            }
        }
        let resid = x; // (T, H): the residual stream the final norm reads
        let x = rms_norm(resid.view(), &self.weights.norm, cfg.rms_norm_eps);
        let logits = linear(x.view(), self.weights.lm_head()); // (T, V)
        finite("logits", &logits)?;
        if rec.wants(None) {
            rec.put("final_norm".into(), &[t, hsz], x.as_slice().unwrap().to_vec());
            rec.put("logits".into(), &[t, cfg.vocab_size], logits.as_slice().unwrap().to_vec());
        }
        if !contexts.is_empty() {
            let targets = rec.selection.target_token.map_or_else(|| lens::top1(logits.view()), |id| vec![id; t]);
            let norm = FrozenNorm { resid: resid.view(), weight: &self.weights.norm, eps: cfg.rms_norm_eps };
            for (l, ctx) in contexts {
                let hl = lens::head_logit(ctx.view(), &self.weights.layers[l].o_proj, cfg.num_attention_heads, &norm, self.weights.lm_head(), &targets); // (T, nH)
                rec.put(format!("layers.{l}.attn.head_logit"), &[t, cfg.num_attention_heads], hl.into_raw_vec_and_offset().0);
            }
        }
        Ok((logits, report))
    }

    /// The contract's protocol: ids[..prefix_len] fill the cache unrecorded, then ids[prefix_len..] are traced.
    pub fn trace(&self, ids: &[u32], mask: Option<&[u8]>, prefix_len: usize, opts: &RunOptions, selection: Selection) -> Result<TraceOut, Error> {
        self.trace_into(ids, mask, prefix_len, opts, Recorder::new(selection))
    }

    /// `trace` with a recorder of the caller's (one that reports progress, say).
    pub fn trace_into(&self, ids: &[u32], mask: Option<&[u8]>, prefix_len: usize, opts: &RunOptions, mut rec: Recorder) -> Result<TraceOut, Error> {
        check_trace_args(ids, mask, prefix_len)?;
        let mut cache = self.new_cache();
        if prefix_len > 0 {
            let prefix_mask = mask.map(|m| &m[..prefix_len]);
            let prefix_opts = RunOptions { probe: None, ..opts.clone() };
            self.forward(&mut cache, &ids[..prefix_len], prefix_mask, &prefix_opts, &mut Recorder::off())?;
        }
        let (logits, flash) = self.forward(&mut cache, &ids[prefix_len..], mask, opts, &mut rec)?;
        Ok(TraceOut { trace: rec.trace, logits, flash, cache })
    }
}


/// Checks the trace protocol's arguments: at least one traced token, a mask over all ids.
pub(crate) fn check_trace_args(ids: &[u32], mask: Option<&[u8]>, prefix_len: usize) -> Result<(), Error> {
    if prefix_len >= ids.len() {
        return Err(Error::Input(format!(
            "prefix_len ({prefix_len}) must be smaller than the number of ids ({}), so at least one token is traced",
            ids.len()
        )));
    }
    if let Some(m) = mask {
        if m.len() != ids.len() {
            return Err(Error::Input(format!("attention_mask has {} entries but there are {} ids", m.len(), ids.len())));
        }
    }
    Ok(())
}

/// Checks one forward call (T = ids.len() new tokens after p cached ones) before anything is allocated.
pub(crate) fn check_input(cfg: &Config, p: usize, ids: &[u32], mask: Option<&[u8]>, rec: &Recorder) -> Result<(), Error> {
    if ids.is_empty() {
        return Err(Error::Input("no tokens to run".into()));
    }
    let s_len = p + ids.len();
    // A long paste meets these two first: said so that the page can put them in the reader's language.
    let limit = |key, limit: usize, text| Error::Budget(Said { key, args: vec![("tokens", s_len.to_string()), ("limit", limit.to_string())], text });
    if s_len > MAX_TOKENS {
        return Err(limit("tooManyTokens", MAX_TOKENS, format!("{s_len} tokens is over the limit of {MAX_TOKENS}")));
    }
    if s_len > cfg.max_position_embeddings {
        return Err(limit("pastPositions", cfg.max_position_embeddings, format!(
            "{s_len} tokens is more than the model's max_position_embeddings ({})",
            cfg.max_position_embeddings
        )));
    }
    if let Some((pos, id)) = ids.iter().enumerate().find(|(_, &id)| id as usize >= cfg.vocab_size) {
        return Err(Error::Input(format!("token id {id} at position {} is out of the vocabulary (size {})", p + pos, cfg.vocab_size)));
    }
    if let Some(m) = mask {
        if m.len() != s_len {
            return Err(Error::Input(format!("attention_mask has {} entries but the sequence has {s_len} positions", m.len())));
        }
        if let Some(pos) = m.iter().position(|&b| b > 1) {
            return Err(Error::Input(format!("attention_mask must hold only 0 and 1; position {pos} holds {}", m[pos])));
        }
    }
    if let Some(id) = rec.selection.target_token.filter(|&id| id as usize >= cfg.vocab_size) {
        return Err(Error::Input(format!("target token {id} is out of the vocabulary (size {})", cfg.vocab_size)));
    }
    let bytes = trace_bytes(cfg, ids.len(), s_len, rec);
    if bytes > MAX_TRACE_BYTES {
        // The logit lens is [T, vocab] per layer: often most of the trace, so it is named when asked.
        let lens_bytes = rec.selection.logit_lens.then(|| {
            let layers = (0..cfg.num_hidden_layers).filter(|&l| rec.wants_logit_lens(l)).count();
            (layers * ids.len()) as u64 * cfg.vocab_size as u64 * 4
        });
        let lens = lens_bytes.map(|b| {
            let gb = b as f64 / 1e9;
            format!(" (the logit lens {gb:.2} GB of it); record fewer layers or heads, or leave out the logit lens")
        });
        // The most new tokens whose trace, as recorded, fits: the reader learns how far to shorten.
        let past = s_len - ids.len();
        let (mut lo, mut hi) = (0, ids.len()); // fits(lo) (or lo = 0), !fits(hi)
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if trace_bytes(cfg, mid, past + mid, rec) <= MAX_TRACE_BYTES {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let text = format!(
            "recording this trace needs {:.2} GB{} (the limit is {:.2} GB); at most {lo} tokens fit",
            bytes as f64 / 1e9,
            lens.unwrap_or_else(|| "; record fewer layers or heads".into()),
            MAX_TRACE_BYTES as f64 / 1e9
        );
        let mut args = vec![("need", bytes.to_string()), ("most", MAX_TRACE_BYTES.to_string()), ("fits", lo.to_string()), ("tokens", ids.len().to_string())];
        args.extend(lens_bytes.map(|b| ("lens", b.to_string())));
        let key = if lens_bytes.is_some() { "traceBudgetLens" } else { "traceBudget" };
        return Err(Error::Budget(Said { key, args, text }));
    }
    Ok(())
}

/// Checks that the model, this call's trace and its working set fit MAX_MEMORY_BYTES together, before
/// anything is allocated: each may be within its own limit and the three still not fit in wasm32.
fn check_memory(cfg: &Config, t: usize, s_len: usize, rec: &Recorder, flash_tile: Option<usize>) -> Result<(), Error> {
    let model = cfg.weight_bytes_held();
    let past = s_len - t;
    let parts = |n: usize| (trace_bytes(cfg, n, past + n, rec), working_bytes(cfg, n, past + n, flash_tile) + readout_bytes(cfg, n, rec));
    let (trace, working) = parts(t);
    let total = model + trace + working;
    if total > MAX_MEMORY_BYTES {
        // The most new tokens that would fit this run as recorded (memory grows with T), named so
        // that the reader knows how far to shorten the text; 0: not even one.
        let fits = |n: usize| {
            let (tr, wk) = parts(n);
            model + tr + wk <= MAX_MEMORY_BYTES
        };
        let (mut lo, mut hi) = (0, t); // fits(lo) (or lo = 0), !fits(hi)
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let gb = |b: u64| b as f64 / 1e9;
        let text = format!(
            "this run needs {:.2} GB at once (the model's weights {:.2} GB, the trace {:.2} GB, working memory {:.2} GB), over the budget of {:.2} GB; {}",
            gb(total),
            gb(model),
            gb(trace),
            gb(working),
            gb(MAX_MEMORY_BYTES),
            if lo > 0 { format!("at most {lo} tokens fit: use fewer tokens or record fewer layers or heads") } else { "not even one token fits beside this model".into() }
        );
        let key = if lo > 0 { "runMemory" } else { "runMemoryModel" };
        let args = [("need", total), ("weights", model), ("trace", trace), ("work", working), ("most", MAX_MEMORY_BYTES), ("fits", lo as u64), ("tokens", t as u64)];
        return Err(Error::Budget(Said { key, args: args.iter().map(|&(k, v)| (k, v.to_string())).collect(), text }));
    }
    Ok(())
}

/// Floats one layer's FFN holds (and records) beyond its [T, H] output: gate, up and act of the dense
/// FFN; for a mixture of experts the router's logits and probabilities, the chosen experts and weights,
/// their outputs [T, k, H], and one expert's gate, up and act at most for all T tokens.
fn ffn_floats(cfg: &Config, t: u64, i: u64) -> u64 {
    if !cfg.use_moe {
        return 3 * t * i;
    }
    let (e, k) = (cfg.num_experts as u64, cfg.num_experts_per_tok as u64);
    2 * t * e + 2 * t * k + t * k * cfg.hidden_size as u64 + 3 * t * cfg.moe_intermediate_size() as u64
}

/// Estimated bytes a forward call allocates besides its trace, at its peak: the KV cache of every
/// layer, one layer's activations, and its attention tables. The explicit path builds the scores, the
/// masked scores and the probabilities, [nH, T, S] each, for every head, whichever heads the recorder
/// keeps, plus one head's three [T, S] temporaries (BENCHMARKS.md §3 measures that peak); the flash
/// path holds at most one tile of keys per head and row. Then the logits, [T, V].
fn working_bytes(cfg: &Config, t: usize, s_len: usize, flash_tile: Option<usize>) -> u64 {
    let (t, s) = (t as u64, s_len as u64);
    let (h, d, i) = (cfg.hidden_size as u64, cfg.head_dim() as u64, cfg.intermediate_size() as u64);
    let (nh, nkv, layers) = (cfg.num_attention_heads as u64, cfg.num_key_value_heads as u64, cfg.num_hidden_layers as u64);
    let cache = 2 * layers * s * nkv * d;
    let attention = match flash_tile {
        None => 3 * nh * t * s + 3 * t * s,
        Some(tile) => 3 * nh * t * (tile as u64).min(s),
    };
    let activations = 4 * t * h + 2 * t * nh * d + 2 * t * nkv * d + ffn_floats(cfg, t, i);
    4 * (cache + activations + attention + t * cfg.vocab_size as u64)
}

/// Working memory of the readouts besides what they record: head_logit keeps each recorded layer's
/// context until the final residual is known, plus its [T, H] and [T, nH*d] products (and, where
/// weights are packed, o_proj's transposed panels, which `linear_back` builds for the call); the
/// logit lens builds one normed [T, H] copy.
fn readout_bytes(cfg: &Config, t: usize, rec: &Recorder) -> u64 {
    let (t, h, width) = (t as u64, cfg.hidden_size as u64, (cfg.num_attention_heads * cfg.head_dim()) as u64);
    let layers = (0..cfg.num_hidden_layers).filter(|&l| rec.wants_head_logit(l)).count() as u64;
    let transposed = Weight::back_floats(h, width);
    let head_logit = if layers > 0 { layers * t * width + t * h + t * width + transposed } else { 0 };
    let lens = if rec.selection.logit_lens { t * h } else { 0 };
    4 * (head_logit + lens)
}

/// Estimated bytes of the trace the recorder will keep.
fn trace_bytes(cfg: &Config, t: usize, s_len: usize, rec: &Recorder) -> u64 {
    let (t, s) = (t as u64, s_len as u64);
    let (h, d, i) = (cfg.hidden_size as u64, cfg.head_dim() as u64, cfg.intermediate_size() as u64);
    let (nh, nkv) = (cfg.num_attention_heads as u64, cfg.num_key_value_heads as u64);
    let layers = (0..cfg.num_hidden_layers).filter(|&l| rec.wants(Some(l))).count() as u64;
    let heads = rec.heads(cfg.num_attention_heads).len() as u64;
    let readouts = if rec.selection.logit_lens { t * cfg.vocab_size as u64 } else { 0 } + if rec.selection.head_logit { t * nh } else { 0 };
    let per_layer = 6 * t * h + 3 * t * nh * d + 4 * t * nkv * d + 2 * s * nkv * d + 3 * heads * t * s + ffn_floats(cfg, t, i) + readouts;
    let global = if rec.wants(None) { 2 * t * h + 2 * t * d + t * cfg.vocab_size as u64 } else { 0 };
    4 * (layers * per_layer + global)
}

/// Finite weights can still give infinities or NaN (a weight of 3e37 times a few hundred overflows
/// f32): a run that does is refused, naming where, rather than drawn as NaN or as zeros.
pub(crate) fn finite(name: &str, data: &Array2<f32>) -> Result<(), Error> {
    // The common case first, in lanes that vectorise: v * 0 is 0 for every finite v and NaN for an
    // infinity or NaN, so 16 running sums stay 0 exactly when every number is finite (the logits'
    // check took 1.4 % of a wasm forward at T = 128 one number at a time).
    if let Some(all) = data.as_slice_memory_order() {
        let mut lanes = [0.0f32; 16];
        let chunks = all.chunks_exact(16);
        let rest = chunks.remainder().iter().fold(0.0f32, |s, &v| s + v * 0.0);
        for chunk in chunks {
            for (s, &v) in lanes.iter_mut().zip(chunk) {
                *s += v * 0.0;
            }
        }
        if rest == 0.0 && lanes.iter().all(|&s| s == 0.0) {
            return Ok(());
        }
    }
    match data.iter().find(|v| !v.is_finite()) {
        None => Ok(()),
        Some(v) => {
            let text = format!("{name} holds {v}: this checkpoint's numbers leave f32's range there, so the run has no result to show");
            Err(Error::Refused(crate::Said { key: "runNonFinite", args: vec![("tensor", name.to_string()), ("value", v.to_string())], text }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A model whose f32 weights (1.86 GB) are within MAX_WEIGHT_BYTES on their own.
    fn big() -> Config {
        Config::from_json(r#"{"hidden_size": 2048, "num_hidden_layers": 10, "num_attention_heads": 16, "num_key_value_heads": 4, "intermediate_size": 5632, "vocab_size": 6400, "max_position_embeddings": 8192}"#).unwrap()
    }

    fn layers(ls: &[usize], heads: Option<Vec<usize>>) -> Recorder {
        Recorder::new(Selection { layers: Some(ls.to_vec()), heads, ..Selection::default() })
    }

    #[test]
    fn model_trace_and_working_set_are_budgeted_together() {
        let cfg = big();
        // The weights by hand: embed + 10 × (q, o: 2048², k, v: 512 × 2048, gate/up/down: 3 × 5632 × 2048,
        // two norms, q and k norms of head_dim 128) + final norm, tied head.
        let weights = 6400 * 2048 + 10 * (2 * 2048 * 2048 + 2 * 512 * 2048 + 3 * 5632 * 2048 + 2 * 2048 + 2 * 128) + 2048;
        assert_eq!(cfg.weight_count(), weights);
        let t = 1200;
        let rec = layers(&[0, 1], None);
        let trace = trace_bytes(&cfg, t, t, &rec);
        assert!(trace <= MAX_TRACE_BYTES && weights * 4 <= crate::model::config::MAX_WEIGHT_BYTES, "each part is within its own limit");
        // On the explicit path (`naive`): its score tables for all 16 heads, 0.28 GB, tip the sum over.
        let e = check_memory(&cfg, t, t, &rec, None).unwrap_err().to_string();
        let gb = |b: u64| format!("{:.2} GB", b as f64 / 1e9);
        assert!(e.contains(&format!("the model's weights {}", gb(weights * 4))), "{e}");
        assert!(e.contains(&format!("the trace {}", gb(trace))), "{e}");
        assert!(e.contains("fewer tokens or record fewer layers or heads"), "{e}");
        // It names the most tokens that fit: that many do, one more does not.
        let fits: usize = e.split("at most ").nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok()).expect("a count");
        assert!(fits > 0 && fits < t, "{e}");
        check_memory(&cfg, fits, fits, &rec, None).unwrap();
        assert!(check_memory(&cfg, fits + 1, fits + 1, &rec, None).is_err());
        // The same run recording one layer fits.
        check_memory(&cfg, t, t, &layers(&[0], None), None).unwrap();
    }

    #[test]
    fn the_logit_lens_is_budgeted_and_named_when_it_is_too_big() {
        let cfg = Config::from_json(r#"{"hidden_size": 64, "num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 65536, "max_position_embeddings": 8192}"#).unwrap();
        let ids = vec![0u32; 1024];
        let lens = |layers: Option<Vec<usize>>| Recorder::new(Selection { layers, logit_lens: true, head_logit: true, ..Selection::default() });
        check_input(&cfg, 0, &ids, None, &Recorder::new(Selection::all())).unwrap();
        // 8 layers x 1024 positions x 65536 entries of f32: 2.15 GB for the lens alone.
        let e = check_input(&cfg, 0, &ids, None, &lens(None)).unwrap_err().to_string();
        assert!(e.contains("the logit lens 2.15 GB") && e.contains("leave out the logit lens"), "{e}");
        // ...and how many tokens would fit as recorded: the largest n whose trace is within the limit.
        let fits: usize = e.rsplit("at most ").next().unwrap().split(' ').next().unwrap().parse().unwrap();
        assert!(fits > 0 && fits < 1024, "{e}");
        assert!(trace_bytes(&cfg, fits, fits, &lens(None)) <= MAX_TRACE_BYTES && trace_bytes(&cfg, fits + 1, fits + 1, &lens(None)) > MAX_TRACE_BYTES);
        check_input(&cfg, 0, &ids, None, &lens(Some(vec![0, 7]))).unwrap();
        // Head attribution keeps each recorded layer's context, [T, nH*d], until the end (and, where
        // weights are packed, builds o_proj's transposed panels for the call).
        let with = readout_bytes(&cfg, 1024, &lens(None));
        assert_eq!(with, 4 * (8 * 1024 * 64 + 1024 * 64 + 1024 * 64 + 1024 * 64 + Weight::back_floats(64, 64)));
    }

    #[test]
    fn a_run_that_leaves_f32_is_refused_by_where_it_did() {
        let cfg = Config::from_json(r#"{"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 64}"#).unwrap();
        let mut w = crate::weights::random(&cfg, 1);
        w.norm.fill(3e38); // finite, but the final norm times the head overflows
        let model = Model::new(cfg, w);
        let e = model.trace(&[1, 2, 3], None, 0, &RunOptions::default(), Selection::none()).err().expect("refused");
        match e {
            Error::Refused(s) => assert_eq!((s.key, s.args[0].1.as_str()), ("runNonFinite", "logits")),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn the_finite_check_finds_every_infinity_and_nan_and_passes_the_largest_finite_numbers() {
        // 37 numbers: two chunks of 16 lanes and a remainder of 5, each place tried.
        let base = Array2::from_shape_fn((1, 37), |(_, j)| if j % 2 == 0 { f32::MAX } else { -0.0 });
        assert!(finite("t", &base).is_ok());
        for at in [0, 15, 16, 31, 32, 36] {
            for bad in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
                let mut a = base.clone();
                a[[0, at]] = bad;
                match finite("t", &a) {
                    Err(Error::Refused(s)) => assert_eq!((s.key, s.args[1].1.clone()), ("runNonFinite", bad.to_string()), "{bad} at {at}"),
                    other => panic!("{bad} at {at}: {other:?}"),
                }
            }
        }
        // A transposed array is read in memory order too.
        let mut t = base.clone().reversed_axes();
        t[[7, 0]] = f32::NAN;
        assert!(finite("t", &t).is_err());
    }

    #[test]
    fn the_explicit_path_counts_every_head_whichever_are_recorded() {
        let cfg = Config::from_json(r#"{"hidden_size": 1024, "num_hidden_layers": 1, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 16, "intermediate_size": 1024, "vocab_size": 6400, "max_position_embeddings": 8192}"#).unwrap();
        let t = 4096;
        let one_head = layers(&[0], Some(vec![0]));
        // Scores, masked scores and probabilities, [64, 4096, 4096] f32 each: 12.9 GB for all heads.
        let tables = 3 * 64 * 4096 * 4096 * 4;
        assert!(working_bytes(&cfg, t, t, None) >= tables);
        assert!(trace_bytes(&cfg, t, t, &one_head) <= MAX_TRACE_BYTES, "the trace of one head is within its limit");
        let e = check_memory(&cfg, t, t, &one_head, None).unwrap_err().to_string();
        assert!(e.contains("working memory 1"), "{e}");
        // The flash path holds one tile of 64 keys per head and row instead: it fits.
        check_memory(&cfg, t, t, &one_head, Some(64)).unwrap();
        assert!(working_bytes(&cfg, t, t, Some(64)) < tables / 16);
    }
}


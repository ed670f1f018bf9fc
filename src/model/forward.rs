//! The whole model (MiniMindForCausalLM): embed_tokens -> decoder layers -> norm -> lm_head, for T new
//! tokens after P cached ones. `Model::trace` runs the contract's two-call protocol (prefix, then traced).

use ndarray::{Array2, Axis};
use serde::{Deserialize, Serialize};

use super::attention::MaskSpec;
use super::block::{decoder_layer, LayerRun};
use super::config::{Config, MAX_TOKENS};
use super::flash::FlashRecord;
use super::kv_cache::KvCache;
use super::linear::linear;
use super::rms_norm::rms_norm;
use super::rope::RopeTable;
use crate::trace::{Recorder, Selection, Trace};
use crate::weights::Weights;
use crate::Error;

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
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { causal: true, path: AttentionPath::Auto, probe: None }
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
        let (t, s_len) = (ids.len(), p + ids.len());
        let flash_tile = opts.path.flash_tile(s_len);
        check_memory(cfg, t, s_len, rec, flash_tile)?;
        let hsz = cfg.hidden_size;

        let mut x = self.weights.embed_tokens.select(Axis(0), &ids.iter().map(|&i| i as usize).collect::<Vec<_>>()); // (T, H)
        let rope = RopeTable::new(cfg, p, t);
        if rec.wants(None) {
            rec.put("embed".into(), &[t, hsz], x.as_slice().unwrap().to_vec());
            rec.put("rope.cos".into(), &[t, cfg.head_dim()], rope.cos.as_slice().unwrap().to_vec());
            rec.put("rope.sin".into(), &[t, cfg.head_dim()], rope.sin.as_slice().unwrap().to_vec());
        }
        let mut report = None;
        for (l, w) in self.weights.layers.iter().enumerate() {
            let run = LayerRun {
                layer: l,
                rope: &rope,
                mask: MaskSpec { causal: opts.causal, prefix_len: p, padding: mask },
                flash_tile,
                probe: opts.probe.filter(|pr| pr.layer == l).map(|pr| (pr.head, pr.row, pr.tile.max(1))),
            };
            let out = decoder_layer(cfg, w, x, &mut cache.layers[l], &run, rec);
            rec.layer_done(l + 1, cfg.num_hidden_layers);
            x = out.x;
            if let Some((record, max_abs_diff)) = out.flash {
                report = Some(FlashReport { layer: l, record, max_abs_diff });
            }
        }
        let x = rms_norm(x.view(), &self.weights.norm, cfg.rms_norm_eps);
        let logits = linear(x.view(), self.weights.lm_head()); // (T, V)
        if rec.wants(None) {
            rec.put("final_norm".into(), &[t, hsz], x.as_slice().unwrap().to_vec());
            rec.put("logits".into(), &[t, cfg.vocab_size], logits.as_slice().unwrap().to_vec());
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
    if s_len > MAX_TOKENS {
        return Err(Error::Input(format!("{s_len} tokens is over the limit of {MAX_TOKENS}")));
    }
    if s_len > cfg.max_position_embeddings {
        return Err(Error::Input(format!(
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
    let bytes = trace_bytes(cfg, ids.len(), s_len, rec);
    if bytes > MAX_TRACE_BYTES {
        return Err(Error::Input(format!(
            "recording this trace needs {:.2} GB; record fewer layers or heads (the limit is {:.2} GB)",
            bytes as f64 / 1e9,
            MAX_TRACE_BYTES as f64 / 1e9
        )));
    }
    Ok(())
}

/// Checks that the model, this call's trace and its working set fit MAX_MEMORY_BYTES together, before
/// anything is allocated: each may be within its own limit and the three still not fit in wasm32.
fn check_memory(cfg: &Config, t: usize, s_len: usize, rec: &Recorder, flash_tile: Option<usize>) -> Result<(), Error> {
    let model = cfg.weight_bytes_held();
    let trace = trace_bytes(cfg, t, s_len, rec);
    let working = working_bytes(cfg, t, s_len, flash_tile);
    let total = model + trace + working;
    if total > MAX_MEMORY_BYTES {
        let gb = |b: u64| b as f64 / 1e9;
        return Err(Error::Input(format!(
            "this run needs {:.2} GB at once (the model's weights {:.2} GB, the trace {:.2} GB, working memory {:.2} GB), over the budget of {:.2} GB; use fewer tokens or record fewer layers or heads",
            gb(total),
            gb(model),
            gb(trace),
            gb(working),
            gb(MAX_MEMORY_BYTES)
        )));
    }
    Ok(())
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
    let activations = 4 * t * h + 2 * t * nh * d + 2 * t * nkv * d + 3 * t * i;
    4 * (cache + activations + attention + t * cfg.vocab_size as u64)
}

/// Estimated bytes of the trace the recorder will keep.
fn trace_bytes(cfg: &Config, t: usize, s_len: usize, rec: &Recorder) -> u64 {
    let (t, s) = (t as u64, s_len as u64);
    let (h, d, i) = (cfg.hidden_size as u64, cfg.head_dim() as u64, cfg.intermediate_size() as u64);
    let (nh, nkv) = (cfg.num_attention_heads as u64, cfg.num_key_value_heads as u64);
    let layers = (0..cfg.num_hidden_layers).filter(|&l| rec.wants(Some(l))).count() as u64;
    let heads = rec.heads(cfg.num_attention_heads).len() as u64;
    let per_layer = 6 * t * h + 3 * t * nh * d + 4 * t * nkv * d + 2 * s * nkv * d + 3 * heads * t * s + 3 * t * i;
    let global = if rec.wants(None) { 2 * t * h + 2 * t * d + t * cfg.vocab_size as u64 } else { 0 };
    4 * (layers * per_layer + global)
}

#[cfg(test)]
mod tests {
    use super::*;

    // A model whose f32 weights (1.86 GB) are within MAX_WEIGHT_BYTES on their own.
    fn big() -> Config {
        Config::from_json(r#"{"hidden_size": 2048, "num_hidden_layers": 10, "num_attention_heads": 16, "num_key_value_heads": 4, "intermediate_size": 5632, "vocab_size": 6400, "max_position_embeddings": 8192}"#).unwrap()
    }

    fn layers(ls: &[usize], heads: Option<Vec<usize>>) -> Recorder {
        Recorder::new(Selection { off: false, layers: Some(ls.to_vec()), heads })
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
        // The same run recording one layer fits.
        check_memory(&cfg, t, t, &layers(&[0], None), None).unwrap();
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

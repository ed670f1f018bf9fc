//! The trace: every intermediate tensor of one forward call, by its contract name
//! (docs/trace-contract.md), in the order computed, each with shape and a one-line description.
//! The caller chooses what to record, so long inputs stay within memory.

use std::collections::HashMap;

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Entry {
    pub name: String,
    pub shape: Vec<usize>,
    pub desc: &'static str,
    /// For [nH, T, S] attention tensors recorded for some heads only: which heads, in order
    /// (the first dimension of `shape` then counts these heads).
    pub heads: Option<Vec<usize>>,
    #[serde(skip)]
    pub data: Vec<f32>,
}

#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub entries: Vec<Entry>,
}

impl Trace {
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// Adds an entry by its contract name.
    pub fn push(&mut self, name: &str, shape: &[usize], data: Vec<f32>) {
        assert_eq!(shape.iter().product::<usize>(), data.len(), "{name}");
        self.entries.push(Entry { name: name.to_string(), shape: shape.to_vec(), desc: describe(name), heads: None, data });
    }

    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }

    /// safetensors bytes of every entry (f32), with the computation order in the metadata.
    pub fn to_safetensors(&self) -> Vec<u8> {
        let views: Vec<(String, safetensors::tensor::TensorView)> = self
            .entries
            .iter()
            .map(|e| {
                let view = safetensors::tensor::TensorView::new(
                    safetensors::Dtype::F32,
                    e.shape.clone(),
                    bytemuck_f32(&e.data),
                )
                .expect("entry data matches its shape");
                (e.name.clone(), view)
            })
            .collect();
        let order = serde_json::to_string(&self.names()).expect("names serialise");
        let meta = HashMap::from([("order".to_string(), order)]);
        safetensors::serialize(views, Some(meta)).expect("trace serialises")
    }
}

fn bytemuck_f32(data: &[f32]) -> &[u8] {
    // SAFETY: f32 has no padding and any byte pattern is a valid u8; length is scaled by size_of.
    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }
}

/// What to record. `layers: None` = every layer; `heads: None` = every head of the attention tensors.
/// `logit_lens` and `head_logit` add `layers.{l}.logit_lens` and `layers.{l}.attn.head_logit` for the
/// recorded layers; `target_token` is head_logit's target at every position (None: each position's top-1).
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct Selection {
    pub off: bool,
    pub layers: Option<Vec<usize>>,
    pub heads: Option<Vec<usize>>,
    pub logit_lens: bool,
    pub head_logit: bool,
    pub target_token: Option<u32>,
}

impl Selection {
    pub fn all() -> Selection {
        Selection::default()
    }

    pub fn none() -> Selection {
        Selection { off: true, ..Selection::default() }
    }
}

pub struct Recorder {
    pub selection: Selection,
    pub trace: Trace,
    /// Told (layers done, layers in all) after each layer, so a long run can show progress.
    progress: Option<Box<dyn FnMut(usize, usize)>>,
}

impl Recorder {
    pub fn new(selection: Selection) -> Recorder {
        Recorder { selection, trace: Trace::default(), progress: None }
    }

    pub fn with_progress(mut self, progress: impl FnMut(usize, usize) + 'static) -> Recorder {
        self.progress = Some(Box::new(progress));
        self
    }

    pub fn layer_done(&mut self, done: usize, total: usize) {
        if let Some(p) = self.progress.as_mut() {
            p(done, total);
        }
    }

    /// Records nothing: used for the prefix call and for generation steps nobody looks at.
    pub fn off() -> Recorder {
        Recorder::new(Selection::none())
    }

    /// Whether tensors of this layer (`None` = model-level tensors) are wanted.
    pub fn wants(&self, layer: Option<usize>) -> bool {
        if self.selection.off {
            return false;
        }
        match (layer, &self.selection.layers) {
            (Some(l), Some(ls)) => ls.contains(&l),
            _ => true,
        }
    }

    /// Whether `layers.{layer}.logit_lens` is wanted.
    pub fn wants_logit_lens(&self, layer: usize) -> bool {
        self.selection.logit_lens && self.wants(Some(layer))
    }

    /// Whether `layers.{layer}.attn.head_logit` is wanted.
    pub fn wants_head_logit(&self, layer: usize) -> bool {
        self.selection.head_logit && self.wants(Some(layer))
    }

    /// Heads of the attention tensors to record, given nH.
    pub fn heads(&self, n_heads: usize) -> Vec<usize> {
        match &self.selection.heads {
            Some(hs) => hs.iter().copied().filter(|&h| h < n_heads).collect(),
            None => (0..n_heads).collect(),
        }
    }

    pub fn put(&mut self, name: String, shape: &[usize], data: Vec<f32>) {
        self.put_heads(name, shape, data, None)
    }

    pub fn put_heads(&mut self, name: String, shape: &[usize], data: Vec<f32>, heads: Option<Vec<usize>>) {
        debug_assert_eq!(shape.iter().product::<usize>(), data.len(), "{name}");
        let desc = describe(&name);
        self.trace.entries.push(Entry { name, shape: shape.to_vec(), desc, heads, data });
    }
}

/// One line per contract name (layer prefix stripped).
pub fn describe(name: &str) -> &'static str {
    let key = match name.strip_prefix("layers.") {
        Some(rest) => rest.split_once('.').map_or(rest, |(_, k)| k),
        None => name,
    };
    match key {
        "embed" => "token embeddings: rows of embed_tokens picked by the ids",
        "rope.cos" => "RoPE cosine table for these positions (halves repeated)",
        "rope.sin" => "RoPE sine table for these positions (halves repeated)",
        "input_norm" => "RMSNorm before attention (input_layernorm)",
        "attn.q" => "q_proj output, split into query heads",
        "attn.k" => "k_proj output, split into KV heads",
        "attn.v" => "v_proj output, split into KV heads",
        "attn.q_norm" => "queries after per-head RMSNorm (q_norm)",
        "attn.k_norm" => "keys after per-head RMSNorm (k_norm)",
        "attn.q_rope" => "queries after rotary position embedding",
        "attn.k_rope" => "keys after rotary position embedding",
        "attn.k_cache" => "all keys so far: the cache plus this call's keys (rotated)",
        "attn.v_cache" => "all values so far: the cache plus this call's values",
        "attn.scores" => "q · k / sqrt(d) for every query head, before any mask",
        "attn.masked_scores" => "scores after the causal (-inf) and padding (-1e9) masks",
        "attn.probs" => "softmax of the masked scores over the keys",
        "attn.context" => "probs @ V: each query head's weighted sum of values (zero for a knocked-out head)",
        "attn.out" => "o_proj output: heads mixed back to the hidden size",
        "attn.residual" => "x + attention output",
        "post_norm" => "RMSNorm before the FFN (post_attention_layernorm)",
        "ffn.gate" => "gate_proj output",
        "ffn.up" => "up_proj output",
        "ffn.act" => "silu(gate) * up",
        "ffn.router_logits" => "the router mlp.gate's score for each expert",
        "ffn.router_probs" => "softmax of the router scores over the experts",
        "ffn.expert_index" => "the experts chosen for each token (top k, most probable first)",
        "ffn.expert_weight" => "the chosen experts' router probabilities (renormalised when norm_topk_prob)",
        "ffn.expert_out" => "each chosen expert's SwiGLU output, before weighting",
        "ffn.out" => "FFN output: down_proj, or the weighted sum of the chosen experts",
        "out" => "block output: residual + FFN output",
        "final_norm" => "final RMSNorm (model.norm)",
        "logits" => "lm_head output: a score for every vocabulary entry",
        "logit_lens" => "logit lens: lm_head(final norm(this layer's output)), the prediction if the model stopped here",
        "attn.head_logit" => "each head's direct push on the target token's logit, through the final norm of the real run",
        "patch.clean_metric" => "logit[target] - logit[against] at the last position of the clean run",
        "patch.corrupt_metric" => "logit[target] - logit[against] at the last position of the corrupted run",
        "patch.resid_out" => "the metric with one layer's output at one position taken from the clean run [layer, position]",
        "patch.head_context" => "the metric with one head's attn.context taken from the clean run at every position [layer, head]",
        _ => "",
    }
}

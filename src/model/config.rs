//! Model configuration: Hugging Face `config.json` as MiniMind writes it, with MiniMind-3's defaults
//! for missing keys (docs/minimind-semantics.md, "Configuration"), and the limits attnscope
//! enforces before allocating anything.

use serde::{Deserialize, Serialize};

use super::linear::Weight;
use crate::{Error, Said};

/// Largest sizes attnscope accepts. They keep a typo in a config or a link from freezing a tab.
/// The page's copy is www/limits.js; tests/unit/limits.test.mjs reads these lines (one
/// `pub const MAX_X: usize = 123;` each) and fails unless both hold the same names and values.
pub const MAX_HIDDEN: usize = 8192;
pub const MAX_LAYERS: usize = 64;
pub const MAX_HEADS: usize = 256;
pub const MAX_HEAD_DIM: usize = 1024;
pub const MAX_INTERMEDIATE: usize = 65536;
pub const MAX_EXPERTS: usize = 256;
pub const MAX_VOCAB: usize = 262_144;
pub const MAX_TOKENS: usize = 8192;
/// Budget for the weights a model holds in f32 (bytes, `weight_bytes_held`). MiniMind-3 needs about
/// 0.3 GB, in a browser too (there the matrices are held as the matmul kernel's panels instead).
pub const MAX_WEIGHT_BYTES: u64 = 2 << 30;

/// YaRN constants MiniMind uses when `inference_rope_scaling` is on.
pub const YARN_FACTOR: f64 = 16.0;
pub const YARN_ORIGINAL_MAX: f64 = 2048.0;
pub const YARN_BETA_FAST: f64 = 32.0;
pub const YARN_BETA_SLOW: f64 = 1.0;
pub const YARN_ATTENTION_FACTOR: f64 = 1.0;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    /// `None` in a file means hidden_size / num_attention_heads; after `resolve` it is always set.
    pub head_dim: Option<usize>,
    /// `None` means ceil(hidden * pi / 64) * 64, MiniMind's rule.
    pub intermediate_size: Option<usize>,
    pub vocab_size: usize,
    pub rms_norm_eps: f64,
    pub rope_theta: f64,
    pub max_position_embeddings: usize,
    pub tie_word_embeddings: bool,
    pub inference_rope_scaling: bool,
    /// Q/K RMSNorm (MiniMind-3, Qwen3). Llama-style checkpoints have none; the loader sets this
    /// from the tensors it finds when the config does not say.
    pub qk_norm: bool,
    /// Biases on q_proj, k_proj and v_proj (Qwen2; Hugging Face Llama's `attention_bias`). MiniMind has none.
    pub attention_bias: bool,
    /// MiniMind's MOEFeedForward instead of the dense FeedForward in every layer: a router
    /// (`mlp.gate`) picks `num_experts_per_tok` of `num_experts` SwiGLU experts per token. No shared
    /// experts; the router's auxiliary load-balancing loss (`router_aux_loss_coef`) is training only.
    pub use_moe: bool,
    pub num_experts: usize,
    pub num_experts_per_tok: usize,
    /// `None` means intermediate_size, as in MiniMind.
    pub moe_intermediate_size: Option<usize>,
    /// Divide the chosen experts' router probabilities by their sum (plus 1e-20), as MiniMind does.
    pub norm_topk_prob: bool,
    /// The token MiniMind's pretraining puts before every text (`<|im_start|>`, id 1), when the
    /// config names one; `None` means the model was not said to have one, so none is offered.
    /// Read by `from_json` (null and absent are `None`; anything but an id inside the vocabulary is refused).
    #[serde(skip_deserializing)]
    pub bos_token_id: Option<u32>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            hidden_size: 768,
            num_hidden_layers: 8,
            num_attention_heads: 8,
            num_key_value_heads: 4,
            head_dim: None,
            intermediate_size: None,
            vocab_size: 6400,
            rms_norm_eps: 1e-6,
            rope_theta: 1e6,
            max_position_embeddings: 32768,
            tie_word_embeddings: true,
            inference_rope_scaling: false,
            qk_norm: true,
            attention_bias: false,
            use_moe: false,
            num_experts: 4,
            num_experts_per_tok: 1,
            moe_intermediate_size: None,
            norm_topk_prob: true,
            bos_token_id: None,
        }
    }
}

/// θ of Hugging Face's LlamaConfig and MistralConfig when their config.json does not give one.
pub const LLAMA_ROPE_THETA: f64 = 10000.0;

/// Refuses, by the field that says so, a config for a model attnscope would otherwise run wrongly:
/// an FFN activation other than silu (`hidden_act`; Hugging Face's "swish" is the same function).
/// A `use_moe` that is not a boolean is named here too, rather than in serde's words.
fn refuse_unsupported(raw: &serde_json::Value) -> Result<(), Error> {
    match raw.get("use_moe") {
        None | Some(serde_json::Value::Bool(_)) => {}
        Some(other) => return Err(said("config.notBool", vec![("name", "use_moe".into()), ("value", other.to_string())], format!("use_moe must be true or false, got {other}"))),
    }
    match raw.get("hidden_act") {
        None | Some(serde_json::Value::Null) => Ok(()),
        Some(serde_json::Value::String(act)) if act == "silu" || act == "swish" => Ok(()),
        Some(other) => Err(said("config.hiddenAct", vec![("value", other.to_string())], format!("hidden_act is {other}: attnscope's FFN runs silu (SwiGLU) only"))),
    }
}

/// A config refused by name (`key` is `config.<name>`, said as `core.config.<name>` in the page's strings).
fn said(key: &'static str, args: Vec<(&'static str, String)>, text: String) -> Error {
    Error::Config(Said { key, args, text })
}

/// The keys config.json gives as counts (whole numbers, 0 or more); of them only head_dim,
/// intermediate_size and moe_intermediate_size may be null (their sizes then follow from the others).
const COUNT_KEYS: [&str; 11] = [
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "moe_intermediate_size",
    "vocab_size",
    "max_position_embeddings",
    "num_experts",
    "num_experts_per_tok",
];
const NULLABLE_KEYS: [&str; 3] = ["head_dim", "intermediate_size", "moe_intermediate_size"];

/// Names the field a count or a number of the wrong kind is in (a size of 1.5, -2 or "8"), which
/// serde's own message does not.
fn refuse_wrong_types(raw: &serde_json::Value) -> Result<(), Error> {
    for name in COUNT_KEYS {
        match raw.get(name) {
            None => {}
            Some(serde_json::Value::Null) if NULLABLE_KEYS.contains(&name) => {}
            Some(v) if v.as_u64().is_some_and(|v| usize::try_from(v).is_ok()) => {}
            // A count past what this machine can address (2^32 - 1 in wasm32) is too big, not wrong.
            Some(v) if v.as_u64().is_some() => {
                let args = vec![("name", name.into()), ("value", v.to_string()), ("limit", usize::MAX.to_string())];
                return Err(said("config.countTooBig", args, format!("{name} is {v}, more than {} (the most this build can count)", usize::MAX)));
            }
            // 32.0 is a whole number, but a size in config.json is written without a decimal point,
            // as PyTorch's layers need it.
            Some(v) if v.as_f64().is_some_and(|f| f >= 0.0 && f.fract() == 0.0) => {
                let whole = format!("{:.0}", v.as_f64().unwrap_or_default());
                let args = vec![("name", name.into()), ("value", v.to_string()), ("whole", whole.clone())];
                return Err(said("config.countAsFloat", args, format!("{name} is {v}, a number with a decimal point; a size is written as a whole number ({whole})")));
            }
            Some(v) => return Err(said("config.notCount", vec![("name", name.into()), ("value", v.to_string())], format!("{name} must be a whole number (a count such as 8), got {v}"))),
        }
    }
    for name in ["rms_norm_eps", "rope_theta"] {
        match raw.get(name) {
            None => {}
            Some(v) if v.is_number() => {}
            Some(v) => return Err(said("config.notNumber", vec![("name", name.into()), ("value", v.to_string())], format!("{name} must be a number, got {v}"))),
        }
    }
    for name in ["tie_word_embeddings", "inference_rope_scaling", "qk_norm", "attention_bias", "norm_topk_prob"] {
        match raw.get(name) {
            None | Some(serde_json::Value::Bool(_)) => {}
            Some(v) => return Err(said("config.notBool", vec![("name", name.into()), ("value", v.to_string())], format!("{name} must be true or false, got {v}"))),
        }
    }
    Ok(())
}

/// NaN, Infinity or -Infinity where serde_json stopped reading (line and column from 1), if that is
/// what stopped it.
fn bare_non_number(text: &str, line: usize, column: usize) -> Option<&'static str> {
    let row = text.lines().nth(line.checked_sub(1)?)?;
    // serde_json counts the column in bytes, from 1.
    let mut from = column.saturating_sub(1).min(row.len());
    while !row.is_char_boundary(from) {
        from -= 1;
    }
    let start = row[..from].trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '-').len();
    let rest = &row[start..];
    ["-Infinity", "Infinity", "NaN"].into_iter().find(|w| rest.starts_with(w))
}

impl Config {
    /// Parses `config.json` text; unknown keys are ignored, missing ones take MiniMind-3 defaults.
    pub fn from_json(text: &str) -> Result<Config, Error> {
        let raw: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            let (cut, mut args) = crate::json_fault(&e);
            // Python's json.dump writes NaN and Infinity, which JSON does not have: named, since
            // "it goes wrong at column 194" does not say what to change.
            if let Some(word) = bare_non_number(text, e.line(), e.column()) {
                args.insert(0, ("value", word.into()));
                return said("config.notJsonNaN", args, format!("config.json is not valid JSON: {word} is not a JSON number (write a number, or null for a size that follows from the others): {e}"));
            }
            said(if cut { "config.jsonCutShort" } else { "config.notJson" }, args, format!("config.json is not valid JSON: {e}"))
        })?;
        if !raw.is_object() {
            return Err(said("config.notObject", vec![], "config.json must be a JSON object".into()));
        }
        refuse_unsupported(&raw)?;
        refuse_wrong_types(&raw)?;
        let mut cfg: Config = serde_json::from_value(raw.clone())
            .map_err(|e| said("config.wrongType", vec![("why", e.to_string())], format!("config.json has a field of the wrong type: {e}")))?;
        // Like MiniMind, YaRN follows `inference_rope_scaling` alone; a `rope_scaling` dict is not read.
        let model_type = raw.get("model_type").and_then(|v| v.as_str()).unwrap_or("");
        let llama_family = matches!(model_type, "llama" | "mistral");
        if raw.get("attention_bias").is_none() {
            // Qwen2's config.json does not say it: its q/k/v projections always have biases.
            cfg.attention_bias = model_type == "qwen2";
        }
        if raw.get("qk_norm").is_none() {
            // Llama-family configs never have Q/K norm; Qwen3 and MiniMind do.
            cfg.qk_norm = !llama_family;
        }
        if raw.get("rope_theta").is_none() {
            // Newer Hugging Face configs keep θ in `rope_parameters`; without either, a Llama-family
            // model runs at its own class's default (LlamaConfig, MistralConfig: 10000), not MiniMind's 1e6.
            match raw.get("rope_parameters").and_then(|p| p.get("rope_theta")) {
                Some(theta) => {
                    cfg.rope_theta = theta.as_f64().ok_or_else(|| {
                        said("config.notNumber", vec![("name", "rope_parameters.rope_theta".into()), ("value", theta.to_string())], format!("rope_parameters.rope_theta must be a number, got {theta}"))
                    })?
                }
                None if llama_family => cfg.rope_theta = LLAMA_ROPE_THETA,
                None => {}
            }
        }
        let mut cfg = cfg.resolve()?;
        cfg.bos_token_id = match raw.get("bos_token_id") {
            None | Some(serde_json::Value::Null) => None,
            Some(id) => Some(id.as_u64().and_then(|id| u32::try_from(id).ok()).filter(|&id| (id as usize) < cfg.vocab_size).ok_or_else(|| {
                let args = vec![("vocab", cfg.vocab_size.to_string()), ("value", id.to_string())];
                said("config.bosId", args, format!("bos_token_id must be a token id below vocab_size ({}), got {id}", cfg.vocab_size))
            })?),
        };
        Ok(cfg)
    }

    /// Fills derived sizes and validates; every constructor path goes through here.
    pub fn resolve(mut self) -> Result<Config, Error> {
        let n = |v: usize| v.to_string();
        let nonzero = [
            ("hidden_size", self.hidden_size),
            ("num_hidden_layers", self.num_hidden_layers),
            ("num_attention_heads", self.num_attention_heads),
            ("num_key_value_heads", self.num_key_value_heads),
            ("vocab_size", self.vocab_size),
            ("max_position_embeddings", self.max_position_embeddings),
        ];
        for (name, v) in nonzero {
            if v == 0 {
                return Err(said("config.atLeastOne", vec![("name", name.into())], format!("{name} must be at least 1")));
            }
        }
        let limits = [
            ("hidden_size", self.hidden_size, MAX_HIDDEN),
            ("num_hidden_layers", self.num_hidden_layers, MAX_LAYERS),
            ("num_attention_heads", self.num_attention_heads, MAX_HEADS),
            ("vocab_size", self.vocab_size, MAX_VOCAB),
        ];
        for (name, v, limit) in limits {
            if v > limit {
                let args = vec![("name", name.into()), ("value", n(v)), ("limit", n(limit))];
                return Err(said("config.overLimit", args, format!("{name} {v} is over the limit of {limit}")));
            }
        }
        let (heads, kv) = (self.num_attention_heads, self.num_key_value_heads);
        if heads % kv != 0 {
            let text = format!("num_attention_heads ({heads}) must be divisible by num_key_value_heads ({kv})");
            return Err(said("config.kvHeads", vec![("heads", n(heads)), ("kv", n(kv))], text));
        }
        let head_dim = match self.head_dim {
            Some(d) => d,
            None => {
                if self.hidden_size % heads != 0 {
                    let text = format!("hidden_size ({}) is not divisible by num_attention_heads ({heads}); set head_dim", self.hidden_size);
                    return Err(said("config.headDimAuto", vec![("dim", n(self.hidden_size)), ("heads", n(heads))], text));
                }
                self.hidden_size / heads
            }
        };
        if head_dim == 0 || head_dim % 2 != 0 {
            let text = format!("head_dim must be a positive even number (RoPE rotates pairs), got {head_dim}");
            return Err(said("config.headDimEven", vec![("value", n(head_dim))], text));
        }
        if head_dim > MAX_HEAD_DIM {
            let args = vec![("name", "head_dim".into()), ("value", n(head_dim)), ("limit", n(MAX_HEAD_DIM))];
            return Err(said("config.overLimit", args, format!("head_dim {head_dim} is over the limit of {MAX_HEAD_DIM}")));
        }
        self.head_dim = Some(head_dim);
        let between = |name: &'static str, v: usize, most: usize| {
            let text = format!("{name} must be between 1 and {most}, got {v}");
            Err(said("config.between", vec![("name", name.into()), ("value", n(v)), ("limit", n(most))], text))
        };
        let inter = self
            .intermediate_size
            .unwrap_or_else(|| ((self.hidden_size as f64 * std::f64::consts::PI / 64.0).ceil() as usize) * 64);
        if inter == 0 || inter > MAX_INTERMEDIATE {
            return between("intermediate_size", inter, MAX_INTERMEDIATE);
        }
        self.intermediate_size = Some(inter);
        let moe_inter = self.moe_intermediate_size.unwrap_or(inter);
        if moe_inter == 0 || moe_inter > MAX_INTERMEDIATE {
            return between("moe_intermediate_size", moe_inter, MAX_INTERMEDIATE);
        }
        self.moe_intermediate_size = Some(moe_inter);
        if self.use_moe {
            if self.num_experts == 0 || self.num_experts > MAX_EXPERTS {
                return between("num_experts", self.num_experts, MAX_EXPERTS);
            }
            if self.num_experts_per_tok == 0 || self.num_experts_per_tok > self.num_experts {
                let text = format!(
                    "num_experts_per_tok must be between 1 and num_experts ({}), got {}",
                    self.num_experts, self.num_experts_per_tok
                );
                return Err(said("config.topK", vec![("experts", n(self.num_experts)), ("value", n(self.num_experts_per_tok))], text));
            }
        }
        if !(self.rms_norm_eps.is_finite() && self.rms_norm_eps > 0.0) {
            let text = format!("rms_norm_eps must be a positive number, got {}", self.rms_norm_eps);
            return Err(said("config.epsPositive", vec![("value", self.rms_norm_eps.to_string())], text));
        }
        // The model computes in f32: an eps below f32's smallest normal number is 0 there, and a
        // zero row would then divide 0 by 0.
        if (self.rms_norm_eps as f32) < f32::MIN_POSITIVE {
            // Three significant digits: JSON's 1e-50 may parse to 9.999999999999999e-51.
            let shown = format!("{:.2e}", self.rms_norm_eps);
            let (mantissa, exponent) = shown.split_once('e').unwrap_or((&shown, "0"));
            let value = format!("{}e{exponent}", mantissa.trim_end_matches('0').trim_end_matches('.'));
            let text = format!("rms_norm_eps {value} is 0 in f32, the precision the model computes in (the smallest it can hold is about 1.2e-38)");
            return Err(said("config.epsTiny", vec![("value", value)], text));
        }
        if !(self.rope_theta.is_finite() && self.rope_theta > 1.0) {
            let text = format!("rope_theta must be a number above 1, got {}", self.rope_theta);
            return Err(said("config.ropeTheta", vec![("value", self.rope_theta.to_string())], text));
        }
        let held = self.weight_bytes_held();
        if held > MAX_WEIGHT_BYTES {
            let text = format!(
                "this configuration needs {:.2} GB of f32 weights, over the budget of {:.2} GB",
                held as f64 / 1e9,
                MAX_WEIGHT_BYTES as f64 / 1e9
            );
            let args = vec![("need", held.to_string()), ("most", MAX_WEIGHT_BYTES.to_string())];
            return Err(Error::Budget(Said { key: "configBudget", args, text }));
        }
        Ok(self)
    }

    pub fn head_dim(&self) -> usize {
        self.head_dim.expect("Config::resolve sets head_dim")
    }

    pub fn intermediate_size(&self) -> usize {
        self.intermediate_size.expect("Config::resolve sets intermediate_size")
    }

    pub fn moe_intermediate_size(&self) -> usize {
        self.moe_intermediate_size.expect("Config::resolve sets moe_intermediate_size")
    }

    /// Query heads per KV head (repeat_kv's n_rep).
    pub fn n_rep(&self) -> usize {
        self.num_attention_heads / self.num_key_value_heads
    }

    /// The model's weights as `(matrices, rest)`: the matrices `linear` multiplies by, as `[out, in]`
    /// and how many of that shape, and the number of the others (the norms, and the embedding table
    /// when it is not lm_head too, which is only read by rows). Counted in u64 so absurd configs cannot
    /// overflow before being refused.
    fn weight_shapes(&self) -> (Vec<([u64; 2], u64)>, u64) {
        let h = self.hidden_size as u64;
        let d = self.head_dim.unwrap_or(self.hidden_size / self.num_attention_heads.max(1)) as u64;
        let nh = self.num_attention_heads as u64;
        let nkv = self.num_key_value_heads as u64;
        let i = self.intermediate_size.map_or(((h as f64 * std::f64::consts::PI / 64.0).ceil() as u64) * 64, |i| i as u64);
        let (v, layers) = (self.vocab_size as u64, self.num_hidden_layers as u64);
        let qk_norm = if self.qk_norm { 2 * d } else { 0 };
        let mut matrices = vec![([nh * d, h], layers), ([nkv * d, h], 2 * layers), ([h, nh * d], layers), ([v, h], 1)];
        if self.use_moe {
            // The router [E, H] and E experts of moe_intermediate_size (default: intermediate_size).
            let e = self.num_experts as u64;
            let im = self.moe_intermediate_size.map_or(i, |m| m as u64);
            matrices.extend([([e, h], layers), ([im, h], 2 * e * layers), ([h, im], e * layers)]);
        } else {
            matrices.extend([([i, h], 2 * layers), ([h, i], layers)]);
        }
        let untied_embed = if self.tie_word_embeddings { 0 } else { v * h };
        let biases = if self.attention_bias { (nh + 2 * nkv) * d } else { 0 };
        (matrices, layers * (2 * h + qk_norm + biases) + h + untied_embed)
    }

    /// Number of weights.
    pub fn weight_count(&self) -> u64 {
        let (matrices, rest) = self.weight_shapes();
        matrices.iter().map(|&([out, inp], n)| n * out * inp).sum::<u64>() + rest
    }

    /// Bytes the weights take in memory in this build on this CPU: f32, each once; where `linear`'s
    /// kernel reads panels (wasm32, and x86-64 with AVX-512F or AVX2) the matrices it multiplies by are held
    /// only as those panels, the last panel of each padded to whole panels (`Weight::held_floats`).
    pub fn weight_bytes_held(&self) -> u64 {
        let (matrices, rest) = self.weight_shapes();
        let floats = matrices.iter().map(|&([out, inp], n)| n.saturating_mul(Weight::held_floats(out, inp))).fold(rest, u64::saturating_add);
        floats.saturating_mul(4)
    }

    /// KV-cache bytes per token in f32: keys and values, nKV heads, every layer.
    pub fn kv_cache_bytes_per_token(&self) -> u64 {
        2 * self.num_hidden_layers as u64 * self.num_key_value_heads as u64 * self.head_dim() as u64 * 4
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("Config serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimind3_defaults() {
        let c = Config::from_json("{}").unwrap();
        assert_eq!(c.head_dim(), 96);
        assert_eq!(c.intermediate_size(), 2432);
        assert_eq!(c.n_rep(), 2);
        assert!(c.tie_word_embeddings);
    }

    /// Each refusal carries its key and numbers for the page (www/strings.js `core.config.*`); a
    /// count of the wrong kind, null included where a size is needed, is named by its field.
    #[test]
    fn refusals_are_said_by_key_with_their_field() {
        let said = |json: &str| match Config::from_json(json).unwrap_err() {
            Error::Config(s) => (s.key, s.args.into_iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")),
            other => panic!("{other}"),
        };
        assert_eq!(said(r#"{"num_attention_heads": 8, "num_key_value_heads": 3}"#), ("config.kvHeads", "heads=8 kv=3".into()));
        assert_eq!(said(r#"{"num_hidden_layers": null}"#), ("config.notCount", "name=num_hidden_layers value=null".into()));
        assert_eq!(said(r#"{"hidden_size": 1.5}"#), ("config.notCount", "name=hidden_size value=1.5".into()));
        assert_eq!(said(r#"{"vocab_size": -2}"#), ("config.notCount", "name=vocab_size value=-2".into()));
        // A whole number with a decimal point, and one past what this build can count, say so.
        assert_eq!(said(r#"{"hidden_size": 32.0}"#), ("config.countAsFloat", "name=hidden_size value=32.0 whole=32".into()));
        if usize::BITS == 32 {
            assert_eq!(said(r#"{"max_position_embeddings": 1000000000000000000}"#), ("config.countTooBig", "name=max_position_embeddings value=1000000000000000000 limit=4294967295".into()));
        }
        assert_eq!(said(r#"{"rope_theta": "big"}"#), ("config.notNumber", "name=rope_theta value=\"big\"".into()));
        assert_eq!(said(r#"{"hidden_size": 90, "num_attention_heads": 4, "num_key_value_heads": 2}"#), ("config.headDimAuto", "dim=90 heads=4".into()));
        assert_eq!(said(r#"{"num_hidden_layers": 65}"#), ("config.overLimit", "name=num_hidden_layers value=65 limit=64".into()));
        assert_eq!(said(r#"{"hidden_act": "gelu"}"#), ("config.hiddenAct", "value=\"gelu\"".into()));
        assert_eq!(said(r#"{"rms_norm_eps": 1e-50}"#), ("config.epsTiny", "value=1e-50".into()), "positive, but 0 in f32");
        assert!(Config::from_json(r#"{"rms_norm_eps": 1e-30}"#).is_ok());
        assert!(Config::from_json(r#"{"head_dim": null, "intermediate_size": null}"#).is_ok(), "sizes that follow from the others may be null");
        // A flag that is not true or false is named, not left to serde's "expected a boolean".
        assert_eq!(said(r#"{"tie_word_embeddings": "yes"}"#), ("config.notBool", "name=tie_word_embeddings value=\"yes\"".into()));
        assert_eq!(said(r#"{"norm_topk_prob": null}"#), ("config.notBool", "name=norm_topk_prob value=null".into()));
        // Text that is not JSON says where it goes wrong, and whether the file ends too soon.
        let (key, args) = said("{\n  \"hidden_size\": 64,,\n}");
        assert_eq!((key, args.split(" why=").next().unwrap()), ("config.notJson", "line=2 column=21"));
        let (key, args) = said("{\n  \"hidden_size\": 64,\n  \"vocab");
        assert_eq!((key, args.split(" why=").next().unwrap()), ("config.jsonCutShort", "line=3 column=8"));
        // NaN and Infinity, as Python's json.dump writes them, are named.
        for (text, word) in [(r#"{"hidden_size": 64, "rope_theta": NaN}"#, "NaN"), ("{\n \"rope_theta\": Infinity\n}", "Infinity"), (r#"{"rope_theta": -Infinity}"#, "-Infinity")] {
            let (key, args) = said(text);
            assert_eq!((key, args.split(' ').next().unwrap()), ("config.notJsonNaN", format!("value={word}").as_str()), "{text}");
        }
        // Other words are not; text before it in another script moves no column.
        assert_eq!(said(r#"{"rope_theta": nan}"#).0, "config.notJson");
        assert_eq!(said(r#"{"name": "模型", "rope_theta": NaN}"#).1.split(' ').next().unwrap(), "value=NaN");
        assert_eq!(said(r#"{"名": 1, "a": -Infinity, "b": NaN}"#).1.split(' ').next().unwrap(), "value=-Infinity");
    }

    #[test]
    fn heads_not_divisible_by_kv_heads_is_refused() {
        let e = Config::from_json(r#"{"num_attention_heads": 8, "num_key_value_heads": 3}"#).unwrap_err();
        assert!(e.to_string().contains("divisible"), "{e}");
    }

    #[test]
    fn odd_head_dim_is_refused() {
        let e = Config::from_json(r#"{"head_dim": 7}"#).unwrap_err();
        assert!(e.to_string().contains("even"), "{e}");
    }

    #[test]
    fn zero_and_huge_sizes_are_refused() {
        assert!(Config::from_json(r#"{"hidden_size": 0}"#).is_err());
        assert!(Config::from_json(r#"{"hidden_size": 100000}"#).unwrap_err().to_string().contains("limit"));
        let e = Config::from_json(r#"{"hidden_size": 8192, "num_hidden_layers": 64, "vocab_size": 262144}"#)
            .unwrap_err();
        assert!(e.to_string().contains("budget"), "{e}");
    }

    #[test]
    fn explicit_head_dim_need_not_divide_hidden() {
        let c = Config::from_json(r#"{"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 24}"#)
            .unwrap();
        assert_eq!(c.head_dim(), 24);
    }

    #[test]
    fn moe_takes_minimind_defaults_and_checks_its_sizes() {
        let c = Config::from_json(r#"{"use_moe": true}"#).unwrap();
        assert_eq!((c.num_experts, c.num_experts_per_tok, c.norm_topk_prob), (4, 1, true));
        assert_eq!(c.moe_intermediate_size(), 2432, "moe_intermediate_size defaults to intermediate_size");
        let dense = Config::from_json("{}").unwrap();
        // Each layer trades 3·I·H of dense FFN for a 4×H router and four experts of the same size.
        let per_layer = 4 * 768 + 4 * 3 * 2432 * 768 - 3 * 2432 * 768;
        assert_eq!(c.weight_count(), dense.weight_count() + 8 * per_layer);
        // Every weight is held once; where this CPU packs weights into panels, only the routers ([4, H]:
        // out = 4) have a partial panel, padded with zeros; the other sizes fill whole panels (tests/wasm.rs
        // checks the wasm32 panels' padding).
        let router_padding = crate::model::linear::Weight::held_floats(4, 768) - 4 * 768;
        assert_eq!(c.weight_bytes_held(), c.weight_count() * 4 + 8 * 4 * router_padding);
        let e = Config::from_json(r#"{"use_moe": true, "num_experts": 4, "num_experts_per_tok": 5}"#).unwrap_err();
        assert!(e.to_string().contains("num_experts_per_tok must be between 1 and num_experts (4), got 5"), "{e}");
        let e = Config::from_json(r#"{"use_moe": true, "num_experts": 0}"#).unwrap_err();
        assert!(e.to_string().contains("num_experts must be between 1 and 256"), "{e}");
        let e = Config::from_json(r#"{"use_moe": true, "moe_intermediate_size": 0}"#).unwrap_err();
        assert!(e.to_string().contains("moe_intermediate_size must be between"), "{e}");
        // A dense model ignores the MoE fields, as MiniMind does.
        assert!(Config::from_json(r#"{"use_moe": false, "num_experts_per_tok": 9}"#).is_ok());
    }

    #[test]
    fn other_activations_are_refused_by_name() {
        assert!(Config::from_json(r#"{"use_moe": false, "hidden_act": "silu"}"#).is_ok());
        assert!(Config::from_json(r#"{"hidden_act": "swish"}"#).is_ok());
        let e = Config::from_json(r#"{"hidden_act": "gelu"}"#).unwrap_err();
        assert_eq!(e.to_string(), r#"bad config: hidden_act is "gelu": attnscope's FFN runs silu (SwiGLU) only"#);
        assert!(Config::from_json(r#"{"use_moe": "yes"}"#).unwrap_err().to_string().contains("use_moe must be true or false"));
    }

    #[test]
    fn rope_theta_follows_the_model_type_when_missing() {
        assert_eq!(Config::from_json(r#"{"model_type": "llama"}"#).unwrap().rope_theta, 10000.0);
        assert_eq!(Config::from_json(r#"{"model_type": "mistral"}"#).unwrap().rope_theta, 10000.0);
        assert_eq!(Config::from_json(r#"{"model_type": "minimind"}"#).unwrap().rope_theta, 1e6);
        assert_eq!(Config::from_json(r#"{"model_type": "llama", "rope_theta": 500000.0}"#).unwrap().rope_theta, 500000.0);
        let v5 = r#"{"model_type": "llama", "rope_parameters": {"rope_theta": 500000.0, "rope_type": "default"}}"#;
        assert_eq!(Config::from_json(v5).unwrap().rope_theta, 500000.0);
        let e = Config::from_json(r#"{"rope_parameters": {"rope_theta": "big"}}"#).unwrap_err();
        assert!(e.to_string().contains("rope_parameters.rope_theta must be a number"), "{e}");
    }

    #[test]
    fn llama_model_type_has_no_qk_norm() {
        let c = Config::from_json(r#"{"model_type": "llama"}"#).unwrap();
        assert!(!c.qk_norm);
    }

    #[test]
    fn bos_token_id_is_read_when_given_and_checked_against_the_vocabulary() {
        assert_eq!(Config::from_json("{}").unwrap().bos_token_id, None);
        assert_eq!(Config::from_json(r#"{"bos_token_id": null}"#).unwrap().bos_token_id, None);
        let c = Config::from_json(r#"{"bos_token_id": 1, "vocab_size": 6400}"#).unwrap();
        assert_eq!(c.bos_token_id, Some(1));
        assert_eq!(Config::from_json(&c.to_json()).unwrap().bos_token_id, Some(1), "to_json keeps it");
        for bad in ["6400", "-1", "1.5", "\"1\"", "[1]"] {
            let e = Config::from_json(&format!(r#"{{"bos_token_id": {bad}, "vocab_size": 6400}}"#)).unwrap_err();
            assert!(e.to_string().contains("bos_token_id"), "{bad}: {e}");
        }
    }
}

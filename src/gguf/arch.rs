//! The model in a GGUF file: its `Config` from the metadata llama.cpp writes (`{arch}.block_count`,
//! `{arch}.attention.head_count` …), its tensors under llama.cpp's names mapped onto MiniMind's /
//! Hugging Face's layout (weights.rs), and its tokenizer (vocab.rs).
//!
//! Architectures: `llama` (SmolLM, Llama, Mistral; no Q/K norm), `qwen2` (biases on q/k/v) and `qwen3`
//! (Q/K norm: MiniMind-3's own layout). llama.cpp's converter stores a llama model's attn_q / attn_k
//! rows permuted for its interleaved RoPE (`LlamaModel.permute`); they are put back here, as
//! transformers' GGUF loader does (`reverse_permute_weights`), so that RoPE is rotate-half as in
//! MiniMind. Qwen files are not permuted.

use serde::Serialize;

use super::{read_header, required, said, tensor_f32, vocab, Header, TensorInfo, Value};
use crate::weights::{self, Weights};
use crate::{Config, Error};

/// The architectures attnscope runs, as `general.architecture` names them.
const ARCHITECTURES: &str = "llama, qwen2, qwen3";

/// A GGUF model loaded: the config, the weights in f32 and the tokenizer as tokenizer.json text.
pub struct GgufModel {
    pub config: Config,
    pub weights: Weights,
    pub tokenizer_json: String,
    pub summary: GgufSummary,
}

/// What a GGUF file is, known from its header alone.
#[derive(Clone, Debug, Serialize)]
pub struct GgufSummary {
    /// `general.architecture`: llama, qwen2 or qwen3.
    pub architecture: String,
    /// `general.name`, when the file has one.
    pub name: Option<String>,
    /// The tensor types, most elements first ("Q4_1, F32").
    pub types: Vec<String>,
    /// The tokenizer's kind and pre-tokenizer, "gpt2 · smollm".
    pub tokenizer: String,
    /// How many bytes of the file the header takes.
    pub header_bytes: u64,
    #[serde(skip)]
    pub config: Config,
}

/// Reads what a GGUF file is from its first bytes (`head`, the whole header; `header_needs` says
/// how much that is) and its size: the config, the tensors checked against it (names, shapes,
/// types, inside the file) and the tokenizer's metadata. No tensor data is read.
pub fn inspect(head: &[u8], file_size: u64) -> Result<GgufSummary, Error> {
    let header = read_header(head, file_size)?;
    summarize(&header)
}

fn summarize(header: &Header) -> Result<GgufSummary, Error> {
    let config = config(header)?;
    check_tensors(header, &config)?;
    let tokenizer = vocab::describe(header, config.vocab_size)?;
    let mut by_type: Vec<(String, u64)> = Vec::new();
    for t in &header.tensors {
        match by_type.iter_mut().find(|(n, _)| n == t.ty.name()) {
            Some((_, count)) => *count += t.elements(),
            None => by_type.push((t.ty.name().to_string(), t.elements())),
        }
    }
    by_type.sort_by(|a, b| b.1.cmp(&a.1));
    Ok(GgufSummary {
        architecture: architecture(header)?.to_string(),
        name: header.get("general.name").and_then(Value::as_str).map(str::to_string),
        types: by_type.into_iter().map(|(n, _)| n).collect(),
        tokenizer,
        header_bytes: header.data_start,
        config,
    })
}

/// Loads a whole GGUF file: `inspect`'s checks, then every tensor dequantized to f32 (refused by
/// name if it holds NaN or infinity), and the tokenizer.
pub fn load(bytes: &[u8]) -> Result<GgufModel, Error> {
    let header = read_header(bytes, bytes.len() as u64)?;
    let summary = summarize(&header)?;
    let config = summary.config.clone();
    let llama = architecture(&header)? == "llama";
    let weights = weights::assemble(&config, |slot| {
        let name = gguf_name(&slot.name);
        let t = header.tensor(&name).expect("check_tensors found every tensor");
        let mut data = tensor_f32(&header, t, bytes);
        if let Some(at) = data.iter().position(|x| !x.is_finite()) {
            return Err(said(
                "gguf.nonFinite",
                vec![("name", name.clone()), ("value", data[at].to_string()), ("index", at.to_string())],
                format!("tensor {name} holds {} at element {at}", data[at]),
            ));
        }
        if llama && (name.ends_with(".attn_q.weight") || name.ends_with(".attn_k.weight")) {
            let heads = if name.ends_with(".attn_q.weight") { config.num_attention_heads } else { config.num_key_value_heads };
            data = unpermute(&data, heads, slot.shape[1]);
        }
        Ok(data)
    })?;
    let tokenizer_json = vocab::tokenizer_json(&header, config.vocab_size)?;
    Ok(GgufModel { config, weights, tokenizer_json, summary })
}

/// Undoes llama.cpp's `permute` of a q or k weight `[heads * d, cols]`: within each head, stored row
/// 2i + j is the original row j * d/2 + i (rotate-half's pairs (i, i + d/2) were made adjacent).
fn unpermute(stored: &[f32], heads: usize, cols: usize) -> Vec<f32> {
    let rows = stored.len() / cols;
    let d = rows / heads;
    let half = d / 2;
    let mut out = vec![0.0; stored.len()];
    for h in 0..heads {
        for i in 0..half {
            for j in 0..2 {
                let (from, to) = (h * d + 2 * i + j, h * d + j * half + i);
                out[to * cols..(to + 1) * cols].copy_from_slice(&stored[from * cols..(from + 1) * cols]);
            }
        }
    }
    out
}

fn architecture(header: &Header) -> Result<&str, Error> {
    let arch = required(header, "general.architecture", Value::as_str, "a string")?;
    match arch {
        "llama" | "qwen2" | "qwen3" => Ok(arch),
        other => Err(said(
            "gguf.architecture",
            vec![("arch", other.to_string()), ("supported", ARCHITECTURES.to_string())],
            format!("the file holds a {other} model, which attnscope does not run; these are: {ARCHITECTURES}"),
        )),
    }
}

/// The Config the metadata describes, resolved (so every limit of config.rs holds). The vocabulary
/// size is token_embd's; Q/K norm, q/k/v biases and a separate output matrix follow the tensors.
fn config(header: &Header) -> Result<Config, Error> {
    let arch = architecture(header)?;
    let key = |k: &str| format!("{arch}.{k}");
    let count = |k: &str| -> Result<usize, Error> {
        let v = required(header, &key(k), Value::as_u64, "a whole number")?;
        usize::try_from(v).map_err(|_| said("gguf.tooBig", vec![("key", key(k)), ("value", v.to_string())], format!("{} is {v}, more than this machine can count", key(k))))
    };
    let optional_count = |k: &str| -> Result<Option<usize>, Error> { header.get(&key(k)).map(|_| count(k)).transpose() };
    let heads = count("attention.head_count")?;
    let kv_heads = optional_count("attention.head_count_kv")?.unwrap_or(heads);
    let head_dim = optional_count("attention.key_length")?;
    if let (Some(k), Some(v)) = (head_dim, optional_count("attention.value_length")?) {
        if k != v {
            return Err(unsupported(format!("keys of {k} and values of {v} per head"), "attention.value_length"));
        }
    }
    if let Some(kind) = header.get(&key("rope.scaling.type")).and_then(Value::as_str) {
        let factor = header.get(&key("rope.scaling.factor")).and_then(Value::as_f64).unwrap_or(1.0);
        if kind != "none" && factor != 1.0 {
            return Err(unsupported(format!("RoPE scaling \"{kind}\" (factor {factor})"), "rope.scaling.type"));
        }
    }
    if header.tensor("rope_freqs.weight").is_some() {
        return Err(unsupported("Llama 3's RoPE frequency factors (rope_freqs)".into(), "rope_freqs.weight"));
    }
    let embed = header.tensor("token_embd.weight").ok_or_else(|| missing("token_embd.weight"))?;
    let vocab_size = embed.dims.get(1).copied().unwrap_or(0);
    let mut config = Config {
        hidden_size: count("embedding_length")?,
        num_hidden_layers: count("block_count")?,
        num_attention_heads: heads,
        num_key_value_heads: kv_heads,
        head_dim,
        intermediate_size: Some(count("feed_forward_length")?),
        vocab_size: usize::try_from(vocab_size).unwrap_or(usize::MAX),
        rms_norm_eps: required(header, &key("attention.layer_norm_rms_epsilon"), Value::as_f64, "a number")?,
        rope_theta: header.get(&key("rope.freq_base")).map_or(Ok(crate::model::config::LLAMA_ROPE_THETA), |v| {
            v.as_f64().ok_or_else(|| said("gguf.keyKind", vec![("key", key("rope.freq_base")), ("kind", "a number".into()), ("found", v.kind().into())], format!("metadata key {} is not a number", key("rope.freq_base"))))
        })?,
        max_position_embeddings: optional_count("context_length")?.unwrap_or(2048),
        tie_word_embeddings: header.tensor("output.weight").is_none(),
        inference_rope_scaling: false,
        qk_norm: header.tensor("blk.0.attn_q_norm.weight").is_some(),
        attention_bias: header.tensor("blk.0.attn_q.bias").is_some(),
        ..Config::default()
    }
    .resolve()?;
    if let Some(dims) = optional_count("rope.dimension_count")? {
        if dims != config.head_dim() {
            return Err(unsupported(format!("RoPE on {dims} of each head's {} dimensions", config.head_dim()), "rope.dimension_count"));
        }
    }
    let bos = header.get("tokenizer.ggml.bos_token_id").and_then(Value::as_u64);
    let adds_bos = matches!(header.get("tokenizer.ggml.add_bos_token"), Some(Value::Bool(true)));
    // Only a model trained with a BOS first is offered one (the page's BOS switch follows this).
    config.bos_token_id = bos.filter(|&b| adds_bos && b < config.vocab_size as u64).map(|b| b as u32);
    Ok(config)
}

fn unsupported(what: String, key: &str) -> Error {
    said(
        "gguf.unsupported",
        vec![("what", what.clone()), ("key", key.to_string())],
        format!("the model uses {what} ({key}), which attnscope does not compute"),
    )
}

fn missing(name: &str) -> Error {
    said("gguf.missingTensor", vec![("name", name.to_string())], format!("the file has no tensor {name}"))
}

/// llama.cpp's name for a tensor of MiniMind's / Hugging Face's layout.
fn gguf_name(hf: &str) -> String {
    match hf {
        "model.embed_tokens.weight" => return "token_embd.weight".into(),
        "model.norm.weight" => return "output_norm.weight".into(),
        "lm_head.weight" => return "output.weight".into(),
        _ => {}
    }
    let rest = hf.strip_prefix("model.layers.").expect("a layer tensor");
    let (layer, part) = rest.split_once('.').expect("layer.part");
    let part = match part {
        "input_layernorm.weight" => "attn_norm.weight",
        "self_attn.q_proj.weight" => "attn_q.weight",
        "self_attn.k_proj.weight" => "attn_k.weight",
        "self_attn.v_proj.weight" => "attn_v.weight",
        "self_attn.q_proj.bias" => "attn_q.bias",
        "self_attn.k_proj.bias" => "attn_k.bias",
        "self_attn.v_proj.bias" => "attn_v.bias",
        "self_attn.o_proj.weight" => "attn_output.weight",
        "self_attn.q_norm.weight" => "attn_q_norm.weight",
        "self_attn.k_norm.weight" => "attn_k_norm.weight",
        "post_attention_layernorm.weight" => "ffn_norm.weight",
        "mlp.gate_proj.weight" => "ffn_gate.weight",
        "mlp.up_proj.weight" => "ffn_up.weight",
        "mlp.down_proj.weight" => "ffn_down.weight",
        other => unreachable!("no GGUF name for {other}: a dense model has none"),
    };
    format!("blk.{layer}.{part}")
}

/// Every tensor the config implies must be in the file with its shape (ggml's dims are the Hugging
/// Face shape reversed), and nothing else may be: each refusal names the tensor.
fn check_tensors(header: &Header, config: &Config) -> Result<(), Error> {
    let slots = weights::layout(config);
    let mut wanted = std::collections::HashSet::new();
    for slot in &slots {
        let name = gguf_name(&slot.name);
        let t: &TensorInfo = header.tensor(&name).ok_or_else(|| missing(&name))?;
        let expected: Vec<u64> = slot.shape.iter().rev().map(|&d| d as u64).collect();
        if t.dims != expected {
            return Err(said(
                "gguf.shape",
                vec![("name", name.clone()), ("found", format!("{:?}", t.dims)), ("expected", format!("{expected:?}"))],
                format!("tensor {name} has dims {:?}, expected {expected:?} from the metadata", t.dims),
            ));
        }
        wanted.insert(name);
    }
    if let Some(extra) = header.tensors.iter().find(|t| !wanted.contains(&t.name)) {
        return Err(said(
            "gguf.unexpected",
            vec![("name", extra.name.clone())],
            format!("the file has a tensor {} that a {} model of this size does not have", extra.name, architecture(header)?),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpermute_undoes_llama_cpp_permute() {
        // Two heads of d = 4, one column: llama.cpp stores rows (0, 2, 1, 3) of each head.
        let stored = [0.0, 2.0, 1.0, 3.0, 4.0, 6.0, 5.0, 7.0];
        assert_eq!(unpermute(&stored, 2, 1), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
    }

    #[test]
    fn maps_every_layer_tensor() {
        assert_eq!(gguf_name("model.layers.12.mlp.down_proj.weight"), "blk.12.ffn_down.weight");
        assert_eq!(gguf_name("model.layers.0.self_attn.k_proj.bias"), "blk.0.attn_k.bias");
        assert_eq!(gguf_name("lm_head.weight"), "output.weight");
    }
}

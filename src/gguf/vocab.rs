//! The tokenizer a GGUF file carries in its metadata (`tokenizer.ggml.*`), written out as the
//! Hugging Face tokenizer.json that tokenizer.rs reads everywhere else: a byte-level BPE ("gpt2")
//! with the file's tokens, merges and special tokens, and the pre-tokenizer `tokenizer.ggml.pre`
//! names, as llama.cpp's `llama-vocab.cpp` defines it (its regexes, Hugging Face's pre-tokenizers).
//! A SentencePiece vocabulary ("llama") or an unknown pre-tokenizer is refused by name.

use serde_json::{json, Map, Value as Json};

use super::{required, said, Header, Value};
use crate::Error;

/// The pre-tokenizers read, by llama.cpp's names.
const PRE_TOKENIZERS: &str = "default, gpt2, smollm, qwen2, llama-bpe";

/// llama.cpp's LLAMA_VOCAB_PRE_TYPE_LLAMA3 and _QWEN2 splits (Hugging Face's own regexes).
const LLAMA3_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN2_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// ggml's token types.
const CONTROL: i64 = 3;
const USER_DEFINED: i64 = 4;

fn strings<'h>(header: &'h Header, key: &str) -> Result<Vec<&'h str>, Error> {
    let items = required(header, key, |v| if let Value::Array(a) = v { Some(a) } else { None }, "an array of strings")?;
    items
        .iter()
        .map(|v| v.as_str().ok_or_else(|| said("gguf.keyKind", vec![("key", key.to_string()), ("kind", "an array of strings".into()), ("found", "an array of other things".into())], format!("metadata key {key} is not an array of strings"))))
        .collect()
}

/// The pre-tokenizer named, checked: (model, pre).
fn kind(header: &Header) -> Result<(&str, &str), Error> {
    let model = required(header, "tokenizer.ggml.model", Value::as_str, "a string")?;
    if model != "gpt2" {
        return Err(said(
            "gguf.tokenizerModel",
            vec![("model", model.to_string())],
            format!("the file's tokenizer is \"{model}\" (tokenizer.ggml.model); attnscope reads byte-level BPE (\"gpt2\") tokenizers only"),
        ));
    }
    let pre = header.get("tokenizer.ggml.pre").and_then(Value::as_str).unwrap_or("default");
    if !["default", "gpt2", "smollm", "qwen2", "llama-bpe"].contains(&pre) {
        return Err(said(
            "gguf.preTokenizer",
            vec![("pre", pre.to_string()), ("supported", PRE_TOKENIZERS.to_string())],
            format!("the file's tokenizer splits text as \"{pre}\" (tokenizer.ggml.pre), which attnscope does not; these are: {PRE_TOKENIZERS}"),
        ));
    }
    Ok((model, pre))
}

/// "gpt2 · smollm", after checking that the tokenizer can be built for a model of `vocab_size` ids.
pub fn describe(header: &Header, vocab_size: usize) -> Result<String, Error> {
    let (model, pre) = kind(header)?;
    let tokens = strings(header, "tokenizer.ggml.tokens")?;
    if tokens.len() > vocab_size {
        return Err(said(
            "gguf.tokensTooMany",
            vec![("count", tokens.len().to_string()), ("vocab", vocab_size.to_string())],
            format!("the file's tokenizer has {} tokens but its model's vocabulary has only {vocab_size}", tokens.len()),
        ));
    }
    Ok(format!("{model} · {pre}"))
}

/// The tokenizer.json text for the file's tokenizer.
pub fn tokenizer_json(header: &Header, vocab_size: usize) -> Result<String, Error> {
    describe(header, vocab_size)?;
    let (_, pre) = kind(header)?;
    let tokens = strings(header, "tokenizer.ggml.tokens")?;
    let merges = match header.get("tokenizer.ggml.merges") {
        None => Vec::new(),
        Some(_) => strings(header, "tokenizer.ggml.merges")?,
    };
    let types: Vec<i64> = match header.get("tokenizer.ggml.token_type") {
        Some(Value::Array(a)) => a.iter().map(|v| match v {
            Value::Int(i) => *i,
            Value::Uint(u) => *u as i64,
            _ => 1,
        }).collect(),
        _ => Vec::new(),
    };
    let mut vocab = Map::new();
    let mut added = Vec::new();
    for (id, token) in tokens.iter().enumerate() {
        let ty = types.get(id).copied().unwrap_or(1);
        if ty == CONTROL || ty == USER_DEFINED {
            added.push(json!({
                "id": id, "content": token, "single_word": false, "lstrip": false, "rstrip": false,
                "normalized": false, "special": ty == CONTROL,
            }));
        }
        vocab.entry(token.to_string()).or_insert(json!(id));
    }
    let byte_level = |use_regex: bool| json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": use_regex});
    let split = |pattern: &str| json!({"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": false});
    let pre_tokenizer = match pre {
        "smollm" => json!({"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true}, byte_level(true)]}),
        "qwen2" => json!({"type": "Sequence", "pretokenizers": [split(QWEN2_SPLIT), byte_level(false)]}),
        "llama-bpe" => json!({"type": "Sequence", "pretokenizers": [split(LLAMA3_SPLIT), byte_level(false)]}),
        _ => byte_level(true),
    };
    let tokenizer = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {
            "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
            "vocab": Json::Object(vocab),
            "merges": merges,
        },
    });
    Ok(tokenizer.to_string())
}

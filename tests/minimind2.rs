//! A MiniMind2-Small checkpoint loads as the Llama layout it is and computes PyTorch's numbers: its
//! config exactly (hidden 512, 8 layers, 8 heads / 2 KV heads, no Q/K norm, vocab 6400, tied), in bf16,
//! with MiniMind's tokenizer. The 26 M weights are not committed: each is a formula of its place
//! (tools/reference/make_checkpoints.py `formula_weights`, exact in bf16), written here into a
//! model.safetensors; tests/fixtures/checkpoints/minimind2_small/expected.json holds PyTorch's layer-0
//! probs and last logits for its sentence.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use attnscope::model::{AttentionPath, Model, RunOptions};
use attnscope::tokenizer::Tokenizer;
use attnscope::trace::Selection;
use attnscope::weights;
use common::{assert_close, CPU_VS_PYTORCH};
use half::bf16;
use safetensors::tensor::TensorView;
use safetensors::Dtype;
use serde::Deserialize;

#[derive(Deserialize)]
struct Expected {
    text: String,
    ids: Vec<u32>,
    probs: Vec<f32>,
    logits_last: Vec<f32>,
}

fn fixture() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/checkpoints/minimind2_small")
}

/// The checkpoint's tensors by name (sorted), with shapes: MiniMind2's Llama layout, tied lm_head.
fn shapes(h: usize, layers: usize, kv: usize, d: usize, i: usize, v: usize) -> BTreeMap<String, Vec<usize>> {
    let mut t = BTreeMap::from([("model.embed_tokens.weight".to_string(), vec![v, h]), ("model.norm.weight".to_string(), vec![h])]);
    for l in 0..layers {
        let p = |s: &str| format!("model.layers.{l}.{s}");
        for (name, shape) in [
            ("input_layernorm.weight", vec![h]),
            ("self_attn.q_proj.weight", vec![h, h]),
            ("self_attn.k_proj.weight", vec![kv * d, h]),
            ("self_attn.v_proj.weight", vec![kv * d, h]),
            ("self_attn.o_proj.weight", vec![h, h]),
            ("post_attention_layernorm.weight", vec![h]),
            ("mlp.gate_proj.weight", vec![i, h]),
            ("mlp.up_proj.weight", vec![i, h]),
            ("mlp.down_proj.weight", vec![h, i]),
        ] {
            t.insert(p(name), shape);
        }
    }
    t
}

/// make_checkpoints.py's formula: norm weights 1; the k-th other tensor's element i is
/// ((i * 2654435761 + (k + 1) * 40503) mod 2^32 >> 16) mod 255 - 127, over 8192.
fn formula_checkpoint() -> Vec<u8> {
    let encoded: Vec<(String, Vec<usize>, Vec<u8>)> = shapes(512, 8, 2, 64, 1408, 6400)
        .into_iter()
        .enumerate()
        .map(|(k, (name, shape))| {
            let n: usize = shape.iter().product();
            let value = |i: usize| {
                if name.ends_with("norm.weight") {
                    return 1.0;
                }
                let x = (i as u32).wrapping_mul(2_654_435_761).wrapping_add((k as u32 + 1).wrapping_mul(40_503));
                (((x >> 16) % 255) as f32 - 127.0) / 8192.0
            };
            let bytes = (0..n).flat_map(|i| bf16::from_f32(value(i)).to_le_bytes()).collect();
            (name, shape, bytes)
        })
        .collect();
    let views = encoded.iter().map(|(name, shape, bytes)| (name.as_str(), TensorView::new(Dtype::BF16, shape.clone(), bytes).unwrap()));
    safetensors::serialize(views, None).unwrap()
}

#[test]
fn a_minimind2_small_checkpoint_loads_as_llama_layout_and_computes_pytorchs_numbers() {
    let dir = fixture();
    let config_json = std::fs::read_to_string(dir.join("config.json")).unwrap();
    let expected: Expected = serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let bytes = formula_checkpoint();
    assert_eq!(bytes.len() as u64, 8 + u64::from_le_bytes(bytes[..8].try_into().unwrap()) + 25_829_888 * 2, "26 M weights in bf16");

    // From its header alone: MiniMind2's shape, Q/K norm decided off by the checkpoint, bf16.
    let header = weights::check_checkpoint(&config_json, &bytes, bytes.len() as u64).unwrap();
    let c = &header.config;
    assert_eq!((c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.head_dim()), (512, 8, 8, 2, 64));
    assert!(!c.qk_norm && c.tie_word_embeddings);
    assert_eq!(c.weight_count(), 25_829_888);
    assert_eq!(header.dtypes, vec![Dtype::BF16]);

    let (config, w) = weights::load_checkpoint(&config_json, &bytes).unwrap();
    let tokenizer = Tokenizer::from_json(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("www/minimind/tokenizer.json")).unwrap()).unwrap();
    assert_eq!(tokenizer.encode(&expected.text).unwrap().ids, expected.ids, "MiniMind's tokenizer gives Hugging Face's ids");
    let model = Model::new(config, w);
    for path in [AttentionPath::Naive, AttentionPath::Flash { tile: 5 }] {
        let opts = RunOptions { causal: true, path, ..RunOptions::default() };
        let trace = model.trace(&expected.ids, None, 0, &opts, Selection::all()).unwrap().trace;
        let probs = trace.get("layers.0.attn.probs").unwrap();
        assert_close(&CPU_VS_PYTORCH, &format!("{path:?}: layers.0.attn.probs"), &probs.shape, &probs.data, &expected.probs);
        let logits = &trace.get("logits").unwrap().data;
        let last = &logits[logits.len() - 6400..];
        assert_close(&CPU_VS_PYTORCH, &format!("{path:?}: logits, last row"), &[6400], last, &expected.logits_last);
    }
}

//! Weights: safetensors in the Hugging Face layout (f32, f16, bf16), every way a checkpoint can be
//! wrong, and seeded random weights.

use std::collections::BTreeMap;

mod common;

use attnscope::weights::{self, Weights};
use attnscope::Config;
use half::{bf16, f16};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

/// GQA, Q/K norm, tied: a MiniMind-3 in miniature.
fn tiny() -> Config {
    Config::from_json(
        r#"{"hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "intermediate_size": 24, "vocab_size": 40}"#,
    )
    .unwrap()
}

fn with(config: &Config, change: impl FnOnce(&mut Config)) -> Config {
    let mut c = config.clone();
    change(&mut c);
    c.resolve().unwrap()
}

/// A checkpoint as editable data: name -> (shape, values).
type Tensors = BTreeMap<String, (Vec<usize>, Vec<f32>)>;

fn tensors_of(config: &Config, w: &Weights) -> Tensors {
    let bytes = weights::to_safetensors(config, w);
    let file = SafeTensors::deserialize(&bytes).unwrap();
    file.tensors()
        .into_iter()
        .map(|(name, view)| {
            assert_eq!(view.dtype(), Dtype::F32);
            let values = view.data().chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
            (name, (view.shape().to_vec(), values))
        })
        .collect()
}

/// Writes `tensors` in `dtype` (F32, F16, BF16, or I32 to be refused), as PyTorch would save them.
fn write(tensors: &Tensors, dtype: Dtype) -> Vec<u8> {
    let encoded: Vec<(&String, &Vec<usize>, Vec<u8>)> = tensors
        .iter()
        .map(|(name, (shape, values))| {
            let bytes = match dtype {
                Dtype::F32 => values.iter().flat_map(|x| x.to_le_bytes()).collect(),
                Dtype::F16 => values.iter().flat_map(|&x| f16::from_f32(x).to_le_bytes()).collect(),
                Dtype::BF16 => values.iter().flat_map(|&x| bf16::from_f32(x).to_le_bytes()).collect(),
                Dtype::I32 => values.iter().flat_map(|&x| (x as i32).to_le_bytes()).collect(),
                other => panic!("the tests do not write {other}"),
            };
            (name, shape, bytes)
        })
        .collect();
    let views = encoded
        .iter()
        .map(|(name, shape, bytes)| (name.as_str(), TensorView::new(dtype, (*shape).clone(), bytes).unwrap()));
    safetensors::serialize(views, None).unwrap()
}

fn checkpoint(config: &Config) -> Tensors {
    tensors_of(config, &weights::random(config, 7))
}

fn load_error(config: &Config, bytes: &[u8]) -> String {
    weights::load_safetensors(config, bytes).unwrap_err().to_string()
}

fn assert_same(a: &Weights, b: &Weights) {
    assert_eq!(a.embed_tokens, b.embed_tokens);
    assert_eq!(a.norm, b.norm);
    assert_eq!(a.lm_head, b.lm_head);
    assert_eq!(a.layers.len(), b.layers.len());
    for (x, y) in a.layers.iter().zip(&b.layers) {
        assert_eq!(x.input_layernorm, y.input_layernorm);
        assert_eq!((&x.q_proj, &x.k_proj, &x.v_proj, &x.o_proj), (&y.q_proj, &y.k_proj, &y.v_proj, &y.o_proj));
        assert_eq!((&x.q_norm, &x.k_norm), (&y.q_norm, &y.k_norm));
        assert_eq!(x.post_attention_layernorm, y.post_attention_layernorm);
        assert_eq!(x.mlp, y.mlp);
    }
}

/// Round trip through `dtype`: the values are first rounded to it, so the load must be exact.
fn round_trip(dtype: Dtype, round: fn(f32) -> f32) {
    let config = tiny();
    let mut tensors = checkpoint(&config);
    for (_, values) in tensors.values_mut() {
        values.iter_mut().for_each(|x| *x = round(*x));
    }
    let loaded = weights::load_safetensors(&config, &write(&tensors, dtype)).unwrap();
    assert_eq!(tensors_of(&config, &loaded), tensors);
}

#[test]
fn f32_checkpoint_round_trips_exactly() {
    let config = tiny();
    let w = weights::random(&config, 1);
    let loaded = weights::load_safetensors(&config, &weights::to_safetensors(&config, &w)).unwrap();
    assert_same(&loaded, &w);
}

#[test]
fn f16_checkpoint_reads_exactly() {
    round_trip(Dtype::F16, |x| f16::from_f32(x).to_f32());
}

#[test]
fn bf16_checkpoint_reads_exactly() {
    round_trip(Dtype::BF16, |x| bf16::from_f32(x).to_f32());
}

#[test]
fn checkpoint_has_hugging_face_names_and_shapes() {
    let tensors = checkpoint(&tiny());
    let shape = |name: &str| tensors[name].0.clone();
    assert_eq!(shape("model.embed_tokens.weight"), [40, 16]);
    assert_eq!(shape("model.layers.1.self_attn.q_proj.weight"), [16, 16]);
    assert_eq!(shape("model.layers.1.self_attn.k_proj.weight"), [8, 16]);
    assert_eq!(shape("model.layers.1.self_attn.o_proj.weight"), [16, 16]);
    assert_eq!(shape("model.layers.1.self_attn.k_norm.weight"), [4]);
    assert_eq!(shape("model.layers.1.mlp.down_proj.weight"), [16, 24]);
    assert_eq!(shape("model.norm.weight"), [16]);
    assert_eq!(tensors.len(), 1 + 2 * 11 + 1);
}

#[test]
fn tied_checkpoint_has_no_lm_head() {
    let config = tiny();
    let tensors = checkpoint(&config);
    assert!(!tensors.contains_key("lm_head.weight"));
    let loaded = weights::load_safetensors(&config, &write(&tensors, Dtype::F32)).unwrap();
    assert!(loaded.lm_head.is_none());
    assert_eq!(loaded.lm_head(), &loaded.embed_tokens);
}

#[test]
fn untied_checkpoint_loads_its_own_lm_head() {
    let config = with(&tiny(), |c| c.tie_word_embeddings = false);
    let tensors = checkpoint(&config);
    let loaded = weights::load_safetensors(&config, &write(&tensors, Dtype::F32)).unwrap();
    let lm_head = loaded.lm_head.as_ref().expect("untied");
    assert_eq!(lm_head.to_array().iter().copied().collect::<Vec<_>>(), tensors["lm_head.weight"].1);
    assert_ne!(lm_head, &loaded.embed_tokens);
}

#[test]
fn untied_config_needs_lm_head() {
    let untied = with(&tiny(), |c| c.tie_word_embeddings = false);
    let e = load_error(&untied, &write(&checkpoint(&tiny()), Dtype::F32));
    assert!(e.contains("missing tensor lm_head.weight") && e.contains("[40, 16]"), "{e}");
}

#[test]
fn tied_config_ignores_lm_head_in_the_file_as_hugging_face_does() {
    let config = tiny();
    let untied = with(&config, |c| c.tie_word_embeddings = false);
    let loaded = weights::load_safetensors(&config, &write(&checkpoint(&untied), Dtype::F32)).unwrap();
    assert!(loaded.lm_head.is_none());
}

#[test]
fn missing_tensor_is_named() {
    let config = tiny();
    let mut tensors = checkpoint(&config);
    tensors.remove("model.layers.1.mlp.up_proj.weight");
    let e = load_error(&config, &write(&tensors, Dtype::F32));
    assert!(e.contains("missing tensor model.layers.1.mlp.up_proj.weight") && e.contains("[24, 16]"), "{e}");
}

#[test]
fn unexpected_tensor_is_named() {
    let config = tiny();
    let mut tensors = checkpoint(&config);
    tensors.insert("model.layers.0.self_attn.extra_bias".into(), (vec![2], vec![1.0, 0.5]));
    let e = load_error(&config, &write(&tensors, Dtype::F32));
    assert!(e.contains("unexpected tensor model.layers.0.self_attn.extra_bias"), "{e}");
}

#[test]
fn rope_inverse_frequencies_in_the_file_are_ignored_as_hugging_face_does() {
    // Older exports save the rotary embedding's buffer; the model computes it from rope_theta.
    let config = tiny();
    let mut tensors = checkpoint(&config);
    tensors.insert("model.layers.0.self_attn.rotary_emb.inv_freq".into(), (vec![2], vec![1.0, 0.5]));
    let loaded = weights::load_safetensors(&config, &write(&tensors, Dtype::F32)).unwrap();
    assert_same(&loaded, &weights::load_safetensors(&config, &write(&checkpoint(&config), Dtype::F32)).unwrap());
}

#[test]
fn extra_layers_are_unexpected_and_the_layer_count_is_named() {
    let config = tiny();
    let deeper = with(&config, |c| c.num_hidden_layers = 3);
    let e = load_error(&config, &write(&checkpoint(&deeper), Dtype::F32));
    assert!(e.contains("unexpected tensor model.layers.2.") && e.contains("num_hidden_layers = 2"), "{e}");
    assert!(e.contains("and 10 more"), "{e}");
}

#[test]
fn misshaped_tensor_names_both_shapes() {
    let config = tiny();
    // A checkpoint saved with MHA (nKV = nH) read with the GQA config: k_proj is [16, 16], not [8, 16].
    let mha = with(&config, |c| c.num_key_value_heads = 4);
    let e = load_error(&config, &write(&checkpoint(&mha), Dtype::F32));
    assert!(e.contains("model.layers.0.self_attn.k_proj.weight has shape [16, 16], expected [8, 16]"), "{e}");
}

#[test]
fn nan_weight_is_named_with_its_position() {
    let config = tiny();
    let mut tensors = checkpoint(&config);
    tensors.get_mut("model.layers.1.self_attn.v_proj.weight").unwrap().1[16 + 3] = f32::NAN;
    let e = load_error(&config, &write(&tensors, Dtype::F32));
    assert!(e.contains("model.layers.1.self_attn.v_proj.weight holds NaN at index [1, 3]"), "{e}");
}

#[test]
fn infinite_weight_is_named() {
    let config = tiny();
    let mut tensors = checkpoint(&config);
    tensors.get_mut("model.norm.weight").unwrap().1[5] = f32::INFINITY;
    // f16 overflows to inf too: a checkpoint converted carelessly.
    let e = load_error(&config, &write(&tensors, Dtype::F16));
    assert!(e.contains("model.norm.weight holds inf at index [5]"), "{e}");
}

#[test]
fn truncated_file_is_refused() {
    let config = tiny();
    let bytes = weights::to_safetensors(&config, &weights::random(&config, 1));
    for cut in [bytes.len() - 1, bytes.len() / 2, 20, 4, 0] {
        let e = load_error(&config, &bytes[..cut]);
        assert!(e.contains("not a readable safetensors file"), "cut at {cut}: {e}");
    }
}

#[test]
fn garbage_header_is_refused() {
    let mut bytes = 12u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"not json!!!!");
    let e = load_error(&tiny(), &bytes);
    assert!(e.contains("not a readable safetensors file") && e.contains("JSON"), "{e}");
}

#[test]
fn integer_dtype_is_refused_naming_tensor_and_dtype() {
    let config = tiny();
    let e = load_error(&config, &write(&checkpoint(&config), Dtype::I32));
    assert!(e.contains("model.embed_tokens.weight is stored as I32"), "{e}");
}

#[test]
fn llama_layout_without_qk_norm_loads_when_config_has_none() {
    let llama = with(&tiny(), |c| c.qk_norm = false);
    let tensors = checkpoint(&llama);
    assert!(!tensors.keys().any(|n| n.contains("_norm.weight") && n.contains("self_attn")));
    let loaded = weights::load_safetensors(&llama, &write(&tensors, Dtype::BF16)).unwrap();
    assert!(loaded.layers.iter().all(|l| l.q_norm.is_none() && l.k_norm.is_none()));
}

#[test]
fn llama_layout_is_refused_when_config_says_qk_norm() {
    let llama = with(&tiny(), |c| c.qk_norm = false);
    let e = load_error(&tiny(), &write(&checkpoint(&llama), Dtype::F32));
    assert!(e.contains("qk_norm = true") && e.contains("\"qk_norm\": false"), "{e}");
}

#[test]
fn qk_norm_weights_are_refused_when_config_has_none() {
    let llama = with(&tiny(), |c| c.qk_norm = false);
    let e = load_error(&llama, &write(&checkpoint(&tiny()), Dtype::F32));
    assert!(e.contains("q_norm") && e.contains("qk_norm = false"), "{e}");
}

/// `tiny()` as a config.json says it.
const TINY_JSON: &str = r#"{"hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 24, "vocab_size": 40}"#;

#[test]
fn checkpoint_decides_qk_norm_when_config_does_not_say() {
    let llama = with(&tiny(), |c| c.qk_norm = false);
    let bytes = write(&checkpoint(&llama), Dtype::BF16);
    let (config, loaded) = weights::load_checkpoint(TINY_JSON, &bytes).unwrap();
    assert!(!config.qk_norm);
    assert!(loaded.layers[0].q_norm.is_none());
    let (config, loaded) = weights::load_checkpoint(TINY_JSON, &write(&checkpoint(&tiny()), Dtype::F16)).unwrap();
    assert!(config.qk_norm);
    assert!(loaded.layers[0].k_norm.is_some());
}

#[test]
fn config_that_says_qk_norm_is_held_to_it() {
    let llama = with(&tiny(), |c| c.qk_norm = false);
    let says = TINY_JSON.replace('}', r#", "qk_norm": true}"#);
    let e = weights::load_checkpoint(&says, &write(&checkpoint(&llama), Dtype::F32)).unwrap_err().to_string();
    assert!(e.contains("qk_norm = true"), "{e}");
}

#[test]
fn file_too_small_for_the_config_is_refused_before_reading_it() {
    let config = tiny();
    let (smallest, largest) = weights::checkpoint_size_range(&config);
    let llama = with(&config, |c| c.qk_norm = false);
    assert_eq!(smallest, llama.weight_count() * 2 + 8, "the smallest file is a Llama layout in 16 bits");
    assert!(weights::check_checkpoint_size(&config, smallest).is_ok());
    assert!(weights::check_checkpoint_size(&config, largest).is_ok());
    let e = weights::check_checkpoint_size(&config, smallest - 1).unwrap_err();
    // The page says it in the reader's language from the key and the sizes in bytes.
    let attnscope::Error::Checkpoint(said) = &e else { panic!("{e:?}") };
    assert_eq!(said.key, "tooSmall");
    let arg = |name: &str| said.args.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone());
    assert_eq!((arg("size"), arg("least")), (Some((smallest - 1).to_string()), Some(smallest.to_string())));
    let e = e.to_string();
    assert!(e.contains("truncated") && e.contains("another model"), "{e}");
    let bytes = write(&checkpoint(&config), Dtype::F16);
    let e = weights::load_checkpoint(TINY_JSON, &bytes[..bytes.len() / 2]).unwrap_err().to_string();
    assert!(e.contains("truncated"), "{e}");
}

#[test]
fn file_too_large_for_the_config_is_refused_before_reading_it() {
    let config = tiny();
    let (_, largest) = weights::checkpoint_size_range(&config);
    let e = weights::check_checkpoint_size(&config, largest + 1).unwrap_err().to_string();
    assert!(e.contains("is config.json the right one"), "{e}");
}

/// The first 8 + N bytes of a safetensors file: its header and nothing of the tensor data.
fn head(bytes: &[u8]) -> &[u8] {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    &bytes[..8 + n]
}

fn check_error(config_json: &str, head: &[u8], size: usize) -> String {
    weights::check_checkpoint(config_json, head, size as u64).unwrap_err().to_string()
}

#[test]
fn header_alone_gives_the_config_and_the_dtype() {
    let bytes = write(&checkpoint(&tiny()), Dtype::BF16);
    let header = weights::check_checkpoint(TINY_JSON, head(&bytes), bytes.len() as u64).unwrap();
    assert_eq!(header.config, tiny());
    assert_eq!(header.dtypes, vec![Dtype::BF16]);
    let llama = with(&tiny(), |c| c.qk_norm = false);
    let bytes = write(&checkpoint(&llama), Dtype::F32);
    let header = weights::check_checkpoint(TINY_JSON, head(&bytes), bytes.len() as u64).unwrap();
    assert!(!header.config.qk_norm);
    assert_eq!(header.dtypes, vec![Dtype::F32]);
}

#[test]
fn header_alone_names_a_missing_misshaped_or_integer_tensor() {
    let config = tiny();
    let mut tensors = checkpoint(&config);
    tensors.remove("model.layers.0.self_attn.q_proj.weight");
    let bytes = write(&tensors, Dtype::F16);
    assert!(check_error(TINY_JSON, head(&bytes), bytes.len()).contains("missing tensor model.layers.0.self_attn.q_proj.weight"));
    let other = TINY_JSON.replace("\"intermediate_size\": 24", "\"intermediate_size\": 32");
    let bytes = write(&checkpoint(&config), Dtype::F16);
    let e = check_error(&other, head(&bytes), bytes.len());
    assert!(e.contains("mlp.gate_proj.weight has shape [24, 16], expected [32, 16]"), "{e}");
    let bytes = write(&checkpoint(&config), Dtype::I32);
    assert!(check_error(TINY_JSON, head(&bytes), bytes.len()).contains("is stored as I32"));
}

#[test]
fn data_shorter_or_longer_than_the_header_says_is_refused() {
    let bytes = write(&checkpoint(&tiny()), Dtype::F32);
    let e = check_error(TINY_JSON, head(&bytes), bytes.len() - 3);
    assert!(e.contains("truncated") && e.contains("only"), "{e}");
    let e = check_error(TINY_JSON, head(&bytes), bytes.len() + 3);
    assert!(e.contains("3 bytes follow the last tensor"), "{e}");
}

#[test]
fn implausible_or_unreadable_header_is_refused() {
    let bytes = write(&checkpoint(&tiny()), Dtype::F32);
    let mut huge = bytes.clone();
    huge[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(check_error(TINY_JSON, &huge, huge.len()).contains("header length"));
    let mut garbage = bytes.clone();
    garbage[9..20].copy_from_slice(b"not json!!!");
    assert!(check_error(TINY_JSON, &garbage, garbage.len()).contains("header is not valid"));
    let e = check_error(TINY_JSON, &bytes[..20], bytes.len());
    assert!(e.contains("bytes of the file are needed"), "{e}");
}

/// A header whose one entry has a dtype safetensors does not know, or a shape no file can hold or
/// its offsets do not span, is refused naming that tensor.
#[test]
fn a_header_entry_at_fault_is_named() {
    let bytes = write(&checkpoint(&tiny()), Dtype::F32);
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let name = "model.layers.0.mlp.up_proj.weight";
    let redo = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut h = header.clone();
        edit(&mut h[name]);
        let text = serde_json::to_vec(&h).unwrap();
        let mut out = (text.len() as u64).to_le_bytes().to_vec();
        out.extend(&text);
        out.extend(&bytes[8 + n..]);
        check_error(TINY_JSON, &out, out.len())
    };
    let e = redo(&|t| t["dtype"] = "F8".into());
    assert!(e.contains(&format!("tensor {name}")) && e.contains("unknown variant `F8`"), "{e}");
    let e = redo(&|t| t["shape"] = serde_json::json!([usize::MAX, 4]));
    assert!(e.contains(&format!("tensor {name}")) && e.contains("more elements than any file holds"), "{e}");
    let e = redo(&|t| t["shape"] = serde_json::json!([24, 17]));
    assert!(e.contains(&format!("tensor {name}")) && e.contains("needs 1632 bytes") && e.contains("span 1536"), "{e}");
    // An offset past what wasm32 can address is said as that, not as serde's "expected usize".
    let e = redo(&|t| t["data_offsets"] = serde_json::json!([0u64, 1_000_000_000_000_000u64]));
    if usize::BITS < 64 {
        assert!(e.contains(&format!("tensor {name} the data offset 1000000000000000, past what this machine can address")), "{e}");
    }
    assert!(!e.contains("expected usize"), "{e}");
    // So is a dimension below 0 or past what this machine counts to.
    let e = redo(&|t| t["shape"] = serde_json::json!([-1, 4]));
    assert!(e.contains(&format!("tensor {name} a dimension of -1; a dimension is a whole number from 0 to {}", usize::MAX)), "{e}");
    assert!(!e.contains("expected usize"), "{e}");
}

/// Two tensors whose bytes overlap, or that leave a gap, are named both: the one where the
/// safetensors crate's walk stopped is not the one at fault.
#[test]
fn overlapping_tensors_are_named_both() {
    let bytes = write(&checkpoint(&tiny()), Dtype::F32);
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let rewrite = |h: serde_json::Value| {
        let text = serde_json::to_vec(&h).unwrap();
        let mut out = (text.len() as u64).to_le_bytes().to_vec();
        out.extend(&text);
        out.extend(&bytes[8 + n..]);
        check_error(TINY_JSON, &out, out.len())
    };
    // A tensor of 2 bytes over the start of the first one.
    let first = header.as_object().unwrap().iter().filter(|(k, _)| *k != "__metadata__").min_by_key(|(_, v)| v["data_offsets"][0].as_u64().unwrap()).unwrap().0.clone();
    let mut h = header.clone();
    h["model.extra.weight"] = serde_json::json!({"dtype": "F16", "shape": [1], "data_offsets": [0, 2]});
    let e = rewrite(h);
    assert!(e.contains("overlap") && e.contains("model.extra.weight") && e.contains(&first), "{e}");
}

#[test]
fn random_weights_are_deterministic() {
    let config = tiny();
    assert_same(&weights::random(&config, 42), &weights::random(&config, 42));
}

/// MiniMind's MoE layout: a router `mlp.gate` [E, H] and E experts under `mlp.experts.{e}.`, of
/// moe_intermediate_size; written and read back exactly, and a missing expert named.
#[test]
fn moe_checkpoint_has_minimind_names_and_round_trips() {
    let config = with(&tiny(), |c| {
        c.use_moe = true;
        c.num_experts = 3;
        c.num_experts_per_tok = 2;
        c.moe_intermediate_size = Some(20);
    });
    let tensors = checkpoint(&config);
    let shape = |name: &str| tensors[name].0.clone();
    assert_eq!(shape("model.layers.1.mlp.gate.weight"), [3, 16]);
    assert_eq!(shape("model.layers.1.mlp.experts.2.gate_proj.weight"), [20, 16]);
    assert_eq!(shape("model.layers.0.mlp.experts.0.down_proj.weight"), [16, 20]);
    assert!(!tensors.contains_key("model.layers.0.mlp.gate_proj.weight"), "no dense FFN in a MoE layer");
    assert_eq!(tensors.values().map(|(s, _)| s.iter().product::<usize>() as u64).sum::<u64>(), config.weight_count());
    let w = weights::random(&config, 7);
    assert_same(&w, &weights::load_safetensors(&config, &write(&tensors, Dtype::F32)).unwrap());

    let mut missing = tensors.clone();
    missing.remove("model.layers.1.mlp.experts.1.up_proj.weight");
    let e = load_error(&config, &write(&missing, Dtype::F32));
    assert!(e.contains("missing tensor model.layers.1.mlp.experts.1.up_proj.weight") && e.contains("[20, 16]"), "{e}");
    // The same checkpoint under a dense config: the experts are named as unexpected.
    let e = load_error(&tiny(), &write(&tensors, Dtype::F32));
    assert!(e.contains("missing tensor model.layers.0.mlp.gate_proj.weight"), "{e}");
}

#[test]
fn random_weights_differ_by_seed_and_by_tensor() {
    let config = tiny();
    let (a, b) = (weights::random(&config, 1), weights::random(&config, 2));
    assert_ne!(a.embed_tokens, b.embed_tokens);
    assert_ne!(a.layers[0].q_proj, b.layers[0].q_proj);
    // Same shape, different names: different streams.
    assert_ne!(a.layers[0].q_proj, a.layers[1].q_proj);
    let ffn = a.layers[0].mlp.dense().unwrap();
    assert_ne!(ffn.gate_proj, ffn.up_proj);
}

#[test]
fn random_layer_0_is_unchanged_when_layers_are_added() {
    let config = tiny();
    let deeper = with(&config, |c| c.num_hidden_layers = 5);
    let (a, b) = (weights::random(&config, 3), weights::random(&deeper, 3));
    assert_eq!(a.embed_tokens, b.embed_tokens);
    assert_eq!(a.layers[0].q_proj, b.layers[0].q_proj);
    assert_eq!(a.layers[1].mlp, b.layers[1].mlp);
}

#[test]
fn random_weights_have_fan_in_scale_and_unit_norms() {
    let config = Config::from_json(r#"{"hidden_size": 256, "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 64}"#).unwrap();
    let w = weights::random(&config, 0);
    let layer = &w.layers[0];
    let std = |a: ndarray::ArrayView2<f32>| (a.iter().map(|x| x * x).sum::<f32>() / a.len() as f32).sqrt();
    for (name, m, fan_in) in
        [("q_proj", &layer.q_proj, 256.0), ("down_proj", &layer.mlp.dense().unwrap().down_proj, config.intermediate_size() as f32)]
    {
        let m = m.to_array();
        let m = m.view();
        let expected = 1.0 / f32::sqrt(fan_in);
        assert!((std(m) / expected - 1.0).abs() < 0.05, "{name}: std {} vs {expected}", std(m));
        let bound = f32::sqrt(3.0 / fan_in);
        assert!(m.iter().all(|x| x.abs() <= bound), "{name}");
    }
    assert!(layer.input_layernorm.iter().chain(layer.q_norm.as_ref().unwrap()).chain(&w.norm).all(|&x| x == 1.0));
}

/// Pinned bits: the same seed gives the same numbers on every platform (native and wasm32 alike).
/// The values were also reproduced independently with numpy float32 from the algorithm in `random`.
#[test]
fn random_weights_match_pinned_bits() {
    let w = weights::random(&tiny(), 2024);
    let bits = |a: &attnscope::model::linear::Weight| a.to_array().iter().take(3).map(|x| x.to_bits()).collect::<Vec<u32>>();
    assert_eq!(bits(&w.embed_tokens), PINNED_EMBED);
    assert_eq!(bits(&w.layers[1].o_proj), PINNED_O_PROJ_1);
}
const PINNED_EMBED: [u32; 3] = [1052728626, 1050331352, 1050958290];
const PINNED_O_PROJ_1: [u32; 3] = [1050065390, 3181025891, 1044968879];

#[cfg(not(target_arch = "wasm32"))]
mod load_dir {
    use super::common::TempDir;
    use super::*;

    /// A model folder, removed again when the test ends (pass or fail).
    fn model_dir(name: &str, config_json: &str, checkpoint: Option<&[u8]>) -> TempDir {
        let dir = TempDir::new(&format!("weights-{name}"));
        std::fs::write(dir.join("config.json"), config_json).unwrap();
        if let Some(bytes) = checkpoint {
            std::fs::write(dir.join("model.safetensors"), bytes).unwrap();
        }
        dir
    }

    #[test]
    fn reads_config_and_checkpoint() {
        let config = tiny();
        let w = weights::random(&config, 9);
        let dir = model_dir("ok", TINY_JSON, Some(&weights::to_safetensors(&config, &w)));
        let (loaded_config, loaded) = weights::load_dir(&dir.0).unwrap();
        assert_eq!(loaded_config, config);
        assert_same(&loaded, &w);
    }

    #[test]
    fn checkpoint_decides_qk_norm_when_config_does_not_say() {
        let llama = with(&tiny(), |c| c.qk_norm = false);
        let bytes = weights::to_safetensors(&llama, &weights::random(&llama, 9));
        let dir = model_dir("qk", TINY_JSON, Some(&bytes));
        let (config, loaded) = weights::load_dir(&dir.0).unwrap();
        assert!(!config.qk_norm);
        assert!(loaded.layers[0].q_norm.is_none());
    }

    #[test]
    fn errors_name_the_file() {
        let dir = model_dir("short", TINY_JSON, Some(&[0; 16]));
        let e = weights::load_dir(&dir.0).unwrap_err().to_string();
        assert!(e.contains(&dir.join("model.safetensors").display().to_string()) && e.contains("truncated"), "{e}");
    }

    #[test]
    fn missing_files_are_named() {
        let dir = model_dir("no-model", TINY_JSON, None);
        let e = weights::load_dir(&dir.0).unwrap_err().to_string();
        assert!(e.contains("model.safetensors") && e.contains(&dir.0.display().to_string()), "{e}");
        let e = weights::load_dir(&dir.join("nowhere")).unwrap_err().to_string();
        assert!(e.contains("nowhere/config.json"), "{e}");
    }

    #[test]
    fn bad_config_names_its_path() {
        let dir = model_dir("bad-config", r#"{"hidden_size": 0}"#, None);
        let e = weights::load_dir(&dir.0).unwrap_err().to_string();
        assert!(e.contains("config.json") && e.contains("hidden_size"), "{e}");
    }
}

#[test]
fn a_load_counts_the_file_twice_its_f32_weights_and_what_the_tab_holds_already() {
    let budget = weights::MAX_LOAD_BYTES;
    // An f32 file of 0.9 GB: the file and its weights (1.8 GB) would fit; with the page's copy of the
    // file counted as well (2.7 GB) it still fits; with 0.6 GB held for the model loaded now it does not.
    let file = 900_000_000;
    assert!(file + file <= budget);
    weights::check_load_budget(file, file, 0).unwrap();
    let e = weights::check_load_budget(file, file, 600_000_000).unwrap_err();
    assert_eq!(e.key, "budget");
    assert_eq!(e.args.iter().find(|(k, _)| *k == "need").map(|(_, v)| v.as_str()), Some("3300000000"));
    let e = e.text;
    assert!(e.starts_with("this checkpoint needs 3.30 GB to load (its 0.90 GB file twice, the page's copy and the core's, 0.90 GB of f32 weights, and 0.60 GB held for the model loaded now), more than the 3.22 GB"), "{e}");
    // A file of 1.2 GB: file + weights (2.4 GB) is within the budget, but the file twice is not.
    let file = 1_200_000_000;
    assert!(file + file <= budget && 3 * file > budget);
    let e = weights::check_load_budget(file, file, 0).unwrap_err().text;
    assert!(e.contains("needs 3.60 GB"), "{e}");
    // Sizes near u64::MAX saturate instead of wrapping into a small number that would pass.
    assert!(weights::check_load_budget(u64::MAX / 2 + 1, 0, 0).is_err());
    assert!(weights::check_load_budget(0, u64::MAX, 1).is_err());
}

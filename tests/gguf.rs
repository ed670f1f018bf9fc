//! GGUF files (src/gguf) against gguf-py and transformers' GGUF loader
//! (tools/reference/make_gguf_fixtures.py wrote tests/fixtures/gguf and tests/fixtures/smollm2):
//! dequantized weights equal gguf-py's bit for bit, every traced entry of a tiny model of each
//! architecture and type matches transformers within the contract's tolerance (common::GGUF_VS_TRANSFORMERS)
//! on both attention paths,
//! and hostile files are refused by name without a panic.
//!
//! SmolLM2-135M itself (www/models/smollm2/, fetched by `./build.sh build`) is checked where it is
//! there: tokenization, logits and attention of three prompts, a greedy continuation and the
//! induction head. `ATTNSCOPE_REQUIRE_SMOLLM2=1` (build.sh test) makes its absence a failure.

mod common;

use std::path::PathBuf;

use attnscope::gguf::{self, Value};
use attnscope::model::generate::{Generator, Sampling};
use attnscope::model::{AttentionPath, Model, RunOptions};
use attnscope::tokenizer::Tokenizer;
use attnscope::trace::{Selection, Trace};
use attnscope::Error;
use common::{assert_close, fixtures, floats, GGUF_VS_TRANSFORMERS, SMOLLM2_VS_TRANSFORMERS};
use safetensors::SafeTensors;

const CASES: [&str; 11] = [
    "llama_f32", "llama_f16", "llama_bf16", "llama_q8_0", "llama_q4_0", "llama_q4_1", "llama_q5_0", "llama_q5_1",
    "llama_untied_q8_0", "qwen3_f32", "qwen2_f32",
];

fn read(path: PathBuf) -> Vec<u8> {
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every tensor of `gguf_file` dequantized, against gguf-py's, bit for bit.
fn check_dequantized(gguf_file: PathBuf, expected: PathBuf) {
    let bytes = read(gguf_file);
    let header = gguf::read_header(&bytes, bytes.len() as u64).unwrap();
    let expected_bytes = read(expected);
    let expected = SafeTensors::deserialize(&expected_bytes).unwrap();
    assert_eq!(expected.len(), header.tensors.len());
    for t in &header.tensors {
        let ours = gguf::tensor_f32(&header, t, &bytes);
        let theirs = floats(&expected.tensor(&t.name).unwrap());
        let differ = ours.iter().zip(&theirs).position(|(a, b)| a.to_bits() != b.to_bits());
        assert_eq!(ours.len(), theirs.len(), "{}: length", t.name);
        assert_eq!(differ, None, "{} ({}): first differing element", t.name, t.ty.name());
    }
}

#[test]
fn dequantization_equals_gguf_py_for_every_type() {
    for case in CASES {
        let dir = fixtures().join("gguf").join(case);
        check_dequantized(dir.join("model.gguf"), dir.join("weights.safetensors"));
    }
    let dir = fixtures().join("gguf/kquants");
    check_dequantized(dir.join("model.gguf"), dir.join("expected.safetensors"));
}

fn trace_case(case: &str, path: AttentionPath) -> Trace {
    let dir = fixtures().join("gguf").join(case);
    let loaded = gguf::load(&read(dir.join("model.gguf"))).unwrap_or_else(|e| panic!("{case}: {e}"));
    let input: serde_json::Value = serde_json::from_slice(&read(dir.join("input.json"))).unwrap();
    let ids: Vec<u32> = serde_json::from_value(input["ids"].clone()).unwrap();
    Tokenizer::for_model(&loaded.tokenizer_json, loaded.config.vocab_size).unwrap_or_else(|e| panic!("{case}: tokenizer: {e}"));
    let model = Model::new(loaded.config, loaded.weights);
    let opts = RunOptions { causal: true, path, ..RunOptions::default() };
    model.trace(&ids, None, 0, &opts, Selection::all()).unwrap().trace
}

fn assert_trace_matches(case: &str, fixture: &[u8], ours: &Trace) {
    let reference = SafeTensors::deserialize(fixture).unwrap();
    assert!(reference.len() >= 7, "{case}: the fixture has {} tensors", reference.len());
    for (name, view) in reference.tensors() {
        let entry = ours.entries.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("{case}: we do not record {name}"));
        assert_eq!(entry.shape, view.shape(), "{case}: shape of {name}");
        assert_close(&GGUF_VS_TRANSFORMERS, &format!("{case}: {name}"), view.shape(), &entry.data, &floats(&view));
    }
}

#[test]
fn every_architecture_and_type_matches_transformers() {
    for case in CASES {
        let fixture = read(fixtures().join("gguf").join(case).join("trace.safetensors"));
        assert_trace_matches(case, &fixture, &trace_case(case, AttentionPath::Naive));
        assert_trace_matches(case, &fixture, &trace_case(case, AttentionPath::Flash { tile: 3 }));
    }
}

#[test]
fn the_metadata_decides_the_layout() {
    let load = |case: &str| gguf::load(&read(fixtures().join("gguf").join(case).join("model.gguf"))).unwrap();
    let llama = load("llama_q4_1");
    assert_eq!(llama.summary.architecture, "llama");
    assert_eq!(llama.summary.types, ["Q4_1", "F32"]);
    assert!(!llama.config.qk_norm && !llama.config.attention_bias && llama.config.tie_word_embeddings);
    assert_eq!((llama.config.rope_theta, llama.config.head_dim()), (10000.0, 16));
    assert!(load("qwen3_f32").config.qk_norm);
    assert!(load("qwen2_f32").config.attention_bias);
    assert!(!load("llama_untied_q8_0").config.tie_word_embeddings);
}

// --- hostile files: a writer for GGUF, to build them from a good one ---

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

fn put_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Uint(u) => out.extend(u.to_le_bytes()),
        Value::Int(i) => out.extend(i.to_le_bytes()),
        Value::Float(f) => out.extend(f.to_le_bytes()),
        Value::Bool(b) => out.push(*b as u8),
        Value::Str(s) => put_str(out, s),
        Value::Array(items) => {
            out.extend(value_type(items.first().unwrap_or(&Value::Uint(0))).to_le_bytes());
            out.extend((items.len() as u64).to_le_bytes());
            items.iter().for_each(|i| put_value(out, i));
        }
    }
}

/// The writer keeps every integer at 64 bits and every float at f64: other widths read the same.
fn value_type(v: &Value) -> u32 {
    match v {
        Value::Uint(_) => 10,
        Value::Int(_) => 11,
        Value::Float(_) => 12,
        Value::Bool(_) => 7,
        Value::Str(_) => 8,
        Value::Array(_) => 9,
    }
}

/// A file with `header`'s metadata and tensor table (types by id) and `data` as its data section.
fn write(header: &gguf::Header, type_ids: &[u32], data: &[u8]) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend((header.tensors.len() as u64).to_le_bytes());
    out.extend((header.metadata.len() as u64).to_le_bytes());
    for (key, value) in &header.metadata {
        put_str(&mut out, key);
        out.extend(value_type(value).to_le_bytes());
        put_value(&mut out, value);
    }
    for (t, &ty) in header.tensors.iter().zip(type_ids) {
        put_str(&mut out, &t.name);
        out.extend((t.dims.len() as u32).to_le_bytes());
        t.dims.iter().for_each(|d| out.extend(d.to_le_bytes()));
        out.extend(ty.to_le_bytes());
        out.extend(t.offset.to_le_bytes());
    }
    out.resize(out.len().div_ceil(32) * 32, 0);
    out.extend(data);
    out
}

struct Good {
    header: gguf::Header,
    types: Vec<u32>,
    data: Vec<u8>,
}

fn good() -> Good {
    let bytes = read(fixtures().join("gguf/llama_q8_0/model.gguf"));
    let header = gguf::read_header(&bytes, bytes.len() as u64).unwrap();
    let types = header.tensors.iter().map(|t| if t.ty.name() == "F32" { 0 } else { 8 }).collect();
    let data = bytes[header.data_start as usize..].to_vec();
    Good { header, types, data }
}

/// The refusal's key, after checking that it is a named refusal (of the file, or of the config its
/// metadata describes) with a sentence.
fn refusal(bytes: &[u8]) -> &'static str {
    match gguf::load(bytes) {
        Err(Error::Checkpoint(said) | Error::Config(said)) => {
            assert!(!said.text.is_empty());
            said.key
        }
        Err(other) => panic!("not a named refusal: {other}"),
        Ok(_) => panic!("a hostile file loaded"),
    }
}

#[test]
fn the_writer_writes_what_the_reader_reads() {
    let g = good();
    assert!(gguf::load(&write(&g.header, &g.types, &g.data)).is_ok());
}

#[test]
fn hostile_files_are_refused_by_name() {
    let g = good();
    let with = |edit: &dyn Fn(&mut gguf::Header, &mut Vec<u32>)| {
        let (mut header, mut types) = (g.header.clone(), g.types.clone());
        edit(&mut header, &mut types);
        write(&header, &types, &g.data)
    };
    let embed = g.header.tensors.iter().position(|t| t.name == "token_embd.weight").unwrap();
    assert_eq!(refusal(&with(&|h, _| h.tensors[embed].offset = 1 << 40)), "gguf.outside");
    let last_aligned = (g.data.len() as u64 / 32) * 32;
    assert_eq!(refusal(&with(&|h, _| h.tensors[embed].offset = last_aligned)), "gguf.outside");
    assert_eq!(refusal(&with(&|h, _| h.tensors[embed].offset += 1)), "gguf.misaligned");
    assert_eq!(refusal(&with(&|h, _| h.tensors[embed].dims[1] = u64::MAX / 2)), "gguf.tensorShape");
    assert_eq!(refusal(&with(&|h, _| h.tensors[embed].dims = vec![64, 256, 1, 1, 1])), "gguf.dims");
    assert_eq!(refusal(&with(&|_, t| t[embed] = 17)), "gguf.tensorType");
    let message = gguf::load(&with(&|_, t| t[embed] = 17)).err().unwrap().to_string();
    assert!(message.contains("IQ2_XS is not") || message.contains("IQ2_XS, which attnscope does not read"), "{message}");
    assert_eq!(refusal(&with(&|_, t| t[embed] = 99)), "gguf.tensorType");
    assert_eq!(refusal(&with(&|h, _| h.metadata.insert("general.architecture".into(), Value::Str("gemma3".into())).map(drop).unwrap_or(()))), "gguf.architecture");
    assert_eq!(refusal(&with(&|h, _| h.metadata.remove("llama.block_count").map(drop).unwrap_or(()))), "gguf.missingKey");
    assert_eq!(refusal(&with(&|h, _| h.metadata.insert("llama.block_count".into(), Value::Uint(1 << 40)).map(drop).unwrap_or(()))), "config.overLimit");
    assert_eq!(refusal(&with(&|h, _| h.metadata.insert("llama.attention.head_count_kv".into(), Value::Uint(3)).map(drop).unwrap_or(()))), "config.kvHeads");
    assert_eq!(refusal(&with(&|h, _| h.metadata.insert("tokenizer.ggml.model".into(), Value::Str("llama".into())).map(drop).unwrap_or(()))), "gguf.tokenizerModel");
    assert_eq!(refusal(&with(&|h, _| h.metadata.insert("tokenizer.ggml.pre".into(), Value::Str("deepseek-coder".into())).map(drop).unwrap_or(()))), "gguf.preTokenizer");
    // A tokenizer with more ids than the model's embedding has rows.
    let more = |h: &mut gguf::Header, _: &mut Vec<u32>| {
        if let Some(Value::Array(tokens)) = h.metadata.get_mut("tokenizer.ggml.tokens") {
            tokens.push(Value::Str("extra".into()));
        }
    };
    assert_eq!(refusal(&with(&more)), "gguf.tokensTooMany");
    // A tensor the model does not have, and one it needs missing.
    assert_eq!(refusal(&with(&|h, _| h.tensors[embed].name = "token_embd.bias".into())), "gguf.missingTensor");
    // NaN in an F32 tensor.
    let norm = g.header.tensors.iter().find(|t| t.name == "output_norm.weight").unwrap();
    let mut data = g.data.clone();
    data[norm.offset as usize..norm.offset as usize + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    assert_eq!(refusal(&write(&g.header, &g.types, &data)), "gguf.nonFinite");
}

#[test]
fn lying_counts_and_lengths_are_refused_before_allocating() {
    let g = good();
    let bytes = write(&g.header, &g.types, &g.data);
    // The tensor count, then the metadata count, at 2^60.
    for at in [8, 16] {
        let mut b = bytes.clone();
        b[at..at + 8].copy_from_slice(&(1u64 << 60).to_le_bytes());
        assert_eq!(refusal(&b), "gguf.tooMany");
    }
    // The first key's length at 4 GB: the file is much shorter.
    let mut b = bytes.clone();
    b[24..32].copy_from_slice(&(4u64 << 30).to_le_bytes());
    assert_eq!(refusal(&b), "gguf.truncated");
    // An array that says it holds more items than the file has bytes.
    let key = b"tokenizer.ggml.tokens";
    let at = bytes.windows(key.len()).position(|w| w == key).unwrap() + key.len() + 4 + 4;
    let mut b = bytes.clone();
    b[at..at + 8].copy_from_slice(&(1u64 << 50).to_le_bytes());
    assert_eq!(refusal(&b), "gguf.badCount");
    let mut b = bytes.clone();
    b[4..8].copy_from_slice(&1u32.to_le_bytes());
    assert_eq!(refusal(&b), "gguf.version");
    assert_eq!(refusal(b"PK\x03\x04 not a gguf file"), "gguf.notGguf");
}

#[test]
fn a_file_cut_anywhere_is_refused_by_name() {
    let g = good();
    let bytes = write(&g.header, &g.types, &g.data);
    for len in (0..bytes.len()).step_by(997).chain([3, 7, 23, 24, 25, bytes.len() - 1]) {
        let key = refusal(&bytes[..len]);
        assert!(["gguf.notGguf", "gguf.truncated", "gguf.badCount", "gguf.outside"].contains(&key), "cut at {len}: {key}");
    }
}

#[test]
fn the_header_alone_says_what_the_file_is() {
    let bytes = read(fixtures().join("gguf/qwen3_f32/model.gguf"));
    // Each answer asks for more of the file's start until the header is whole, as the page reads it.
    let mut have = 100;
    let mut asked = 0;
    while let Some(needs) = gguf::header_needs(&bytes[..have], bytes.len() as u64) {
        assert!(needs as usize > have && needs as usize <= bytes.len());
        have = needs as usize;
        asked += 1;
    }
    assert!(asked > 0);
    let summary = gguf::inspect(&bytes[..have], bytes.len() as u64).unwrap();
    assert_eq!(summary.architecture, "qwen3");
    assert!(have < bytes.len() / 10, "the header is {have} bytes of {}", bytes.len());
}

// --- SmolLM2-135M, where build.sh fetched it ---

fn smollm2() -> Option<Vec<u8>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("www/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
    match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(_) if std::env::var_os("ATTNSCOPE_REQUIRE_SMOLLM2").is_some() => panic!("{} is missing: run ./build.sh build", path.display()),
        Err(_) => {
            eprintln!("SKIPPED: {} is missing (./build.sh build fetches it)", path.display());
            None
        }
    }
}

#[test]
fn smollm2_matches_transformers() {
    let Some(bytes) = smollm2() else { return };
    let reference: serde_json::Value = serde_json::from_slice(&read(fixtures().join("smollm2/reference.json"))).unwrap();
    let tensors = read(fixtures().join("smollm2/logits.safetensors"));
    let tensors = SafeTensors::deserialize(&tensors).unwrap();
    let loaded = gguf::load(&bytes).unwrap();
    assert_eq!(loaded.summary.tokenizer, "gpt2 · smollm");
    assert_eq!((loaded.config.num_hidden_layers, loaded.config.num_attention_heads, loaded.config.num_key_value_heads), (30, 9, 3));
    assert_eq!(loaded.config.bos_token_id, None, "SmolLM2 is not trained with a BOS first");
    let tokenizer = Tokenizer::for_model(&loaded.tokenizer_json, loaded.config.vocab_size).unwrap();
    for case in reference["tokenize"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let ids: Vec<u32> = serde_json::from_value(case["ids"].clone()).unwrap();
        assert_eq!(tokenizer.encode(text).unwrap().ids, ids, "tokens of {text:?}");
    }
    let model = Model::new(loaded.config, loaded.weights);
    for (k, prompt) in reference["prompts"].as_array().unwrap().iter().enumerate() {
        let text = prompt["text"].as_str().unwrap();
        let ids: Vec<u32> = serde_json::from_value(prompt["ids"].clone()).unwrap();
        assert_eq!(tokenizer.encode(text).unwrap().ids, ids, "{text:?}");
        let trace = model.trace(&ids, None, 0, &RunOptions::default(), Selection::all()).unwrap().trace;
        for (name, view) in tensors.tensors().into_iter().filter(|(n, _)| n.starts_with(&format!("prompt{k}."))) {
            let ours: Vec<f32> = match name.strip_prefix(&format!("prompt{k}.")).unwrap() {
                // The last position's row of the logits.
                "logits" => {
                    let e = trace.entries.iter().find(|e| e.name == "logits").unwrap();
                    let v = e.shape[1];
                    e.data[e.data.len() - v..].to_vec()
                }
                contract => trace.entries.iter().find(|e| e.name == contract).unwrap_or_else(|| panic!("no {contract}")).data.clone(),
            };
            assert_close(&SMOLLM2_VS_TRANSFORMERS, &format!("{text:?}: {name}"), view.shape(), &ours, &floats(&view));
        }
        let greedy: Vec<u32> = serde_json::from_value(prompt["greedy"].clone()).unwrap();
        let mut generator = Generator::new(&model, &ids, Sampling { temperature: 0.0, top_k: 0, top_p: 1.0, seed: 0 }).unwrap();
        for _ in 0..greedy.len() {
            generator.step(&model, &RunOptions::default(), Selection::none()).unwrap();
        }
        assert_eq!(&generator.ids[ids.len()..], &greedy[..], "greedy continuation of {text:?}");
    }
    // The textbook heads on 32 random tokens written twice.
    let induction = &reference["induction"];
    let once: Vec<u32> = serde_json::from_value(induction["ids"].clone()).unwrap();
    let (ids, n) = ([once.as_slice(), once.as_slice()].concat(), once.len());
    let trace = model.trace(&ids, None, 0, &RunOptions::default(), Selection { layers: Some(vec![16, 18]), ..Selection::all() }).unwrap().trace;
    let probs = |l: usize, h: usize, q: usize, k: usize| {
        let e = trace.entries.iter().find(|e| e.name == format!("layers.{l}.attn.probs")).unwrap();
        let s = e.shape[2];
        e.data[(h * e.shape[1] + q) * s + k]
    };
    // Each second-copy token's weight on the token after its first occurrence (the last one's is the
    // second copy's first token), and each token's on the one before it: the fixture's definitions.
    let induction_mean = (0..n).map(|j| probs(18, 6, n + j, j + 1)).sum::<f32>() / n as f32;
    let previous_mean = (1..2 * n).map(|i| probs(16, 0, i, i - 1)).sum::<f32>() / (2 * n - 1) as f32;
    assert!((induction_mean as f64 - induction["induction_mean"].as_f64().unwrap()).abs() < 1e-3, "L18H6 induction {induction_mean}");
    assert!((previous_mean as f64 - induction["prev_token_mean"].as_f64().unwrap()).abs() < 1e-3, "L16H0 previous-token {previous_mean}");
    assert!(induction_mean > 0.8 && previous_mean > 0.8);
}

#[test]
fn smollm2_shows_the_textbook_circuits_and_its_samples_hold() {
    use attnscope::analysis::{circuit, head_roles, induction};
    use attnscope::model::attention::MaskSpec;
    let Some(bytes) = smollm2() else { return };
    let loaded = gguf::load(&bytes).unwrap();
    let tokenizer = Tokenizer::for_model(&loaded.tokenizer_json, loaded.config.vocab_size).unwrap();
    let model = Model::new(loaded.config, loaded.weights);
    let ids = |text: &str| tokenizer.encode(text).unwrap().ids;

    // Indirect-object identification: the heads that push " Mary" carry it; as many others do not.
    let found = circuit::find(&model, &ids("When Mary and John went to the store, John gave a drink to"), None, 3).unwrap();
    assert_eq!(found.target, ids(" Mary")[0]);
    assert!(found.probability > 0.9, "p(Mary) {}", found.probability);
    assert!(found.knocked_out < found.probability - 0.3, "knocking out {:?} leaves {}", found.heads, found.knocked_out);
    assert!((found.control_knocked_out - found.probability).abs() < 0.05, "the control moves it to {}", found.control_knocked_out);
    assert_eq!(found.lens.last().unwrap().rank, 1, "the last layer's lens is the model's own top-1");
    assert_eq!(found.lens.len(), 30);

    // Every committed sample shows, live, what it says (examples/smollm2_samples.rs picked them).
    let samples: serde_json::Value = serde_json::from_slice(&read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("www/models/smollm2/samples.json"))).unwrap();
    let samples = samples["en"].as_array().unwrap();
    assert!(samples.len() >= 6, "{} samples", samples.len());
    for sample in samples {
        let (text, pattern) = (sample["text"].as_str().unwrap(), sample["pattern"].as_str().unwrap());
        let (layer, head) = (sample["layer"].as_u64().unwrap() as usize, sample["head"].as_u64().unwrap() as usize);
        let ids = ids(text);
        if let Some(answer) = sample.get("target").and_then(|t| t.as_str()) {
            let found = circuit::find(&model, &ids, None, 3).unwrap();
            assert_eq!(tokenizer.decode(&[found.target]).unwrap(), answer, "{text:?}");
            assert_eq!((found.heads[0].layer, found.heads[0].head), (layer, head), "{text:?}: the head that pushes {answer:?} most");
            continue;
        }
        let trace = model.trace(&ids, None, 0, &RunOptions::default(), Selection { layers: Some(vec![layer]), ..Selection::all() }).unwrap().trace;
        let e = trace.get(&format!("layers.{layer}.attn.probs")).unwrap();
        let probs = ndarray::ArrayView3::from_shape((e.shape[0], e.shape[1], e.shape[2]), &e.data[..]).unwrap();
        let score = match pattern {
            "induction" | "duplicate-token" => {
                let scores = induction::measure(probs, &ids)[head].unwrap();
                if pattern == "induction" { scores.induction } else { scores.duplicate }
            }
            _ => {
                let role = head_roles::measure(probs, &MaskSpec { causal: true, prefix_len: 0, padding: None })[head].unwrap().role();
                let named = match pattern {
                    "previous-token" => head_roles::Role::Previous,
                    "first-token" => head_roles::Role::First,
                    "current-token" => head_roles::Role::Current,
                    other => panic!("unknown pattern {other}"),
                };
                assert_eq!(role.role, named, "{text:?}: L{layer}H{head}");
                role.score
            }
        };
        assert!(score >= 0.5, "{text:?}: L{layer}H{head} shows {pattern} at {score}");
    }
}

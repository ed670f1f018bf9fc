//! The `attnscope` command as a user runs it (docs/trace-contract.md, "The command"): a trace
//! that matches PyTorch's, and for every kind of bad input a non-zero exit, exactly one line on stderr
//! that names the problem, no panic text, and no file left behind (neither --out nor a .partial).
//! Broken checkpoints are made from a small valid random one in a fresh temp directory per test.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use attnscope::weights;
use attnscope::Config;
use common::{assert_close, assert_matches_fixture, fixtures, TempDir, CPU_VS_PYTORCH, PATCH_VS_PYTORCH};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

const BIN: &str = env!("CARGO_BIN_EXE_attnscope");

impl TempDir {
    fn files(&self, sub: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.join(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// GQA with Q/K norm and MiniMind's vocabulary size, so the MiniMind tokenizer's ids fit.
fn small_config() -> Config {
    Config { hidden_size: 32, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, intermediate_size: Some(64), ..Config::default() }
        .resolve()
        .unwrap()
}

/// A valid checkpoint's tensors, to edit: (name, dtype, shape, bytes) in file order.
type Tensors = Vec<(String, Dtype, Vec<usize>, Vec<u8>)>;

fn valid_tensors() -> Tensors {
    let config = small_config();
    let bytes = weights::to_safetensors(&config, &weights::random(&config, 7));
    let file = SafeTensors::deserialize(&bytes).unwrap();
    let mut out: Tensors =
        file.tensors().into_iter().map(|(n, v)| (n, v.dtype(), v.shape().to_vec(), v.data().to_vec())).collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn serialize(tensors: &Tensors) -> Vec<u8> {
    let views = tensors.iter().map(|(n, dtype, shape, bytes)| (n.as_str(), TensorView::new(*dtype, shape.clone(), bytes).unwrap()));
    safetensors::serialize(views, None).unwrap()
}

const Q_PROJ: &str = "model.layers.1.self_attn.q_proj.weight";

/// `tmp/model` with config.json and model.safetensors, either written as given.
fn model_dir(tmp: &TempDir, config_json: Option<&str>, safetensors: Option<&[u8]>) -> PathBuf {
    let dir = tmp.join("model");
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(text) = config_json {
        std::fs::write(dir.join("config.json"), text).unwrap();
    }
    if let Some(bytes) = safetensors {
        std::fs::write(dir.join("model.safetensors"), bytes).unwrap();
    }
    dir
}

fn valid_model(tmp: &TempDir) -> PathBuf {
    model_dir(tmp, Some(&small_config().to_json()), Some(&serialize(&valid_tensors())))
}

/// A valid model whose one tensor `name` is replaced by what `change` makes of it (None drops it).
fn model_with(tmp: &TempDir, name: &str, change: impl FnOnce((Dtype, Vec<usize>, Vec<u8>)) -> Option<(Dtype, Vec<usize>, Vec<u8>)>) -> PathBuf {
    let mut tensors = valid_tensors();
    let at = tensors.iter().position(|t| t.0 == name).unwrap();
    let (n, dtype, shape, bytes) = tensors.remove(at);
    if let Some((dtype, shape, bytes)) = change((dtype, shape, bytes)) {
        tensors.insert(at, (n, dtype, shape, bytes));
    }
    model_dir(tmp, Some(&small_config().to_json()), Some(&serialize(&tensors)))
}

fn input(tmp: &TempDir, json: &str) -> PathBuf {
    let path = tmp.join("input.json");
    std::fs::write(&path, json).unwrap();
    path
}

const GOOD_INPUT: &str = r#"{"ids": [1, 2, 3, 4], "attention_mask": null, "prefix_len": 0}"#;

fn attnscope(args: &[&str]) -> Output {
    Command::new(BIN).args(args).env("RUST_BACKTRACE", "1").output().unwrap()
}

/// `attnscope trace` with --out in an empty `tmp/out`.
fn trace(tmp: &TempDir, model: &Path, input: &Path, extra: &[&str]) -> Output {
    std::fs::create_dir_all(tmp.join("out")).unwrap();
    let out = tmp.join("out/trace.safetensors");
    let mut args = vec!["trace", "--model", model.to_str().unwrap(), "--input", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    attnscope(&args)
}

/// The failure contract; `words` must all appear in the one line (case-insensitive).
fn assert_refused(tmp: &TempDir, out: &Output, words: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "exit status {:?}; stderr: {stderr}", out.status);
    assert_eq!(stderr.lines().count(), 1, "stderr is not one line:\n{stderr}");
    assert!(stderr.ends_with('\n'), "{stderr}");
    let lower = stderr.to_lowercase();
    for bad in ["panicked", "backtrace", "internal error"] {
        assert!(!lower.contains(bad), "{stderr}");
    }
    for w in words {
        assert!(lower.contains(&w.to_lowercase()), "stderr does not name the problem ({w}): {stderr}");
    }
    if tmp.join("out").exists() {
        assert_eq!(tmp.files("out"), Vec::<String>::new(), "files left behind");
    }
}

/// A valid model and `input_json` run through `trace`; the call must be refused naming `words`.
fn refused_input(test: &str, input_json: &str, words: &[&str]) {
    let tmp = TempDir::new(test);
    let model = valid_model(&tmp);
    let out = trace(&tmp, &model, &input(&tmp, input_json), &[]);
    assert_refused(&tmp, &out, words);
}

/// A model made by `make` and a good input run through `trace`; refused naming `words`.
fn refused_model(test: &str, make: impl FnOnce(&TempDir) -> PathBuf, words: &[&str]) {
    let tmp = TempDir::new(test);
    let model = make(&tmp);
    let out = trace(&tmp, &model, &input(&tmp, GOOD_INPUT), &[]);
    assert_refused(&tmp, &out, words);
}

#[test]
fn trace_of_the_gqa_and_moe_fixtures_matches_pytorch() {
    for name in ["gqa", "moe_top2"] {
        let tmp = TempDir::new(name);
        let case = fixtures().join(name);
        let out = trace(&tmp, &case, &case.join("input.json"), &[]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(tmp.files("out"), ["trace.safetensors"]);
        assert_matches_fixture(&CPU_VS_PYTORCH, name, &std::fs::read(tmp.join("out/trace.safetensors")).unwrap());
    }
}

/// `ablate_lens` as a user asks for it (the flags its run.json names), on both attention paths.
#[test]
fn trace_with_heads_knocked_out_logit_lens_and_head_logit_matches_pytorch() {
    let case = fixtures().join("ablate_lens");
    for path in ["naive", "flash"] {
        let tmp = TempDir::new(&format!("ablate_{path}"));
        let out = trace(&tmp, &case, &case.join("input.json"), &["--ablate", "0:1, 2:3", "--logit-lens", "--head-logit", "--attention", path, "--tile", "3"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_matches_fixture(&CPU_VS_PYTORCH, "ablate_lens", &std::fs::read(tmp.join("out/trace.safetensors")).unwrap());
    }
}

#[test]
fn trace_with_a_target_token_matches_pytorch() {
    let tmp = TempDir::new("target");
    let case = fixtures().join("head_logit_target");
    let out = trace(&tmp, &case, &case.join("input.json"), &["--logit-lens", "--head-logit", "--target-token", "17"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_matches_fixture(&CPU_VS_PYTORCH, "head_logit_target", &std::fs::read(tmp.join("out/trace.safetensors")).unwrap());
}

/// Bad --ablate / --target-token values: refused in one line naming the value, before any file is written.
#[test]
fn bad_heads_and_targets() {
    for (test, extra, words) in [
        ("ablate_no_colon", &["--ablate", "0-1"][..], &["--ablate", "0-1", "layer:head"][..]),
        ("ablate_not_numbers", &["--ablate", "0:1,a:2"], &["--ablate", "a:2"]),
        ("ablate_layer_out_of_range", &["--ablate", "0:1,2:0"], &["2:0", "layers 0..1"]),
        ("ablate_head_out_of_range", &["--ablate", "1:4"], &["1:4", "heads 0..3"]),
        ("target_not_a_number", &["--head-logit", "--target-token", "x"], &["--target-token", "'x'"]),
        ("target_out_of_vocab", &["--head-logit", "--target-token", "6400"], &["target token 6400", "vocabulary"]),
        ("target_without_head_logit", &["--target-token", "3"], &["--head-logit"]),
    ] {
        let tmp = TempDir::new(test);
        let model = valid_model(&tmp);
        let out = trace(&tmp, &model, &input(&tmp, GOOD_INPUT), extra);
        assert_refused(&tmp, &out, words);
    }
}

#[test]
fn missing_model_dir() {
    refused_model("no_dir", |tmp| tmp.join("nowhere"), &["nowhere", "does not exist"]);
}

#[test]
fn missing_config_json() {
    refused_model("no_config", |tmp| model_dir(tmp, None, Some(&serialize(&valid_tensors()))), &["config.json"]);
}

#[test]
fn missing_model_safetensors() {
    refused_model("no_weights", |tmp| model_dir(tmp, Some(&small_config().to_json()), None), &["model.safetensors"]);
}

#[test]
fn config_not_json() {
    refused_model("config_not_json", |tmp| model_dir(tmp, Some("{\"hidden_size\": 32,"), Some(&serialize(&valid_tensors()))), &["config.json", "json"]);
}

#[test]
fn truncated_safetensors() {
    let bytes = serialize(&valid_tensors());
    refused_model("truncated", |tmp| model_dir(tmp, Some(&small_config().to_json()), Some(&bytes[..bytes.len() / 2])), &["model.safetensors", "truncated"]);
}

#[test]
fn wrong_dtype_i32_tensor() {
    refused_model("i32", |tmp| model_with(tmp, Q_PROJ, |(_, shape, bytes)| Some((Dtype::I32, shape, bytes))), &[Q_PROJ, "I32"]);
}

#[test]
fn misshaped_tensor() {
    refused_model(
        "misshaped",
        |tmp| model_with(tmp, Q_PROJ, |(dtype, shape, bytes)| Some((dtype, vec![shape[0] / 2, shape[1]], bytes[..bytes.len() / 2].to_vec()))),
        &[Q_PROJ, "shape"],
    );
}

#[test]
fn missing_tensor() {
    refused_model("missing_tensor", |tmp| model_with(tmp, Q_PROJ, |_| None), &["missing", Q_PROJ]);
}

#[test]
fn nan_weight() {
    refused_model(
        "nan",
        |tmp| {
            model_with(tmp, Q_PROJ, |(dtype, shape, mut bytes)| {
                bytes[20..24].copy_from_slice(&f32::NAN.to_le_bytes());
                Some((dtype, shape, bytes))
            })
        },
        &[Q_PROJ, "NaN"],
    );
}

#[test]
fn ids_out_of_vocab() {
    refused_input("oov", r#"{"ids": [1, 6400], "attention_mask": null, "prefix_len": 0}"#, &["6400", "vocabulary"]);
}

#[test]
fn mask_of_the_wrong_length() {
    refused_input("mask_len", r#"{"ids": [1, 2, 3], "attention_mask": [1, 1], "prefix_len": 0}"#, &["attention_mask", "2"]);
}

#[test]
fn mask_value_2() {
    refused_input("mask_2", r#"{"ids": [1, 2, 3], "attention_mask": [1, 2, 1], "prefix_len": 0}"#, &["attention_mask", "0 and 1"]);
}

#[test]
fn prefix_len_not_below_the_number_of_ids() {
    refused_input("prefix", r#"{"ids": [1, 2, 3], "attention_mask": null, "prefix_len": 3}"#, &["prefix_len"]);
}

#[test]
fn empty_ids() {
    refused_input("empty", r#"{"ids": [], "attention_mask": null, "prefix_len": 0}"#, &["ids", "empty"]);
}

#[test]
fn heads_not_divisible_by_kv_heads() {
    let config = small_config().to_json().replace("\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3");
    refused_model("nh_nkv", |tmp| model_dir(tmp, Some(&config), Some(&serialize(&valid_tensors()))), &["divisible", "num_key_value_heads"]);
}

#[test]
fn sizes_over_the_limits() {
    let config = small_config().to_json().replace("\"hidden_size\": 32", "\"hidden_size\": 100000");
    refused_model("huge", |tmp| model_dir(tmp, Some(&config), Some(&serialize(&valid_tensors()))), &["hidden_size", "limit"]);
}

#[test]
fn input_not_json() {
    refused_input("input_not_json", "ids: [1, 2]", &["input.json"]);
}

#[test]
fn input_wrong_field_types() {
    refused_input("input_types", r#"{"ids": "1 2 3", "attention_mask": null, "prefix_len": 0}"#, &["input.json", "invalid type"]);
}

#[test]
fn input_unknown_field() {
    refused_input("input_unknown", r#"{"ids": [1, 2], "mask": [1, 1]}"#, &["input.json", "unknown field `mask`"]);
}

#[test]
fn unknown_flag() {
    let tmp = TempDir::new("flag");
    let model = valid_model(&tmp);
    let out = trace(&tmp, &model, &input(&tmp, GOOD_INPUT), &["--colour", "red"]);
    assert_refused(&tmp, &out, &["--colour"]);
}

#[test]
fn missing_out() {
    let tmp = TempDir::new("no_out");
    let model = valid_model(&tmp);
    let input = input(&tmp, GOOD_INPUT);
    let out = attnscope(&["trace", "--model", model.to_str().unwrap(), "--input", input.to_str().unwrap()]);
    assert_refused(&tmp, &out, &["--out"]);
    assert_eq!(tmp.files(""), ["input.json", "model"], "nothing written beside the inputs");
}

#[test]
fn generate_prints_the_prompt_then_new_text_and_greedy_repeats() {
    let tmp = TempDir::new("generate");
    let model = valid_model(&tmp);
    let tokenizer = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/minimind/tokenizer.json");
    let text = "Attention is all you need";
    let run = || {
        attnscope(&["generate", "--model", model.to_str().unwrap(), "--tokenizer", tokenizer.to_str().unwrap(), "--text", text, "--max-new", "8"])
    };
    let first = run();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let stdout = String::from_utf8(first.stdout.clone()).unwrap();
    let generated = stdout.strip_prefix(text).unwrap_or_else(|| panic!("output does not start with the prompt: {stdout:?}"));
    assert!(!generated.trim().is_empty(), "nothing generated: {stdout:?}");
    assert_eq!(run().stdout, first.stdout, "greedy decoding differs between two runs");
}

#[test]
fn generate_with_bos_starts_the_prompt_with_the_configs_bos_token() {
    let tmp = TempDir::new("generate_bos");
    let tokenizer = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/minimind/tokenizer.json");
    let text = "Attention is all you need";
    let run = |model: &Path| {
        attnscope(&["generate", "--model", model.to_str().unwrap(), "--tokenizer", tokenizer.to_str().unwrap(), "--text", text, "--max-new", "2", "--bos"])
    };
    let out = run(&valid_model(&tmp));
    assert_refused(&tmp, &out, &["--bos", "no bos_token_id"]);
    let mut config: serde_json::Value = serde_json::from_str(&small_config().to_json()).unwrap();
    config["bos_token_id"] = 1.into();
    let with_bos = TempDir::new("generate_bos_config");
    let model = model_dir(&with_bos, Some(&config.to_string()), Some(&serialize(&valid_tensors())));
    let out = run(&model);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with(&format!("<|im_start|>{text}")), "the prompt is printed with its BOS token first: {stdout:?}");
}

#[test]
fn generate_refuses_a_tokenizer_with_a_huge_id_in_one_line() {
    let tmp = TempDir::new("huge_id");
    let model = valid_model(&tmp);
    let real = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/minimind/tokenizer.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&real).unwrap();
    json["model"]["vocab"]["a"] = 4_294_967_295u64.into();
    let tokenizer = tmp.join("tokenizer.json");
    std::fs::write(&tokenizer, json.to_string()).unwrap();
    let out = attnscope(&["generate", "--model", model.to_str().unwrap(), "--tokenizer", tokenizer.to_str().unwrap(), "--text", "hi"]);
    let vocab = small_config().vocab_size.to_string();
    assert_refused(&tmp, &out, &["one of them with id 4294967295", &format!("vocabulary has only {vocab} ids")]);
}

#[test]
fn a_mixture_of_experts_config_with_dense_weights_names_the_missing_router() {
    let tmp = TempDir::new("moe");
    let mut config: serde_json::Value = serde_json::from_str(&small_config().to_json()).unwrap();
    config["use_moe"] = true.into();
    let model = model_dir(&tmp, Some(&config.to_string()), Some(&serialize(&valid_tensors())));
    let out = trace(&tmp, &model, &input(&tmp, GOOD_INPUT), &[]);
    assert_refused(&tmp, &out, &["missing tensor model.layers.0.mlp.gate.weight"]);
}

#[test]
fn trace_of_a_gguf_file_matches_transformers() {
    let tmp = TempDir::new("gguf_trace");
    let case = fixtures().join("gguf/llama_q4_1");
    let out = trace(&tmp, &case.join("model.gguf"), &case.join("input.json"), &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ours = SafeTensors::deserialize(&std::fs::read(tmp.join("out/trace.safetensors")).unwrap()).unwrap().names().len();
    assert!(ours > 40, "a whole trace: {ours} tensors");
}

#[test]
fn generate_reads_the_tokenizer_from_a_gguf_file() {
    let model = fixtures().join("gguf/qwen2_f32/model.gguf");
    let out = attnscope(&["generate", "--model", model.to_str().unwrap(), "--text", "ab", "--max-new", "3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ab"));
}

#[test]
fn a_damaged_gguf_file_is_refused_in_one_line() {
    let tmp = TempDir::new("gguf_cut");
    let bytes = std::fs::read(fixtures().join("gguf/llama_q8_0/model.gguf")).unwrap();
    let cut = tmp.join("cut.gguf");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = trace(&tmp, &cut, &input(&tmp, GOOD_INPUT), &[]);
    assert_refused(&tmp, &out, &["cut.gguf", "truncated"]);
}

#[test]
fn patch_writes_the_four_tensors_and_matches_pytorch() {
    let tmp = TempDir::new("patch");
    let case = fixtures().join("patch_gqa");
    let input: serde_json::Value = serde_json::from_slice(&std::fs::read(case.join("input.json")).unwrap()).unwrap();
    let write = |name: &str, ids: &serde_json::Value| {
        let path = tmp.join(name);
        std::fs::write(&path, serde_json::json!({"ids": ids, "attention_mask": null, "prefix_len": 0}).to_string()).unwrap();
        path
    };
    let (clean, corrupt) = (write("clean.json", &input["clean"]), write("corrupt.json", &input["corrupt"]));
    let out = tmp.join("patch.safetensors");
    let model = fixtures().join("gqa");
    let (target, against) = (input["target"].to_string(), input["against"].to_string());
    let run = |corrupt: &Path| {
        attnscope(&["patch", "--model", model.to_str().unwrap(), "--clean", clean.to_str().unwrap(), "--corrupt", corrupt.to_str().unwrap(), "--target-token", &target, "--against-token", &against, "--out", out.to_str().unwrap()])
    };
    let done = run(&corrupt);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let ours = std::fs::read(&out).unwrap();
    let ours = SafeTensors::deserialize(&ours).unwrap();
    let reference = std::fs::read(case.join("trace.safetensors")).unwrap();
    let reference = SafeTensors::deserialize(&reference).unwrap();
    for name in ["patch.clean_metric", "patch.corrupt_metric", "patch.resid_out", "patch.head_context"] {
        let floats = |t: TensorView| t.data().chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect::<Vec<f32>>();
        let (a, b) = (floats(ours.tensor(name).unwrap()), floats(reference.tensor(name).unwrap()));
        assert_close(&PATCH_VS_PYTORCH, name, reference.tensor(name).unwrap().shape(), &a, &b);
    }
    // Inputs of different lengths: one line naming both lengths.
    let short = write("short.json", &serde_json::json!([1, 2, 3]));
    std::fs::remove_file(&out).unwrap();
    let refused = run(&short);
    assert_refused(&tmp, &refused, &["same length", "9 tokens", "3"]);
    assert!(!out.exists());
}

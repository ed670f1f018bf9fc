//! Every case in tests/fixtures (made by tools/reference/make_fixtures.py with PyTorch) against our trace,
//! tensor by tensor, at the contract's tolerance: max |ours - ref| / max |ref| <= 2e-4 over finite entries,
//! the same -inf pattern in masked_scores, and padding entries (-1e9) where PyTorch has them.
//! Both attention paths are checked: the explicit one and the flash one with a tile that divides nothing.
//! The comparison itself is in tests/common, shared with the command-line test (tests/cli.rs).

mod common;

use attnscope::model::{AttentionPath, Model, RunOptions};
use attnscope::trace::{Selection, Trace};
use attnscope::weights::load_dir;
use common::{assert_matches_fixture, fixtures};
use serde::Deserialize;

#[derive(Deserialize)]
struct Input {
    ids: Vec<u32>,
    attention_mask: Option<Vec<u8>>,
    prefix_len: usize,
}

fn run_case(case: &str, path: AttentionPath) -> Trace {
    let dir = fixtures().join(case);
    let (config, weights) = load_dir(&dir).unwrap_or_else(|e| panic!("{case}: {e}"));
    let input: Input = serde_json::from_str(&std::fs::read_to_string(dir.join("input.json")).unwrap()).unwrap();
    let model = Model::new(config, weights);
    let opts = RunOptions { causal: true, path, probe: None };
    model.trace(&input.ids, input.attention_mask.as_deref(), input.prefix_len, &opts, Selection::all()).unwrap().trace
}

fn check(case: &str) {
    assert_matches_fixture(case, &run_case(case, AttentionPath::Naive).to_safetensors());
    assert_matches_fixture(case, &run_case(case, AttentionPath::Flash { tile: 3 }).to_safetensors());
}

#[test]
fn gqa() {
    check("gqa");
}

#[test]
fn mha() {
    check("mha");
}

#[test]
fn mqa() {
    check("mqa");
}

#[test]
fn head_dim_not_hidden_over_heads() {
    check("head_dim_explicit");
}

#[test]
fn left_padding() {
    check("left_padding");
}

#[test]
fn inner_padding() {
    check("inner_padding");
}

#[test]
fn kv_cache_prefill_then_one_token_decode() {
    check("kv_cache");
}

#[test]
fn kv_cache_prefill_then_a_chunk() {
    check("kv_cache_prefill_chunk");
}

#[test]
fn yarn_on() {
    check("yarn");
}

#[test]
fn another_rope_theta() {
    check("theta_10k");
}

#[test]
fn untied_lm_head() {
    check("untied");
}

#[test]
fn odd_length_that_divides_no_tile() {
    check("odd_length");
}

#[test]
fn bf16_checkpoint() {
    check("bf16");
}

#[test]
fn f16_checkpoint() {
    check("f16");
}

#[test]
fn trace_is_in_computation_order() {
    let t = run_case("gqa", AttentionPath::Naive);
    let names = t.names();
    let pos = |n: &str| names.iter().position(|x| *x == n).unwrap_or_else(|| panic!("{n} missing"));
    assert_eq!(pos("embed"), 0);
    assert!(pos("layers.0.attn.q") < pos("layers.0.attn.q_norm"));
    assert!(pos("layers.0.attn.q_norm") < pos("layers.0.attn.q_rope"));
    assert!(pos("layers.0.attn.probs") < pos("layers.0.attn.context"));
    assert!(pos("layers.0.out") < pos("layers.1.input_norm"));
    assert_eq!(pos("logits"), names.len() - 1);
    assert!(t.entries.iter().all(|e| !e.desc.is_empty()), "every entry has a description");
}

/// tests/fixtures/checkpoints (tools/reference/make_checkpoints.py): the checkpoints the page loads as a
/// reader's own, read the way the page reads them, against PyTorch's layer-0 probs and last logits.
mod checkpoints {
    use super::*;
    use attnscope::weights::load_checkpoint;

    #[derive(Deserialize)]
    struct Expected {
        ids: Vec<u32>,
        probs: Vec<f32>,
        logits_last: Vec<f32>,
    }

    fn check(case: &str, qk_norm: bool) {
        let dir = fixtures().join("checkpoints").join(case);
        let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
        let config_json = String::from_utf8(read("config.json")).unwrap();
        let (config, weights) = load_checkpoint(&config_json, &read("model.safetensors")).unwrap();
        assert_eq!(config.qk_norm, qk_norm, "{case}: qk_norm");
        let expected: Expected = serde_json::from_slice(&read("expected.json")).unwrap();
        let vocab = config.vocab_size;
        let out = Model::new(config, weights).trace(&expected.ids, None, 0, &RunOptions::default(), Selection::all()).unwrap();
        let probs = &out.trace.get("layers.0.attn.probs").unwrap().data;
        let rel = common::rel_diff(&format!("{case}: probs"), probs, &expected.probs);
        assert!(rel <= common::TOLERANCE, "{case}: probs differ by {rel:.2e}");
        let logits = &out.trace.get("logits").unwrap().data;
        let rel = common::rel_diff(&format!("{case}: logits"), &logits[logits.len() - vocab..], &expected.logits_last);
        assert!(rel <= common::TOLERANCE, "{case}: logits differ by {rel:.2e}");
    }

    #[test]
    fn minimind3_layout_in_bf16() {
        check("minimind3_bf16", true);
    }

    #[test]
    fn llama_layout_in_f16_without_qk_norm() {
        check("llama_f16", false);
    }
}

#[test]
fn linear_matches_triple_loop() {
    common::linear_matches_triple_loop();
}

/// Attention tensors recorded for chosen heads, out of order, on both paths: exactly those heads'
/// slices of the full trace, in the order asked for, tagged with it.
#[test]
fn chosen_heads_are_the_full_traces_slices() {
    let dir = fixtures().join("gqa");
    let (config, weights) = load_dir(&dir).unwrap();
    let input: Input = serde_json::from_str(&std::fs::read_to_string(dir.join("input.json")).unwrap()).unwrap();
    let model = Model::new(config, weights);
    for path in [AttentionPath::Naive, AttentionPath::Flash { tile: 3 }] {
        let opts = RunOptions { causal: true, path, probe: None };
        let run = |selection| model.trace(&input.ids, None, 0, &opts, selection).unwrap().trace;
        let full = run(Selection::all());
        let chosen = run(Selection { off: false, layers: None, heads: Some(vec![5, 0, 2]) });
        for name in ["layers.1.attn.scores", "layers.1.attn.masked_scores", "layers.0.attn.probs"] {
            let (f, c) = (full.get(name).unwrap(), chosen.get(name).unwrap());
            let per_head = f.shape[1] * f.shape[2];
            assert_eq!(c.shape, [3, f.shape[1], f.shape[2]], "{name}");
            assert_eq!(c.heads.as_deref(), Some(&[5, 0, 2][..]), "{name}");
            for (i, h) in [5, 0, 2].into_iter().enumerate() {
                assert_eq!(c.data[i * per_head..][..per_head], f.data[h * per_head..][..per_head], "{name} head {h} on {path:?}");
            }
        }
    }
}

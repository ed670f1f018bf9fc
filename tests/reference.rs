//! Every case in tests/fixtures (made by tools/reference/make_fixtures.py with PyTorch) against our trace,
//! tensor by tensor, at the contract's tolerance: max |ours - ref| / max |ref| <= 2e-4 over finite entries,
//! the same -inf pattern in masked_scores, and padding entries (-1e9) where PyTorch has them.
//! Both attention paths are checked: the explicit one and the flash one with a tile that divides nothing.

use std::path::{Path, PathBuf};

use attnscope::model::{AttentionPath, Model, RunOptions};
use attnscope::trace::{Selection, Trace};
use attnscope::weights::load_dir;
use safetensors::SafeTensors;
use serde::Deserialize;

const TOLERANCE: f32 = 2e-4;

#[derive(Deserialize)]
struct Input {
    ids: Vec<u32>,
    attention_mask: Option<Vec<u8>>,
    prefix_len: usize,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn run_case(case: &str, path: AttentionPath) -> Trace {
    let dir = fixtures().join(case);
    let (config, weights) = load_dir(&dir).unwrap_or_else(|e| panic!("{case}: {e}"));
    let input: Input = serde_json::from_str(&std::fs::read_to_string(dir.join("input.json")).unwrap()).unwrap();
    let model = Model::new(config, weights);
    let opts = RunOptions { causal: true, path, probe: None };
    model.trace(&input.ids, input.attention_mask.as_deref(), input.prefix_len, &opts, Selection::all()).unwrap().trace
}

fn compare(case: &str, ours: &Trace) {
    let bytes = std::fs::read(fixtures().join(case).join("trace.safetensors")).unwrap();
    let reference = SafeTensors::deserialize(&bytes).unwrap();
    let mut names: Vec<String> = reference.names().into_iter().map(|n| n.to_string()).collect();
    names.sort();
    assert!(names.len() >= 40, "{case}: reference has only {} tensors", names.len());
    for name in names {
        let r = reference.tensor(&name).unwrap();
        let e = ours.get(&name).unwrap_or_else(|| panic!("{case}: we do not record {name}"));
        assert_eq!(e.shape, r.shape(), "{case}: shape of {name}");
        let rv: Vec<f32> = r.data().chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
        let mut scale = 0.0f32;
        let mut worst = 0.0f32;
        for (i, (&a, &b)) in e.data.iter().zip(&rv).enumerate() {
            assert!(!a.is_nan(), "{case}: NaN in {name} at {i}");
            if b == f32::NEG_INFINITY || a == f32::NEG_INFINITY {
                assert_eq!(a, b, "{case}: -inf pattern of {name} differs at {i}");
            } else if b <= -1e8 {
                assert!((a - b).abs() <= 1e-6 * b.abs(), "{case}: padding entry of {name} at {i}: {a} vs {b}");
            } else {
                scale = scale.max(b.abs());
                worst = worst.max((a - b).abs());
            }
        }
        let rel = worst / scale.max(1e-30);
        assert!(rel <= TOLERANCE, "{case}: {name} differs by {rel:.2e} relative (max |diff| {worst:.2e})");
    }
}

fn check(case: &str) {
    compare(case, &run_case(case, AttentionPath::Naive));
    compare(case, &run_case(case, AttentionPath::Flash { tile: 3 }));
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

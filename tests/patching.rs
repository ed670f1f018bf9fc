//! Activation patching (src/analysis/patching.rs): against PyTorch (tools/reference/make_patch_fixtures.py,
//! tests/fixtures/patch_*), the checks that hold whatever the reference says, the refusals, and
//! SmolLM2's name-swap pair where build.sh fetched it.

mod common;

use attnscope::analysis::patching::{patch, patch_heads};
use attnscope::model::Model;
use attnscope::weights::load_dir;
use attnscope::Error;
use common::{assert_close, fixtures, PATCH_VS_PYTORCH};
use safetensors::SafeTensors;
use serde::Deserialize;

#[derive(Deserialize)]
struct Input {
    model: String,
    clean: Vec<u32>,
    corrupt: Vec<u32>,
    target: u32,
    against: u32,
}

fn case(name: &str) -> (Model, Input, Vec<u8>) {
    let dir = fixtures().join(name);
    let input: Input = serde_json::from_slice(&std::fs::read(dir.join("input.json")).unwrap()).unwrap();
    let (config, weights) = load_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(&input.model)).unwrap();
    (Model::new(config, weights), input, std::fs::read(dir.join("trace.safetensors")).unwrap())
}

fn matches_pytorch(name: &str) {
    let (model, input, reference) = case(name);
    let ours = patch(&model, &input.clean, &input.corrupt, input.target, input.against, |_, _| {}).unwrap();
    let reference = SafeTensors::deserialize(&reference).unwrap();
    let floats = |n: &str| -> Vec<f32> { reference.tensor(n).unwrap().data().chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect() };
    let (l, t, h) = (model.config.num_hidden_layers, input.clean.len(), model.config.num_attention_heads);
    assert_eq!(reference.tensor("patch.resid_out").unwrap().shape(), [l, t]);
    assert_eq!(reference.tensor("patch.head_context").unwrap().shape(), [l, h]);
    // Every entry of each tensor within the contract's tolerance for patching; the two metrics as one
    // tensor, so each is held to the larger of them as it was before entries were checked one by one.
    let metrics = [ours.clean_metric, ours.corrupt_metric];
    let reference_metrics = [floats("patch.clean_metric")[0], floats("patch.corrupt_metric")[0]];
    for (what, shape, ours, theirs) in [
        ("metrics", [1, 2], metrics.to_vec(), reference_metrics.to_vec()),
        ("patch.resid_out", [l, t], ours.resid_out.clone(), floats("patch.resid_out")),
        ("patch.head_context", [l, h], ours.head_context.clone(), floats("patch.head_context")),
    ] {
        assert_close(&PATCH_VS_PYTORCH, &format!("{name}: {what}"), &shape, &ours, &theirs);
    }
}

#[test]
fn a_small_gqa_model_matches_pytorch() {
    matches_pytorch("patch_gqa");
}

#[test]
fn the_builtin_model_matches_pytorch() {
    matches_pytorch("patch_builtin");
}

#[test]
fn what_holds_whatever_the_reference_says() {
    let (model, input, _) = case("patch_gqa");
    let (clean, corrupt, target, against) = (&input.clean, &input.corrupt, input.target, input.against);
    let p = patch(&model, clean, corrupt, target, against, |_, _| {}).unwrap();
    let (l, t, h) = (p.layers, p.positions, p.heads);
    assert_ne!(p.clean_metric, p.corrupt_metric);
    // The last layer's output at the last position is all the metric reads: the clean metric, exactly;
    // at any other position it changes nothing.
    assert_eq!(p.resid_out[(l - 1) * t + t - 1], p.clean_metric);
    for pos in 0..t - 1 {
        assert_eq!(p.resid_out[(l - 1) * t + pos], p.corrupt_metric, "position {pos}");
    }
    // Patching in the corrupted run's own activations changes nothing.
    let same = patch(&model, corrupt, corrupt, target, against, |_, _| {}).unwrap();
    assert!(same.resid_out.iter().chain(&same.head_context).all(|&m| m == same.corrupt_metric));
    // Every head of a layer at once is the layer's whole context: then everything after that layer's
    // attention is the clean run's but for the residual it adds to, so it differs from a single head's.
    for layer in 0..l {
        let all = patch_heads(&model, clean, corrupt, target, against, layer, (0..h).collect()).unwrap();
        let one_by_one = patch_heads(&model, clean, corrupt, target, against, layer, vec![0]).unwrap();
        assert_eq!(one_by_one, p.head_context[layer * h], "layer {layer}: patch_heads and patch agree on head 0");
        assert!(all.is_finite());
    }
    // Progress counts every partial run once, to the end.
    let mut seen = Vec::new();
    patch(&model, clean, corrupt, target, against, |done, total| seen.push((done, total))).unwrap();
    assert_eq!(seen.len(), l * (t + h));
    assert_eq!(seen.last(), Some(&(l * (t + h), l * (t + h))));
}

fn refusal(r: Result<attnscope::analysis::patching::Patching, Error>) -> String {
    match r {
        Err(Error::Refused(s)) | Err(Error::Budget(s)) => s.key.to_string(),
        Err(e) => format!("unnamed: {e}"),
        Ok(_) => "accepted".into(),
    }
}

#[test]
fn bad_input_is_refused_by_name() {
    let (model, input, _) = case("patch_gqa");
    let (clean, target, against) = (&input.clean, input.target, input.against);
    assert_eq!(refusal(patch(&model, clean, &clean[1..], target, against, |_, _| {})), "patch.lengths");
    assert_eq!(refusal(patch(&model, clean, clean, 1 << 20, against, |_, _| {})), "patch.token");
    assert_eq!(refusal(patch(&model, clean, clean, target, u32::MAX, |_, _| {})), "patch.token");
    assert!(matches!(patch(&model, &[], &[], target, against, |_, _| {}), Err(Error::Input(_))));
    // Its work grows as T²: a long text is refused before anything runs (the runs' own memory is the
    // forward's to refuse, which runs each input first).
    let long: Vec<u32> = (0..200).map(|i| clean[i % clean.len()]).collect();
    assert_eq!(refusal(patch(&model, &long, &long, target, against, |_, _| {})), "patch.tooLong");
}

#[test]
fn smollm2_names_where_the_indirect_object_sits() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("www/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
    let Ok(bytes) = std::fs::read(&path) else {
        assert!(std::env::var_os("ATTNSCOPE_REQUIRE_SMOLLM2").is_none(), "{} is missing", path.display());
        eprintln!("SKIPPED: {} is missing (./build.sh build fetches it)", path.display());
        return;
    };
    let loaded = attnscope::gguf::load(&bytes).unwrap();
    let tokenizer = attnscope::tokenizer::Tokenizer::for_model(&loaded.tokenizer_json, loaded.config.vocab_size).unwrap();
    let model = Model::new(loaded.config, loaded.weights);
    let ids = |text: &str| tokenizer.encode(text).unwrap().ids;
    let clean = ids("When Mary and John went to the store, John gave a drink to");
    let corrupt = ids("When Mary and John went to the store, Mary gave a drink to");
    let (mary, john) = (ids(" Mary")[0], ids(" John")[0]);
    let p = patch(&model, &clean, &corrupt, mary, john, |_, _| {}).unwrap();
    assert!(p.clean_metric > 2.0 && p.corrupt_metric < 0.0, "{} / {}", p.clean_metric, p.corrupt_metric);
    let share = |m: f32| (m - p.corrupt_metric) / (p.clean_metric - p.corrupt_metric);
    let t = p.positions;
    let changed = clean.iter().zip(&corrupt).position(|(a, b)| a != b).unwrap();
    // Early on the answer sits at the swapped name; at the end, at the last position.
    assert!(share(p.resid_out[changed]) > 0.9, "layer 0 at the swapped name: {}", share(p.resid_out[changed]));
    assert_eq!(share(p.resid_out[(p.layers - 1) * t + t - 1]), 1.0);
    let (best, value) = p.head_context.iter().enumerate().fold((0, f32::MIN), |b, (i, &v)| if v > b.1 { (i, v) } else { b });
    eprintln!("strongest head: L{}H{} restores {:.2}", best / p.heads, best % p.heads, share(value));
    assert!(share(value) > 0.2);
}

//! The built-in model (www/models/builtin, trained by tools/train/): the command's trace equals the
//! PyTorch reference (tests/fixtures/builtin), and the heads its README names are what it says they are,
//! measured here again on the page's own sample sentences by the core's measure (analysis::head_roles),
//! the one the page shows; and the induction probe (analysis::induction) scores its heads.

mod common;

use std::path::Path;
use std::process::Command;

use attnscope::analysis::head_roles::{measure, HeadScores, Role};
use attnscope::analysis::induction::{self, ProbeHead, ProbeRequest};
use attnscope::model::attention::MaskSpec;
use attnscope::model::{Model, RunOptions};
use attnscope::tokenizer::Tokenizer;
use attnscope::trace::Selection;
use attnscope::weights::load_dir;
use serde::Deserialize;

fn builtin() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("www/models/builtin")
}

#[test]
fn trace_command_matches_pytorch() {
    let out = std::env::temp_dir().join(format!("attnscope-builtin-{}.safetensors", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_attnscope"))
        .args(["trace", "--model"])
        .arg(builtin())
        .arg("--input")
        .arg(common::fixtures().join("builtin/input.json"))
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let bytes = std::fs::read(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    common::assert_matches_fixture(&common::CPU_VS_PYTORCH, "builtin", &bytes);
}

/// One entry of samples.json: a sentence and the head that shows `pattern` on it.
#[derive(Deserialize)]
struct Sample {
    text: String,
    pattern: String,
    layer: usize,
    head: usize,
}

#[derive(Deserialize)]
struct Samples {
    en: Vec<Sample>,
    zh: Vec<Sample>,
}

#[derive(Deserialize)]
struct HeadStats {
    layers: Vec<Vec<HeadStat>>,
}

#[derive(Deserialize)]
struct HeadStat {
    head: usize,
    label: String,
}

/// The probs [nH, T, T] of `layer` and the ids of one sentence run as the page runs it: BOS first.
fn run_probs(model: &Model, tokenizer: &Tokenizer, text: &str, layer: usize) -> (Vec<u32>, ndarray::Array3<f32>) {
    let bos = model.config.bos_token_id.expect("the built-in model names its BOS token");
    let ids = tokenizer.encode_with_bos(text, bos).unwrap().ids;
    let out = model.trace(&ids, None, 0, &RunOptions::default(), Selection::all()).unwrap();
    let e = out.trace.get(&format!("layers.{layer}.attn.probs")).unwrap();
    let probs = ndarray::Array3::from_shape_vec((e.shape[0], e.shape[1], e.shape[2]), e.data.to_vec()).unwrap();
    (ids, probs)
}

/// Every sample shows the pattern it names, on the head it names, by the core's own measures (what
/// the page's head grid and induction probe show), at least as clearly as head_stats.py required
/// (0.3), and that head's role on the sentence is the pattern's.
#[test]
fn every_sample_shows_its_named_pattern_on_its_head() {
    let (config, weights) = load_dir(&builtin()).unwrap();
    let model = Model::new(config, weights);
    let tokenizer = Tokenizer::from_json(&std::fs::read_to_string(builtin().join("tokenizer.json")).unwrap()).unwrap();
    let samples: Samples = serde_json::from_str(&std::fs::read_to_string(builtin().join("samples.json")).unwrap()).unwrap();
    let causal = MaskSpec { causal: true, prefix_len: 0, padding: None };
    assert!(!samples.en.is_empty() && !samples.zh.is_empty(), "samples in both languages");
    for s in samples.en.iter().chain(&samples.zh) {
        let (ids, probs) = run_probs(&model, &tokenizer, &s.text, s.layer);
        assert_eq!(ids[0], 1, "BOS first");
        let scores = measure(probs.view(), &causal)[s.head].expect("long enough to measure");
        let (score, role) = match s.pattern.as_str() {
            "previous-token" => (scores.previous, Some(Role::Previous)),
            "first-token" => (scores.first, Some(Role::First)),
            "current-token" => (scores.current, Some(Role::Current)),
            "induction" | "duplicate-token" => {
                let rep = induction::measure(probs.view(), &ids)[s.head].expect("the sentence is written twice");
                (if s.pattern == "induction" { rep.induction } else { rep.duplicate }, None)
            }
            other => panic!("unknown pattern {other}"),
        };
        println!("L{}H{} {} {score:.3} on {}", s.layer, s.head, s.pattern, s.text);
        assert!(score >= 0.3, "L{}H{}: {} score {score:.3} on {:?}", s.layer, s.head, s.pattern, s.text);
        if let Some(role) = role {
            assert_eq!(scores.role().role, role, "L{}H{} on {:?}", s.layer, s.head, s.text);
        }
    }
}

/// The heads head_stats.json labels (on held-out text) keep their label's pattern on the sample
/// sentences, pooled over both languages as head_stats.py pools its windows: the labelled score is
/// well above what even weight gives, and for a clear (not weak) label the head's largest.
#[test]
fn labelled_heads_show_their_label_on_the_sample_sentences() {
    let (config, weights) = load_dir(&builtin()).unwrap();
    let model = Model::new(config, weights);
    let tokenizer = Tokenizer::from_json(&std::fs::read_to_string(builtin().join("tokenizer.json")).unwrap()).unwrap();
    let samples: Samples = serde_json::from_str(&std::fs::read_to_string(builtin().join("samples.json")).unwrap()).unwrap();
    let stats: HeadStats = serde_json::from_str(&std::fs::read_to_string(builtin().join("head_stats.json")).unwrap()).unwrap();
    let causal = MaskSpec { causal: true, prefix_len: 0, padding: None };
    let texts: Vec<&str> = samples.en.iter().chain(&samples.zh).map(|s| s.text.as_str()).collect();
    let mut named = 0;
    for (l, layer) in stats.layers.iter().enumerate() {
        let per_text: Vec<Vec<HeadScores>> = texts
            .iter()
            .map(|t| measure(run_probs(&model, &tokenizer, t, l).1.view(), &causal).into_iter().map(Option::unwrap).collect())
            .collect();
        for s in layer {
            let pooled = HeadScores::pooled(&per_text.iter().map(|h| h[s.head]).collect::<Vec<_>>()).unwrap();
            let (score, role) = match s.label.split(" (").next().unwrap() {
                "previous-token" => (pooled.previous, Role::Previous),
                "sink" => (pooled.first, Role::First),
                "self" => (pooled.current, Role::Current),
                _ => continue,
            };
            println!("L{l}H{}: {} {score:.3} ({:?})", s.head, s.label, pooled.role().role);
            let uniform = 0.1; // about what a head spreading evenly over these sentences would give
            assert!(score > 2.0 * uniform, "L{l}H{} ({}): score {score:.3} on the samples", s.head, s.label);
            // A weak label (largest score 0.3-0.5 on long held-out windows) may lose to the first
            // token on these short sentences, where BOS takes a larger share; a clear one may not.
            if !s.label.contains("weak") {
                assert_eq!(pooled.role().role, role, "L{l}H{} ({})", s.head, s.label);
            }
            named += 1;
        }
    }
    assert!(named >= 4, "the stats name only {named} heads");
}

/// The induction probe (analysis::induction, what the page's head grid shows) on the built-in
/// model, every head's scores recomputed here from the raw probs of the probe's sequence.
#[test]
fn induction_probe_scores_every_head_and_agrees_with_its_probs() {
    let (config, weights) = load_dir(&builtin()).unwrap();
    let model = Model::new(config, weights);
    let tokenizer = Tokenizer::from_json(&std::fs::read_to_string(builtin().join("tokenizer.json")).unwrap()).unwrap();
    let ordinary = tokenizer.ordinary_ids();
    let req = ProbeRequest { length: 32, seed: 1, first: None };
    let probe = induction::probe(&model, Some(&ordinary), &req).unwrap();
    let n = req.length;
    assert_eq!(probe.ids.len(), 2 * n);
    assert_eq!(probe.ids[..n], probe.ids[n..]);
    assert!(probe.ids.iter().all(|id| ordinary.contains(id)), "only ordinary tokens");

    let heads: Vec<(usize, &ProbeHead)> = probe.layers.iter().flat_map(|l| l.heads.iter().map(move |h| (l.layer, h))).collect();
    assert_eq!(heads.len(), model.config.num_hidden_layers * model.config.num_attention_heads);
    for (l, h) in &heads {
        println!("L{l}H{}: induction {:.3} duplicate {:.3} {:?}", h.head, h.scores.induction, h.scores.duplicate, h.positions.map(|p| (p.role, p.score)));
    }
    let (l, best) = heads.iter().max_by(|a, b| a.1.scores.induction.total_cmp(&b.1.scores.induction)).unwrap();
    let (dl, dup) = heads.iter().max_by(|a, b| a.1.scores.duplicate.total_cmp(&b.1.scores.duplicate)).unwrap();
    println!("best induction head L{l}H{} {:.3}; best duplicate-token head L{dl}H{} {:.3}", best.head, best.scores.induction, dup.head, dup.scores.duplicate);

    // Independently, for every head: the same sequence through the model, and the weight from each
    // query of the second copy (position n + k) on the token after its first occurrence (k + 1) and
    // on that occurrence (k), averaged over k.
    let out = model.trace(&probe.ids, None, 0, &RunOptions::default(), Selection::all()).unwrap();
    let t = 2 * n;
    for (l, h) in &heads {
        let e = out.trace.get(&format!("layers.{l}.attn.probs")).unwrap();
        let at = |q: usize, k: usize| e.data[h.head * t * t + q * t + k];
        let induction = (0..n).map(|k| at(n + k, k + 1)).sum::<f32>() / n as f32;
        let duplicate = (0..n).map(|k| at(n + k, k)).sum::<f32>() / n as f32;
        assert!((induction - h.scores.induction).abs() < 1e-6, "L{l}H{}: {induction} vs {:?}", h.head, h.scores);
        assert!((duplicate - h.scores.duplicate).abs() < 1e-6, "L{l}H{}: {duplicate} vs {:?}", h.head, h.scores);
        assert_eq!(h.scores.rows, n);
        let top = induction.max(duplicate);
        assert_eq!(h.role.is_some(), top >= 0.3, "L{l}H{}", h.head);
        assert!(h.positions.is_some(), "the probe is long enough for the position roles too");
    }
    // The best scores are printed, not held to a threshold: the heads change when the model is
    // trained again (issue 14). Beside them, what even weight gives: 1 / (q + 1) averaged over the
    // second copy.
    let uniform = (n..t).map(|q| 1.0 / (q as f32 + 1.0)).sum::<f32>() / n as f32;
    println!("even weight would score {uniform:.3}");
}

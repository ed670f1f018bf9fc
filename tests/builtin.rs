//! The built-in model (www/models/builtin, trained by tools/train/): the command's trace equals the
//! PyTorch reference (tests/fixtures/builtin), and the heads its README names are what it says they are,
//! measured here again on the page's own sample sentences by the core's measure (analysis::head_roles),
//! the one the page shows.

mod common;

use std::path::Path;
use std::process::Command;

use attnscope::analysis::head_roles::{measure, HeadScores, Role};
use attnscope::model::attention::MaskSpec;
use attnscope::model::{Model, RunOptions};
use attnscope::tokenizer::Tokenizer;
use attnscope::trace::Selection;
use attnscope::weights::load_dir;
use ndarray::ArrayView3;
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
    common::assert_matches_fixture("builtin", &bytes);
}

#[derive(Deserialize)]
struct Samples {
    en: Vec<String>,
    zh: Vec<String>,
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

/// The core's head measures (analysis::head_roles, what the page shows) per (layer, head), pooled
/// over the texts by query rows as tools/train/head_stats.py pools its windows.
fn scores(model: &Model, tokenizer: &Tokenizer, texts: &[String]) -> Vec<Vec<HeadScores>> {
    let cfg = &model.config;
    let causal = MaskSpec { causal: true, prefix_len: 0, padding: None };
    let mut per_text = vec![vec![Vec::new(); cfg.num_attention_heads]; cfg.num_hidden_layers];
    for text in texts {
        let ids = tokenizer.encode(text).unwrap().ids;
        let out = model.trace(&ids, None, 0, &RunOptions::default(), Selection::all()).unwrap();
        for (l, layer) in per_text.iter_mut().enumerate() {
            let e = out.trace.get(&format!("layers.{l}.attn.probs")).unwrap();
            let probs = ArrayView3::from_shape((e.shape[0], e.shape[1], e.shape[2]), &e.data[..]).unwrap(); // (nH, T, T)
            for (h, s) in measure(probs, &causal).into_iter().enumerate() {
                layer[h].push(s.expect("every sample sentence is long enough to measure"));
            }
        }
    }
    per_text.iter().map(|l| l.iter().map(|h| HeadScores::pooled(h).unwrap()).collect()).collect()
}

#[test]
fn named_heads_show_their_pattern_on_the_sample_sentences() {
    let (config, weights) = load_dir(&builtin()).unwrap();
    let model = Model::new(config, weights);
    let tokenizer = Tokenizer::from_json(&std::fs::read_to_string(builtin().join("tokenizer.json")).unwrap()).unwrap();
    let samples: Samples = serde_json::from_str(&std::fs::read_to_string(builtin().join("samples.json")).unwrap()).unwrap();
    let stats: HeadStats = serde_json::from_str(&std::fs::read_to_string(builtin().join("head_stats.json")).unwrap()).unwrap();
    let zh = scores(&model, &tokenizer, &samples.zh);
    let all = scores(&model, &tokenizer, &[samples.en, samples.zh].concat());
    let uniform = 0.1; // about what a head spreading evenly over these sentences would give
    let mut named = 0;
    for (l, layer) in stats.layers.iter().enumerate() {
        for s in layer {
            let (own, prev) = (all[l][s.head].current, all[l][s.head].previous);
            match s.label.as_str() {
                "self" => {
                    assert!(own > 0.6, "L{l}H{}: self score {own:.2}", s.head);
                    assert_eq!(all[l][s.head].role().role, Role::Current, "L{l}H{}", s.head);
                }
                "previous-token" | "previous-token (weak)" => {
                    let prev_zh = zh[l][s.head].previous;
                    assert!(prev > 2.0 * uniform && prev > own, "L{l}H{}: previous-token score {prev:.2} (self {own:.2})", s.head);
                    assert!(prev_zh > 0.3, "L{l}H{}: previous-token score on Chinese {prev_zh:.2}", s.head);
                    assert_eq!(zh[l][s.head].role().role, Role::Previous, "L{l}H{} on Chinese", s.head);
                }
                _ => continue,
            }
            named += 1;
        }
    }
    assert!(named >= 4, "the stats name only {named} heads");
}

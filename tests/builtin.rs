//! The built-in model (www/models/builtin, trained by tools/train/): the command's trace equals the
//! PyTorch reference (tests/fixtures/builtin), and the heads its README names are what it says they are,
//! measured here again in Rust on the page's own sample sentences.

mod common;

use std::path::Path;
use std::process::Command;

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

/// Mean attention of query rows i >= 2 on key i (self) and on key i - 1 (previous), per (layer, head).
fn scores(model: &Model, tokenizer: &Tokenizer, texts: &[String]) -> Vec<Vec<(f32, f32)>> {
    let cfg = &model.config;
    let mut sums = vec![vec![(0.0f32, 0.0f32); cfg.num_attention_heads]; cfg.num_hidden_layers];
    let mut rows = 0.0f32;
    for text in texts {
        let ids = tokenizer.encode(text).unwrap().ids;
        let t = ids.len();
        let out = model.trace(&ids, None, 0, &RunOptions::default(), Selection::all()).unwrap();
        for (l, layer) in sums.iter_mut().enumerate() {
            let probs = &out.trace.get(&format!("layers.{l}.attn.probs")).unwrap().data; // (nH, T, T)
            for (h, (own, prev)) in layer.iter_mut().enumerate() {
                for i in 2..t {
                    *own += probs[(h * t + i) * t + i];
                    *prev += probs[(h * t + i) * t + i - 1];
                }
            }
        }
        rows += (t - 2) as f32;
    }
    sums.iter().map(|l| l.iter().map(|&(s, p)| (s / rows, p / rows)).collect()).collect()
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
            let (own, prev) = all[l][s.head];
            match s.label.as_str() {
                "self" => assert!(own > 0.6, "L{l}H{}: self score {own:.2}", s.head),
                "previous-token" | "previous-token (weak)" => {
                    let prev_zh = zh[l][s.head].1;
                    assert!(prev > 2.0 * uniform && prev > own, "L{l}H{}: previous-token score {prev:.2} (self {own:.2})", s.head);
                    assert!(prev_zh > 0.3, "L{l}H{}: previous-token score on Chinese {prev_zh:.2}", s.head);
                }
                _ => continue,
            }
            named += 1;
        }
    }
    assert!(named >= 4, "the stats name only {named} heads");
}

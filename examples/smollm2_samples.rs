//! Picks SmolLM2-135M's sample sentences, as tools/train/head_stats.py picks the built-in model's: for
//! each behaviour a sample can show, the candidate sentence (written for this project) on which the
//! page's own measures find it most clearly, and the head or layer that shows it. Everything is measured
//! by the core the page runs (`analysis::head_roles`, `analysis::induction`, `analysis::circuit`), on the
//! text as the page runs it (SmolLM2 has no BOS), so the page finds live what a sample says.
//!
//!   previous-token, first-token, current-token: the head with the highest such score (head_roles)
//!   induction, duplicate-token: on a sentence written twice (analysis::induction)
//!   indirect-object: "When Mary and John went …, John gave a drink to" → Mary, and fact: "The capital
//!     of France is" → Paris: the head that pushes the answer most (direct logit attribution), on the
//!     prompt whose answer is the model's top-1 and loses most when its top three heads are knocked out
//!     (probability × the drop)
//!
//! Writes www/models/smollm2/samples.json ({"en": [{text, pattern, layer, head, target?}], "zh": []}:
//! SmolLM2 knows little Chinese), the two circuits first, and prints every candidate's score.
//!
//!   ./build.sh build && cargo run --release --example smollm2_samples

use std::path::Path;

use attnscope::analysis::{circuit, head_roles, induction};
use attnscope::model::attention::MaskSpec;
use attnscope::model::{Model, RunOptions};
use attnscope::tokenizer::Tokenizer;
use attnscope::trace::Selection;
use ndarray::ArrayView3;
use serde_json::json;

const MODEL: &str = "www/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
const OUT: &str = "www/models/smollm2/samples.json";

const SENTENCES: [&str; 5] = [
    "The old fisherman walked slowly along the quiet river at sunset.",
    "She opened the window, and the cold morning air filled the small room.",
    "Every child in the village knew the story of the lost golden bell.",
    "The train to the coast was late again, so we bought coffee and waited.",
    "My grandmother kept her letters in a wooden box under the stairs.",
];
const TWICE: [&str; 3] = [
    "Alice keeps seventeen purple umbrellas in a wooden box. Alice keeps seventeen purple umbrellas in a wooden box.",
    "The pilot from Oslo sold his blue guitar in March. The pilot from Oslo sold his blue guitar in March.",
    "Green tigers rarely swim past the northern lighthouse. Green tigers rarely swim past the northern lighthouse.",
];
/// (prompt, the name it should end on).
const IOI: [(&str, &str); 4] = [
    ("When Mary and John went to the store, John gave a drink to", " Mary"),
    ("When Tom and Anna went to the park, Anna gave a ball to", " Tom"),
    ("After Sarah and David arrived at the party, David handed a gift to", " Sarah"),
    ("When Emma and James sat down for dinner, James passed the salt to", " Emma"),
];
const FACTS: [(&str, &str); 4] = [
    ("The capital of France is", " Paris"),
    ("The Eiffel Tower is in the city of", " Paris"),
    ("The largest planet in our solar system is", " Jupiter"),
    ("Water freezes at zero degrees", " Celsius"),
];

fn main() {
    let bytes = std::fs::read(MODEL).unwrap_or_else(|e| panic!("{MODEL}: {e} (./build.sh build fetches it)"));
    let loaded = attnscope::gguf::load(&bytes).expect("SmolLM2 loads");
    let tokenizer = Tokenizer::for_model(&loaded.tokenizer_json, loaded.config.vocab_size).expect("its tokenizer");
    let model = Model::new(loaded.config, loaded.weights);
    let ids = |text: &str| tokenizer.encode(text).expect("encodes").ids;
    let mask = MaskSpec { causal: true, prefix_len: 0, padding: None };
    // Every head's probs on one text: [(layer, probs [nH, T, T])].
    let probs = |ids: &[u32]| -> Vec<(usize, Vec<f32>, [usize; 3])> {
        let trace = model.trace(ids, None, 0, &RunOptions::default(), Selection::all()).expect("runs").trace;
        (0..model.config.num_hidden_layers)
            .map(|l| {
                let e = trace.get(&format!("layers.{l}.attn.probs")).expect("probs");
                (l, e.data.clone(), [e.shape[0], e.shape[1], e.shape[2]])
            })
            .collect()
    };
    let mut samples = Vec::new();

    // Position roles: (pattern, the score that names it).
    type Score = fn(&head_roles::HeadScores) -> f32;
    let roles: [(&str, head_roles::Role, Score); 3] = [
        ("previous-token", head_roles::Role::Previous, |s| s.previous),
        ("first-token", head_roles::Role::First, |s| s.first),
        ("current-token", head_roles::Role::Current, |s| s.current),
    ];
    let measured: Vec<_> = SENTENCES.iter().map(|text| (*text, probs(&ids(text)))).collect();
    for (pattern, role, score) in roles {
        let mut best: Option<(f32, &str, usize, usize)> = None;
        for (text, layers) in &measured {
            for (l, data, [h, t, s]) in layers {
                let view = ArrayView3::from_shape((*h, *t, *s), data).expect("[nH, T, S]");
                for (head, scores) in head_roles::measure(view, &mask).into_iter().enumerate() {
                    let Some(scores) = scores else { continue };
                    if scores.role().role == role && best.is_none_or(|b| score(&scores) > b.0) {
                        best = Some((score(&scores), text, *l, head));
                    }
                }
            }
        }
        report(pattern, best.map(|b| (b.0, b.1, b.2, b.3)));
        if let Some((_, text, layer, head)) = best.filter(|b| b.0 >= 0.3) {
            samples.push(json!({"text": text, "pattern": pattern, "layer": layer, "head": head}));
        }
    }

    for pattern in ["induction", "duplicate-token"] {
        let mut best: Option<(f32, &str, usize, usize)> = None;
        for text in TWICE {
            let ids = ids(text);
            for (l, data, [h, t, s]) in probs(&ids) {
                let view = ArrayView3::from_shape((h, t, s), &data).expect("[nH, T, S]");
                for (head, scores) in induction::measure(view, &ids).into_iter().enumerate() {
                    let Some(scores) = scores else { continue };
                    let score = if pattern == "induction" { scores.induction } else { scores.duplicate };
                    let named = scores.role().is_some_and(|(r, _, _)| (r == induction::ProbeRole::Induction) == (pattern == "induction"));
                    if named && best.is_none_or(|b| score > b.0) {
                        best = Some((score, text, l, head));
                    }
                }
            }
        }
        report(pattern, best);
        if let Some((_, text, layer, head)) = best.filter(|b| b.0 >= 0.3) {
            samples.push(json!({"text": text, "pattern": pattern, "layer": layer, "head": head}));
        }
    }

    // The circuits come first: the first sample is the text the page opens SmolLM2 on.
    let mut circuits = Vec::new();
    for (pattern, prompts) in [("indirect-object", &IOI), ("fact", &FACTS)] {
        let mut best: Option<(f32, &str, circuit::Circuit, String)> = None;
        for (text, answer) in prompts.iter() {
            let prompt = ids(text);
            let target = ids(answer);
            let found = circuit::find(&model, &prompt, None, 3).expect("the circuit's runs");
            let right = target.len() == 1 && found.target == target[0];
            println!(
                "{pattern:16} {:5.3} {text:?} -> {:?} (right: {right}); top heads {:?}; knocked out {:.3}, control {:.3}; lens layer {:?}",
                found.probability,
                tokenizer.decode(&[found.target]).unwrap_or_default(),
                found.heads.iter().map(|p| format!("L{}H{} {:+.2}", p.layer, p.head, p.push)).collect::<Vec<_>>(),
                found.knocked_out,
                found.control_knocked_out,
                found.answer_layer
            );
            // The prompt that shows the circuit best: a likely answer that knocking out its top heads takes most from.
            let shows = found.probability * (found.probability - found.knocked_out);
            if right && best.as_ref().is_none_or(|b| shows > b.0) {
                best = Some((shows, text, found, answer.to_string()));
            }
        }
        if let Some((_, text, found, answer)) = best {
            let top = found.heads[0];
            circuits.push(json!({"text": text, "pattern": pattern, "layer": top.layer, "head": top.head, "target": answer}));
        }
    }

    circuits.extend(samples);
    let out = json!({"en": circuits, "zh": []});
    std::fs::write(Path::new(OUT), serde_json::to_string_pretty(&out).expect("json") + "\n").expect("writes samples.json");
    println!("wrote {OUT}");
}

fn report(pattern: &str, best: Option<(f32, &str, usize, usize)>) {
    match best {
        Some((score, text, layer, head)) => println!("{pattern:16} {score:5.3} L{layer}H{head} {text:?}"),
        None => println!("{pattern:16} no head"),
    }
}

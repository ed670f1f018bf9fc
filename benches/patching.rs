//! `cargo bench --bench patching`: activation patching on SmolLM2-135M (www/models/smollm2/, fetched by
//! `./build.sh build`) at T = 20 (the name-swap pair, lengthened to 20 tokens), one thread: `patch` as it runs
//! (each partial run starts from the corrupted run's residual stream at its layer) against the same
//! L·T + L·nH patched runs done as whole forwards from the embedding, the work saved by not recomputing
//! what a patch cannot change. Medians over rounds in which the two take turns.

use std::time::Instant;

use attnscope::analysis::patching::patch;
use attnscope::model::{Model, RunOptions};
use attnscope::tokenizer::Tokenizer;
use attnscope::trace::Recorder;

const MODEL: &str = "www/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let Ok(bytes) = std::fs::read(MODEL) else {
        println!("patching skipped: {MODEL} is missing (./build.sh build fetches it)");
        return;
    };
    let loaded = attnscope::gguf::load(&bytes).expect("SmolLM2 loads");
    let tokenizer = Tokenizer::for_model(&loaded.tokenizer_json, loaded.config.vocab_size).expect("tokenizer");
    let model = Model::new(loaded.config, loaded.weights);
    let ids = |text: &str| tokenizer.encode(text).expect("encodes").ids;
    let clean = ids("Yesterday afternoon, when Mary and John went to the big store, John gave a cold drink to");
    let corrupt = ids("Yesterday afternoon, when Mary and John went to the big store, Mary gave a cold drink to");
    let (mary, john) = (ids(" Mary")[0], ids(" John")[0]);
    let t = clean.len();
    let (l, h) = (model.config.num_hidden_layers, model.config.num_attention_heads);
    let runs = l * t + l * h;
    let whole = || {
        // As many whole forwards as patch's partial runs: what patching costs without keeping the prefix.
        let start = Instant::now();
        for _ in 0..runs {
            let (logits, _) = model.forward(&mut model.new_cache(), &corrupt, None, &RunOptions::default(), &mut Recorder::off()).expect("runs");
            std::hint::black_box(logits);
        }
        start.elapsed().as_secs_f64()
    };
    let reused = || {
        let start = Instant::now();
        std::hint::black_box(patch(&model, &clean, &corrupt, mary, john, |_, _| {}).expect("patches"));
        start.elapsed().as_secs_f64()
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        a.push(reused());
        b.push(whole());
    }
    let (a, b) = (median(a), median(b));
    let layer_runs_whole = runs * l;
    let layer_runs_reused = t * (0..l).map(|k| l - k - 1).sum::<usize>() + h * (0..l).map(|k| l - k).sum::<usize>() + 2 * l;
    println!("patching T={t} layers={l} heads={h} partial_runs={runs} layer_runs_reused={layer_runs_reused} layer_runs_whole={layer_runs_whole}");
    println!("patching reused_s={a:.2} whole_forwards_s={b:.2} speedup={:.2}", b / a);
}

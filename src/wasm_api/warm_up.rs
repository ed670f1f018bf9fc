//! Warm-up for V8's tiers. V8 first runs each wasm function in its baseline compiler (Liftoff) and
//! recompiles the hot ones with its optimising compiler (TurboFan) once they have used up a budget,
//! so a fresh page's first forward ran about 1.4x slower than its later ones (BENCHMARKS.md section 4,
//! "Tier-up"). The worker calls `warmUp` once, right after the core has loaded and while the page is
//! still fetching its model: a small random model's forward, recorded in full on both attention paths
//! as the page's runs are, takes the hot code (the matmul kernel, softmax, exp, RMSNorm, RoPE, the
//! recording) through its budget on numbers nobody sees, and the reader's first run finds it optimised.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use super::js;
use super::session::{run_on_cpu, RunRequest};
use crate::model::Model;
use crate::trace::{Recorder, Trace};
use crate::{weights, Config};

/// Small, but with every part the page's models have: GQA, Q/K norm, a tied lm_head, an FFN whose
/// inner size (384) spans more than one of the wasm kernel's 256-long inner blocks.
const CONFIG: &str = r#"{"hidden_size": 128, "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
  "head_dim": 32, "intermediate_size": 384, "vocab_size": 512, "max_position_embeddings": 256, "qk_norm": true,
  "tie_word_embeddings": true}"#;
const TOKENS: u32 = 64;

/// One forward of a small random model on each attention path; nothing is kept.
#[wasm_bindgen(js_name = warmUp)]
pub fn warm_up() -> Result<(), JsValue> {
    let config = Config::from_json(CONFIG).map_err(js)?;
    let ids: Vec<u32> = (0..TOKENS).map(|i| (i * 37 + 11) % config.vocab_size as u32).collect();
    let weights = weights::random(&config, 1);
    let model = Model::new(config, weights);
    let (last, last_request) = (RefCell::new(Trace::default()), RefCell::new(None));
    for attention in ["naive", "flash"] {
        let req = RunRequest { ids: ids.clone(), attention: attention.into(), ..RunRequest::default() };
        let rec = Recorder::new(req.selection());
        run_on_cpu(&model, &last, &last_request, req, rec, None)?;
    }
    Ok(())
}

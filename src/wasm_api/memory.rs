//! Memory policy at the door: what a config or a checkpoint costs, answered from config.json and the
//! safetensors header (or a GGUF file's header) before any weight is allocated, so a tab refuses what
//! it could not hold.

use js_sys::Reflect;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{js, js_said, said_error, to_js};
use crate::weights;
use crate::Config;

/// A config with the sizes the views show: `n_rep`, `kv_cache_bytes_per_token` (f32), `weight_count`, and
/// `weight_bytes_held`, what its weights take in this core (f32, once; the matrices as the matmul
/// kernel's panels).
pub(super) fn config_view(c: &Config) -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    struct View<'a> {
        #[serde(flatten)]
        config: &'a Config,
        n_rep: usize,
        kv_cache_bytes_per_token: u64,
        weight_count: u64,
        weight_bytes_held: u64,
    }
    to_js(&View { config: c, n_rep: c.n_rep(), kv_cache_bytes_per_token: c.kv_cache_bytes_per_token(), weight_count: c.weight_count(), weight_bytes_held: c.weight_bytes_held() })
}

/// A config.json resolved and checked as the core does, with its derived sizes, without building a
/// model: MiniMind-3's KV cache can be priced without allocating its weights.
#[wasm_bindgen(js_name = describeConfig)]
pub fn describe_config(config_json: &str) -> Result<JsValue, JsError> {
    config_view(&Config::from_json(config_json).map_err(js)?)
}

/// Asked before a checkpoint's tensor data is read: can this model.safetensors load in this tab?
/// `head` is the file's first 8 + N bytes (N: its header length, the little-endian u64 in its first
/// 8 bytes), `file_bytes` its size, `held_bytes` what the tab holds already for the model loaded now
/// (its weights, trace and the page's kept copy). Returns the config as `describeConfig` gives it
/// (with `qk_norm` decided by the checkpoint when config.json does not say) plus `dtype` ("BF16", or
/// "F32, BF16" when mixed), or an Error with the reason: a config the core refuses, a file too small
/// or too large for it, a header that does not describe the file or names a missing, misshaped or
/// integer tensor, or a load that would not fit the tab (`weights::check_load_budget`).
#[wasm_bindgen(js_name = checkCheckpoint)]
pub fn check_checkpoint(config_json: &str, file_bytes: f64, head: &[u8], held_bytes: f64) -> Result<JsValue, JsValue> {
    // `as` saturates: a negative or NaN size reads as 0, a huge one as u64::MAX, both refused by size.
    let size = file_bytes as u64;
    let header = weights::check_checkpoint(config_json, head, size).map_err(js_said)?;
    weights::check_load_budget(size, header.config.weight_bytes_held(), held_bytes as u64).map_err(|s| said_error(&s, &s.text))?;
    let view = config_view(&header.config)?;
    let dtype = header.dtypes.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
    Reflect::set(&view, &JsValue::from_str("dtype"), &JsValue::from_str(&dtype)).map_err(|_| JsError::new("cannot pass result to JS"))?;
    Ok(view)
}

/// How many of a GGUF file's first bytes `checkGguf` needs to read its header, or undefined when
/// `head` holds it whole (or the file is refused for another reason, which `checkGguf` says). The
/// page reads that much more of the file and asks again: the header holds the tokenizer, megabytes.
#[wasm_bindgen(js_name = ggufHeaderNeeds)]
pub fn gguf_header_needs(head: &[u8], file_bytes: f64) -> Option<f64> {
    crate::gguf::header_needs(head, file_bytes as u64).map(|n| n as f64)
}

/// Asked before a GGUF file's tensor data is read: what model it holds and whether this tab can load
/// it. `head` is the file's first bytes (at least its header, `ggufHeaderNeeds`). Returns the config as
/// `describeConfig` gives it plus `gguf`: {architecture, name, types, tokenizer, header_bytes}, and
/// `dtype` (the tensor types, "Q4_1, F32"), or an Error with the reason (a file refused by name, a
/// config the core refuses, a load over the tab's budget).
#[wasm_bindgen(js_name = checkGguf)]
pub fn check_gguf(head: &[u8], file_bytes: f64, held_bytes: f64) -> Result<JsValue, JsValue> {
    let size = file_bytes as u64;
    let summary = crate::gguf::inspect(head, size).map_err(js_said)?;
    weights::check_load_budget(size, summary.config.weight_bytes_held(), held_bytes as u64).map_err(|s| said_error(&s, &s.text))?;
    let view = config_view(&summary.config)?;
    let set = |k: &str, v: JsValue| Reflect::set(&view, &JsValue::from_str(k), &v).map_err(|_| JsError::new("cannot pass result to JS"));
    set("dtype", JsValue::from_str(&summary.types.join(", ")))?;
    set("gguf", to_js(&summary)?)?;
    Ok(view)
}

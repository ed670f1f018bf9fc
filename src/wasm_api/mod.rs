//! The browser API: the only code that knows wasm-bindgen. One module per job: `session` (a model and
//! tokenizer, traced runs and decoding steps, tensors handed to JS as Float32Array by contract name),
//! `rope` (the Session's RoPE teaching helpers on the loaded model's head size), `lesson` (the core's
//! attention pieces on hand-set numbers, for the lessons and the views that vary one knob of a real
//! head), `memory` (what a config or checkpoint costs, asked before anything is allocated), `warm_up` (a
//! small forward that takes V8's hot code to its optimising tier before the reader's first run) and
//! `gpu` (the WebGPU promises). This file holds what they share: error and value conversion, the panic hook.
//! Errors reach JS as Error with the core's message; a checkpoint's refusal (`Said`) also carries
//! `code` and `args`, so that the page can say it in the reader's language.

use js_sys::{Float32Array, Object, Reflect};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use crate::{Error, Said};

mod lesson;
mod memory;
mod rope;
mod session;
mod warm_up;
#[cfg(feature = "gpu")]
mod gpu;

pub use lesson::{attend, dot_terms, masked_softmax, silu};
pub use memory::{check_checkpoint, check_gguf, describe_config, gguf_header_needs};
pub use session::{Session, TokenizerRead};
pub use warm_up::warm_up;
/// `initThreadPool(n)` (the `threads` build, www/pkg-threads): n Web Workers join rayon's pool, sharing
/// this module's memory; the matmuls and attention's heads then split across them.
#[cfg(feature = "threads")]
pub use wasm_bindgen_rayon::init_thread_pool;

fn js(e: Error) -> JsError {
    JsError::new(&e.to_string())
}

/// An Error as a JS Error; a refusal of a config, a tokenizer, a checkpoint, a budget or a request also gets `code` (its `Said::key`) and `args`.
fn js_said(e: Error) -> JsValue {
    match e {
        Error::Config(ref said) | Error::Tokenizer(ref said) | Error::Checkpoint(ref said) | Error::Budget(ref said) | Error::Refused(ref said) => said_error(said, &e.to_string()),
        e => js(e).into(),
    }
}

/// A JS Error with `message`, and the sentence's `code` and `args` (an object of strings).
fn said_error(said: &Said, message: &str) -> JsValue {
    let error = JsValue::from(JsError::new(message));
    let args = Object::new();
    for (name, value) in &said.args {
        let _ = Reflect::set(&args, &JsValue::from_str(name), &JsValue::from_str(value));
    }
    let _ = Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(said.key));
    let _ = Reflect::set(&error, &JsValue::from_str("args"), &args);
    error
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&format!("cannot pass result to JS: {e}")))
}

fn from_js<T: for<'de> Deserialize<'de>>(v: JsValue, what: &str) -> Result<T, JsError> {
    serde_wasm_bindgen::from_value(v).map_err(|e| JsError::new(&format!("bad {what}: {e}")))
}

/// `performance.now()` where there is one (a page or a worker: microseconds, not Date's whole
/// milliseconds, so a 2.4 ms run does not read "2.0 ms"), else `Date.now()`.
fn now_ms() -> f64 {
    let performance = Reflect::get(&js_sys::global(), &JsValue::from_str("performance")).ok().filter(|p| p.is_object());
    performance
        .and_then(|p| {
            let now: js_sys::Function = Reflect::get(&p, &JsValue::from_str("now")).ok()?.dyn_into().ok()?;
            now.call0(&p).ok()?.as_f64()
        })
        .unwrap_or_else(js_sys::Date::now)
}

/// `{name: Float32Array, …}`: tensors cross into JS as typed arrays, not as JSON numbers.
fn typed_fields(fields: &[(&str, &[f32])]) -> Result<Object, JsError> {
    let obj = Object::new();
    for (name, data) in fields {
        Reflect::set(&obj, &JsValue::from_str(name), &Float32Array::from(*data)).map_err(|_| JsError::new("cannot pass result to JS"))?;
    }
    Ok(obj)
}

/// The number of entries of a shape given from JS, or an Error when it does not fit in a usize:
/// on wasm32 a usize is 32 bits, and a product that wraps could pass any size check.
fn entries(dims: &[usize], shape: &str) -> Result<usize, JsError> {
    dims.iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| JsError::new(&format!("{shape} ({}) has more entries than this computer can count", dims.iter().map(usize::to_string).collect::<Vec<_>>().join(" x "))))
}

/// Makes a panic in the core say what it was: the page calls this once after loading the module. A
/// panic in wasm32 ends in a trap that reaches JS as a bare `RuntimeError: unreachable`; the hook runs
/// first and leaves the panic's own message (and where, in our code) in `globalThis.attnscopePanic`,
/// where the worker reads it without calling into the trapped instance again.
#[wasm_bindgen(js_name = installPanicHook)]
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str)).unwrap_or("a panic with no message");
        // Where, when it is our own code; a dependency's path says nothing to a reader.
        let place = info.location().filter(|l| l.file().starts_with("src/")).map(|l| format!(" (at {}:{})", l.file(), l.line())).unwrap_or_default();
        let _ = Reflect::set(&js_sys::global(), &JsValue::from_str("attnscopePanic"), &JsValue::from_str(&format!("{message}{place}")));
    }));
}

fn expect_len(name: &str, got: usize, want: usize, shape: &str) -> Result<(), JsError> {
    if got == want {
        Ok(())
    } else {
        Err(JsError::new(&format!("{name} has {got} numbers but {shape} needs {want}")))
    }
}

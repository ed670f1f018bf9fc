//! The browser API: the only code that knows wasm-bindgen. A `Session` owns a model (seeded random
//! weights or a user's checkpoint) and a tokenizer, runs traced forward calls and decoding steps, and
//! hands tensors to JS as Float32Array by contract name. Errors reach JS as Error with the core's message.

use js_sys::Float32Array;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use crate::model::generate::{Generator, Sampling};
use crate::model::{AttentionPath, FlashProbe, Model, RunOptions};
use crate::tokenizer::Tokenizer;
use crate::trace::{Selection, Trace};
use crate::weights;
use crate::{Config, Error};

fn js(e: Error) -> JsError {
    JsError::new(&e.to_string())
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&format!("cannot pass result to JS: {e}")))
}

fn from_js<T: for<'de> Deserialize<'de>>(v: JsValue, what: &str) -> Result<T, JsError> {
    serde_wasm_bindgen::from_value(v).map_err(|e| JsError::new(&format!("bad {what}: {e}")))
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// What `run` takes from JS.
#[derive(Clone, Deserialize)]
#[serde(default)]
struct RunRequest {
    ids: Vec<u32>,
    attention_mask: Option<Vec<u8>>,
    prefix_len: usize,
    causal: bool,
    layers: Option<Vec<usize>>,
    heads: Option<Vec<usize>>,
    /// "auto", "naive" or "flash".
    attention: String,
    tile: usize,
    probe: Option<FlashProbe>,
}

impl Default for RunRequest {
    fn default() -> Self {
        RunRequest {
            ids: Vec::new(),
            attention_mask: None,
            prefix_len: 0,
            causal: true,
            layers: None,
            heads: None,
            attention: "auto".into(),
            tile: crate::model::forward::DEFAULT_TILE,
            probe: None,
        }
    }
}

impl RunRequest {
    fn options(&self) -> Result<RunOptions, Error> {
        let path = match self.attention.as_str() {
            "auto" => AttentionPath::Auto,
            "naive" => AttentionPath::Naive,
            "flash" => AttentionPath::Flash { tile: self.tile.max(1) },
            other => return Err(Error::Input(format!("attention must be auto, naive or flash, not '{other}'"))),
        };
        Ok(RunOptions { causal: self.causal, path, probe: self.probe })
    }

    fn selection(&self) -> Selection {
        Selection { off: false, layers: self.layers.clone(), heads: self.heads.clone() }
    }
}

#[derive(Serialize)]
struct RunResult<'a> {
    entries: &'a [crate::trace::Entry],
    backend: &'static str,
    ms: f64,
    flash: Option<crate::model::forward::FlashReport>,
    cache_len: usize,
    cache_bytes: usize,
}

#[derive(Serialize)]
struct Candidate {
    id: u32,
    p: f32,
    piece: String,
}

#[derive(Serialize)]
struct StepResult<'a> {
    token: u32,
    piece: String,
    ids: &'a [u32],
    top: Vec<Candidate>,
    entries: &'a [crate::trace::Entry],
    ms: f64,
    cache_len: usize,
    cache_bytes: usize,
}

#[wasm_bindgen]
pub struct Session {
    model: Model,
    tokenizer: Option<Tokenizer>,
    last: Trace,
    last_request: Option<RunRequest>,
    generator: Option<Generator>,
}

#[wasm_bindgen]
impl Session {
    /// A model with seeded random weights for any valid configuration (HF config.json keys).
    pub fn random(config_json: &str, seed: f64) -> Result<Session, JsError> {
        let config = Config::from_json(config_json).map_err(js)?;
        let w = weights::random(&config, seed as u64);
        Ok(Session::with(Model::new(config, w)))
    }

    /// A checkpoint: config.json text and model.safetensors bytes (f32, f16 or bf16).
    #[wasm_bindgen(js_name = fromCheckpoint)]
    pub fn from_checkpoint(config_json: &str, safetensors: &[u8]) -> Result<Session, JsError> {
        let config = Config::from_json(config_json).map_err(js)?;
        let w = weights::load_safetensors(&config, safetensors).map_err(js)?;
        Ok(Session::with(Model::new(config, w)))
    }

    /// Loads a tokenizer.json; refused when it has more ids than the model's vocabulary.
    #[wasm_bindgen(js_name = setTokenizer)]
    pub fn set_tokenizer(&mut self, tokenizer_json: &str) -> Result<(), JsError> {
        let t = Tokenizer::from_json(tokenizer_json).map_err(js)?;
        if t.vocab_size() > self.model.config.vocab_size {
            return Err(js(Error::Tokenizer(format!(
                "the tokenizer has {} tokens but the model's vocabulary has only {}",
                t.vocab_size(),
                self.model.config.vocab_size
            ))));
        }
        self.tokenizer = Some(t);
        Ok(())
    }

    pub fn config(&self) -> Result<JsValue, JsError> {
        #[derive(Serialize)]
        struct View<'a> {
            #[serde(flatten)]
            config: &'a Config,
            n_rep: usize,
            kv_cache_bytes_per_token: u64,
            weight_count: u64,
        }
        let c = &self.model.config;
        to_js(&View { config: c, n_rep: c.n_rep(), kv_cache_bytes_per_token: c.kv_cache_bytes_per_token(), weight_count: c.weight_count() })
    }

    /// `{ids, pieces}`; pieces are readable (partial UTF-8 bytes shown as `<E4 BD>`).
    pub fn tokenize(&self, text: &str) -> Result<JsValue, JsError> {
        let enc = self.tokenizer()?.encode(text).map_err(js)?;
        to_js(&enc)
    }

    /// Readable piece of each id.
    pub fn pieces(&self, ids: Vec<u32>) -> Result<JsValue, JsError> {
        let t = self.tokenizer()?;
        to_js(&ids.iter().map(|&id| t.id_to_piece(id)).collect::<Vec<_>>())
    }

    pub fn decode(&self, ids: Vec<u32>) -> Result<String, JsError> {
        self.tokenizer()?.decode(&ids).map_err(js)
    }

    /// One traced forward call; see RunRequest. Returns entry metadata; tensors via `tensor(name)`.
    pub fn run(&mut self, request: JsValue) -> Result<JsValue, JsError> {
        let req: RunRequest = from_js(request, "run request")?;
        let opts = req.options().map_err(js)?;
        let t0 = now_ms();
        let out = self.model.trace(&req.ids, req.attention_mask.as_deref(), req.prefix_len, &opts, req.selection()).map_err(js)?;
        let ms = now_ms() - t0;
        self.last = out.trace;
        self.last_request = Some(req);
        to_js(&RunResult {
            entries: &self.last.entries,
            backend: "cpu",
            ms,
            flash: out.flash,
            cache_len: out.cache.len(),
            cache_bytes: out.cache.bytes(),
        })
    }

    /// The flash walk of one query row over key tiles of `tile` keys, for the last run's input:
    /// `{layer, record: {head, row, tile, steps: [{key_start, key_end, scores, m, l, o}], output}, max_abs_diff}`.
    #[wasm_bindgen(js_name = flashRecord)]
    pub fn flash_record(&self, layer: usize, head: usize, row: usize, tile: usize) -> Result<JsValue, JsError> {
        let req = self.last_request.as_ref().ok_or_else(|| JsError::new("run something first"))?;
        let opts = RunOptions { probe: Some(FlashProbe { layer, head, row, tile: tile.max(1) }), ..req.options().map_err(js)? };
        let out = self.model.trace(&req.ids, req.attention_mask.as_deref(), req.prefix_len, &opts, Selection::none()).map_err(js)?;
        let report = out.flash.ok_or_else(|| JsError::new(&format!("no head {head} / row {row} in layer {layer}")))?;
        to_js(&report)
    }

    /// A tensor of the last run or decoding step, row-major, copied into a new Float32Array.
    pub fn tensor(&self, name: &str) -> Result<Float32Array, JsError> {
        let e = self.last.get(name).ok_or_else(|| JsError::new(&format!("the last run recorded no tensor named '{name}'")))?;
        Ok(Float32Array::from(&e.data[..]))
    }

    /// Starts decoding from `ids` with `{temperature, top_k, top_p, seed}`.
    #[wasm_bindgen(js_name = generateStart)]
    pub fn generate_start(&mut self, ids: Vec<u32>, sampling: JsValue) -> Result<(), JsError> {
        let sampling: Sampling = if sampling.is_undefined() || sampling.is_null() { Sampling::default() } else { from_js(sampling, "sampling")? };
        self.generator = Some(Generator::new(&self.model, &ids, sampling).map_err(js)?);
        Ok(())
    }

    /// One decoding step (the first one prefills the prompt); records `request`'s layers and heads.
    #[wasm_bindgen(js_name = generateStep)]
    pub fn generate_step(&mut self, request: JsValue) -> Result<JsValue, JsError> {
        let req: RunRequest = if request.is_undefined() || request.is_null() { RunRequest::default() } else { from_js(request, "step request")? };
        let opts = req.options().map_err(js)?;
        let gen = self.generator.as_mut().ok_or_else(|| JsError::new("call generateStart first"))?;
        let t0 = now_ms();
        let step = gen.step(&self.model, &opts, req.selection()).map_err(js)?;
        let ms = now_ms() - t0;
        self.last = step.trace;
        let piece = |id: u32| self.tokenizer.as_ref().map_or_else(|| id.to_string(), |t| t.id_to_piece(id));
        let top = step.top.iter().map(|&(id, p)| Candidate { id, p, piece: piece(id) }).collect();
        let gen = self.generator.as_ref().expect("set above");
        to_js(&StepResult {
            token: step.token,
            piece: piece(step.token),
            ids: &gen.ids,
            top,
            entries: &self.last.entries,
            ms,
            cache_len: gen.cache().len(),
            cache_bytes: gen.cache().bytes(),
        })
    }
}

impl Session {
    fn with(model: Model) -> Session {
        Session { model, tokenizer: None, last: Trace::default(), last_request: None, generator: None }
    }

    fn tokenizer(&self) -> Result<&Tokenizer, JsError> {
        self.tokenizer.as_ref().ok_or_else(|| JsError::new("no tokenizer loaded"))
    }
}

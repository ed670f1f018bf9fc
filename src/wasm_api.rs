//! The browser API: the only code that knows wasm-bindgen. A `Session` owns a model (seeded random
//! weights or a user's checkpoint) and a tokenizer, runs traced forward calls and decoding steps, and
//! hands tensors to JS as Float32Array by contract name. Errors reach JS as Error with the core's message.
//! Free functions run the core's attention pieces on hand-set numbers, for the lessons and the views
//! that vary one knob (the scale, RoPE's distance, YaRN) of a real head.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Float32Array, Object, Reflect};
use ndarray::{Array3, ArrayView2, ArrayView3};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use crate::analysis::head_roles::{self, HeadRole};
use crate::model::attention::{head_scores, mask_in_place, naive_attention, softmax_rows, MaskSpec};
use crate::model::config::{MAX_HEADS, MAX_HEAD_DIM, MAX_TOKENS};
use crate::model::generate::{top_tokens, Generator, Sampling};
use crate::model::rope::{inv_freq, yarn_active, RopeTable};
use crate::model::swiglu;
use crate::model::{AttentionPath, FlashProbe, Model, RunOptions};
use crate::tokenizer::Tokenizer;
use crate::trace::{Recorder, Selection, Trace};
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

/// Largest [heads, t, s] block the hand-set functions compute (64 MB of f32 per tensor).
const MAX_HAND_SET_SCORES: usize = 1 << 24;

/// Sizes and masks of attention on hand-set numbers: q [t, heads, d], k and v [s, kv_heads, d],
/// scores [heads, t, s]. The masks are the model's: causal -inf for key j after query position
/// prefix_len + i, padding (0 = padding key) -1e9.
#[derive(Deserialize)]
#[serde(default)]
struct AttendSpec {
    t: usize,
    s: usize,
    heads: usize,
    kv_heads: usize,
    d: usize,
    /// Multiplies q·k in `attend` (default 1/sqrt(d), the model's), the given scores in `maskedSoftmax` (default 1).
    scale: Option<f32>,
    causal: bool,
    prefix_len: usize,
    padding: Option<Vec<u8>>,
}

impl Default for AttendSpec {
    fn default() -> Self {
        AttendSpec { t: 0, s: 0, heads: 1, kv_heads: 1, d: 0, scale: None, causal: true, prefix_len: 0, padding: None }
    }
}

impl AttendSpec {
    fn parse(value: JsValue) -> Result<AttendSpec, JsError> {
        let spec: AttendSpec = from_js(value, "attention spec")?;
        let bad = |m: String| Err(JsError::new(&m));
        if spec.t == 0 || spec.s == 0 || spec.t > MAX_TOKENS || spec.s > MAX_TOKENS {
            return bad(format!("t ({}) and s ({}) must be between 1 and {MAX_TOKENS}", spec.t, spec.s));
        }
        if spec.heads == 0 || spec.kv_heads == 0 || spec.heads > MAX_HEADS || !spec.heads.is_multiple_of(spec.kv_heads) {
            return bad(format!("heads ({}) must be a multiple of kv_heads ({}), at most {MAX_HEADS}", spec.heads, spec.kv_heads));
        }
        if spec.d > MAX_HEAD_DIM {
            return bad(format!("d ({}) is over the limit of {MAX_HEAD_DIM}", spec.d));
        }
        if entries(&[spec.heads, spec.t, spec.s], "[heads, t, s]").map_or(true, |n| n > MAX_HAND_SET_SCORES) {
            return bad(format!("{} x {} x {} scores is over the limit of {MAX_HAND_SET_SCORES}", spec.heads, spec.t, spec.s));
        }
        if let Some(p) = &spec.padding {
            if p.len() != spec.s {
                return bad(format!("padding has {} entries but there are {} keys", p.len(), spec.s));
            }
            if p.iter().any(|&b| b > 1) {
                return bad("padding must hold only 0 (padding) and 1 (real token)".into());
            }
        }
        Ok(spec)
    }

    fn mask(&self) -> MaskSpec<'_> {
        MaskSpec { causal: self.causal, prefix_len: self.prefix_len, padding: self.padding.as_deref() }
    }
}

/// Attention on hand-set numbers by the model's explicit path: `{scores, masked, probs}`, each
/// [heads, t, s], and `context` [t, heads, d] when `v` is given (an empty `v` leaves it out).
#[wasm_bindgen]
pub fn attend(q: &[f32], k: &[f32], v: &[f32], spec: JsValue) -> Result<JsValue, JsError> {
    let spec = AttendSpec::parse(spec)?;
    let (t, s, nh, nkv, d) = (spec.t, spec.s, spec.heads, spec.kv_heads, spec.d);
    if d == 0 {
        return Err(JsError::new("d must be at least 1"));
    }
    let (q_len, kv_len) = (entries(&[t, nh, d], "[t, heads, d]")?, entries(&[s, nkv, d], "[s, kv_heads, d]")?);
    expect_len("q", q.len(), q_len, "[t, heads, d]")?;
    expect_len("k", k.len(), kv_len, "[s, kv_heads, d]")?;
    if !v.is_empty() {
        expect_len("v", v.len(), kv_len, "[s, kv_heads, d]")?;
    }
    let q = ArrayView3::from_shape((t, nh, d), q).expect("length checked");
    let k = ArrayView3::from_shape((s, nkv, d), k).expect("length checked");
    let zeros;
    let vv = if v.is_empty() {
        zeros = Array3::zeros((s, nkv, d));
        zeros.view()
    } else {
        ArrayView3::from_shape((s, nkv, d), v).expect("length checked")
    };
    let out = naive_attention(q, k, vv, &spec.mask(), spec.scale.unwrap_or(1.0 / (d as f32).sqrt()));
    let mut fields = vec![
        ("scores", out.scores.as_slice().expect("standard layout")),
        ("masked", out.masked.as_slice().expect("standard layout")),
        ("probs", out.probs.as_slice().expect("standard layout")),
    ];
    if !v.is_empty() {
        fields.push(("context", out.context.as_slice().expect("standard layout")));
    }
    Ok(typed_fields(&fields)?.into())
}

/// Scores given directly, [heads, t, s]: `{masked, probs}`, masked = scores · scale (default 1) plus
/// the masks, probs its row softmax, exactly as the model continues after q·k.
#[wasm_bindgen(js_name = maskedSoftmax)]
pub fn masked_softmax(scores: &[f32], spec: JsValue) -> Result<JsValue, JsError> {
    let spec = AttendSpec::parse(spec)?;
    let (t, s) = (spec.t, spec.s);
    expect_len("scores", scores.len(), entries(&[spec.heads, t, s], "[heads, t, s]")?, "[heads, t, s]")?;
    let scale = spec.scale.unwrap_or(1.0);
    let mask = spec.mask();
    let mut masked = Vec::with_capacity(scores.len());
    let mut probs = Vec::with_capacity(scores.len());
    for block in scores.chunks_exact(t * s) {
        let mut m = ArrayView2::from_shape((t, s), block).expect("length checked").mapv(|x| x * scale);
        mask_in_place(&mut m, &mask);
        probs.extend(softmax_rows(&m).iter());
        masked.extend(m.iter());
    }
    Ok(typed_fields(&[("masked", &masked), ("probs", &probs)])?.into())
}

/// The element-wise products a_i · b_i and their sum: the dot product behind one attention score.
/// `{terms: Float32Array, sum}`.
#[wasm_bindgen(js_name = dotTerms)]
pub fn dot_terms(a: &[f32], b: &[f32]) -> Result<JsValue, JsError> {
    if a.len() != b.len() {
        return Err(JsError::new(&format!("the vectors have {} and {} numbers; a dot product needs the same length", a.len(), b.len())));
    }
    let terms: Vec<f32> = a.iter().zip(b).map(|(x, y)| x * y).collect();
    let sum: f32 = terms.iter().sum();
    let obj = typed_fields(&[("terms", &terms)])?;
    Reflect::set(&obj, &JsValue::from_str("sum"), &JsValue::from_f64(sum as f64)).map_err(|_| JsError::new("cannot pass result to JS"))?;
    Ok(obj.into())
}

/// silu(z) = z · sigmoid(z) of each entry, as the FFN applies it to the gate.
#[wasm_bindgen]
pub fn silu(z: &[f32]) -> Vec<f32> {
    z.iter().map(|&v| swiglu::silu(v)).collect()
}

/// A config with the sizes the views show: `n_rep`, `kv_cache_bytes_per_token` (f32), `weight_count`.
fn config_view(c: &Config) -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    struct View<'a> {
        #[serde(flatten)]
        config: &'a Config,
        n_rep: usize,
        kv_cache_bytes_per_token: u64,
        weight_count: u64,
    }
    to_js(&View { config: c, n_rep: c.n_rep(), kv_cache_bytes_per_token: c.kv_cache_bytes_per_token(), weight_count: c.weight_count() })
}

/// A config.json resolved and checked as the core does, with its derived sizes, without building a
/// model: MiniMind-3's KV cache can be priced without allocating its weights.
#[wasm_bindgen(js_name = describeConfig)]
pub fn describe_config(config_json: &str) -> Result<JsValue, JsError> {
    config_view(&Config::from_json(config_json).map_err(js)?)
}

/// What a tab's WebAssembly memory (4 GiB in wasm32) may spend on loading a checkpoint: its file,
/// copied in, and its weights in f32 (the matrices twice: as read and packed), side by side. The rest is for the traces (at most 1 GiB).
const MAX_LOAD_BYTES: u64 = 3 << 30;

/// Asked before a checkpoint's tensor data is read: can this model.safetensors load in this tab?
/// `head` is the file's first 8 + N bytes (N: its header length, the little-endian u64 in its first
/// 8 bytes), `file_bytes` its size. Returns the config as `describeConfig` gives it (with `qk_norm`
/// decided by the checkpoint when config.json does not say) plus `dtype` ("BF16", or "F32, BF16"
/// when mixed), or an Error with the reason: a config the core refuses, a file too small or too
/// large for it, a header that does not describe the file or names a missing, misshaped or integer
/// tensor, or a file and its f32 weights that together would not fit in the tab's memory.
#[wasm_bindgen(js_name = checkCheckpoint)]
pub fn check_checkpoint(config_json: &str, file_bytes: f64, head: &[u8]) -> Result<JsValue, JsError> {
    // `as` saturates: a negative or NaN size reads as 0, a huge one as u64::MAX, both refused by size.
    let size = file_bytes as u64;
    let header = weights::check_checkpoint(config_json, head, size).map_err(js)?;
    let f32_bytes = header.config.weight_count() * 4;
    let packed_bytes = header.config.weight_bytes_held() - f32_bytes;
    let total = size.saturating_add(f32_bytes).saturating_add(packed_bytes);
    if total > MAX_LOAD_BYTES {
        return Err(JsError::new(&format!(
            "this checkpoint needs {:.2} GB to load ({:.2} GB of file, {:.2} GB of f32 weights and {:.2} GB of \
             them packed for the matmul kernel), more than the {:.2} GB a browser tab's WebAssembly memory has for it",
            total as f64 / 1e9,
            size as f64 / 1e9,
            f32_bytes as f64 / 1e9,
            packed_bytes as f64 / 1e9,
            MAX_LOAD_BYTES as f64 / 1e9
        )));
    }
    let view = config_view(&header.config)?;
    let dtype = header.dtypes.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
    Reflect::set(&view, &JsValue::from_str("dtype"), &JsValue::from_str(&dtype)).map_err(|_| JsError::new("cannot pass result to JS"))?;
    Ok(view)
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
struct HeadRoleView {
    head: usize,
    #[serde(flatten)]
    role: Option<HeadRole>,
}

#[derive(Serialize)]
struct LayerRoles {
    layer: usize,
    heads: Vec<HeadRoleView>,
}

#[derive(Serialize)]
struct DecodeCheck {
    max_abs_diff: f32,
    positions: usize,
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
    /// Shared with the GPU calls' futures, which outlive any borrow of the Session.
    model: Rc<Model>,
    tokenizer: Option<Tokenizer>,
    last: Rc<RefCell<Trace>>,
    last_request: Rc<RefCell<Option<RunRequest>>>,
    /// The model's weights on the GPU, once `enableGpu` has succeeded.
    #[cfg(feature = "gpu")]
    gpu: Rc<RefCell<Option<Rc<crate::gpu::GpuModel>>>>,
    generator: Option<Generator>,
    /// The last decoding step's logits row, for `decodeCheck`.
    step_logits: Vec<f32>,
}

#[wasm_bindgen]
impl Session {
    /// A model with seeded random weights for any valid configuration (HF config.json keys).
    pub fn random(config_json: &str, seed: f64) -> Result<Session, JsError> {
        let config = Config::from_json(config_json).map_err(js)?;
        let w = weights::random(&config, seed as u64);
        Ok(Session::with(Model::new(config, w)))
    }

    /// A checkpoint: config.json text and model.safetensors bytes (f32, f16 or bf16); without a
    /// `qk_norm` key in config.json, the checkpoint's tensors decide it (see `weights::load_checkpoint`).
    #[wasm_bindgen(js_name = fromCheckpoint)]
    pub fn from_checkpoint(config_json: &str, safetensors: &[u8]) -> Result<Session, JsError> {
        let (config, w) = weights::load_checkpoint(config_json, safetensors).map_err(js)?;
        Ok(Session::with(Model::new(config, w)))
    }

    /// Loads a tokenizer.json; refused when it has more ids than the model's vocabulary.
    #[wasm_bindgen(js_name = setTokenizer)]
    pub fn set_tokenizer(&mut self, tokenizer_json: &str) -> Result<(), JsError> {
        let t = Tokenizer::for_model(tokenizer_json, self.model.config.vocab_size).map_err(js)?;
        self.tokenizer = Some(t);
        Ok(())
    }

    pub fn config(&self) -> Result<JsValue, JsError> {
        config_view(&self.model.config)
    }

    /// `{ids, pieces, bytes, chars, split}`: each token as read in the sentence, a character cut over
    /// several tokens shown in each with its part (昨¹ 昨²), and the token's bytes in hex (tokenizer.rs).
    pub fn tokenize(&self, text: &str) -> Result<JsValue, JsError> {
        let enc = self.tokenizer()?.encode(text).map_err(js)?;
        to_js(&enc)
    }

    /// Readable piece of each id of a run, read in sequence as `tokenize` reads them.
    pub fn pieces(&self, ids: Vec<u32>) -> Result<JsValue, JsError> {
        to_js(&self.tokenizer()?.read(&ids).pieces)
    }

    pub fn decode(&self, ids: Vec<u32>) -> Result<String, JsError> {
        self.tokenizer()?.decode(&ids).map_err(js)
    }

    /// The `k` most likely next tokens after one logits row, by softmax over the whole vocabulary:
    /// `[{id, p, piece}]`, most likely first.
    #[wasm_bindgen(js_name = topTokens)]
    pub fn top_tokens(&self, logits: &[f32], k: usize) -> Result<JsValue, JsError> {
        expect_len("logits", logits.len(), self.model.config.vocab_size, "one row of [T, V]")?;
        to_js(&top_tokens(logits, k).iter().map(|&(id, p)| Candidate { id, p, piece: self.piece(id) }).collect::<Vec<_>>())
    }

    /// RoPE's angle p · inv_freq[i] for positions 0..positions and pairs i < d/2, as [positions, d/2],
    /// in f32 as the tables are built. `yarn` turns YaRN on, as inference_rope_scaling does.
    #[wasm_bindgen(js_name = ropeAngles)]
    pub fn rope_angles(&self, positions: usize, yarn: bool) -> Result<Vec<f32>, JsError> {
        self.check_positions(positions)?;
        let c = &self.model.config;
        let freqs = inv_freq(c.head_dim(), c.rope_theta, self.yarn(yarn));
        Ok((0..positions).flat_map(|p| freqs.iter().map(move |&f| p as f32 * f)).collect())
    }

    /// `x`, one or more head vectors ([n, d]), rotated to `position`: x·cos + rotate_half(x)·sin.
    #[wasm_bindgen(js_name = ropeRotate)]
    pub fn rope_rotate(&self, x: &[f32], position: usize, yarn: bool) -> Result<Vec<f32>, JsError> {
        let c = &self.model.config;
        let d = c.head_dim();
        if x.is_empty() || !x.len().is_multiple_of(d) {
            return Err(JsError::new(&format!("x must hold whole vectors of head_dim = {d} numbers, not {}", x.len())));
        }
        self.check_positions(position.saturating_add(1))?;
        let table = RopeTable::with(d, c.rope_theta, self.yarn(yarn), position, 1);
        let x = ArrayView3::from_shape((1, x.len() / d, d), x).expect("length checked");
        Ok(table.apply(x).into_raw_vec_and_offset().0)
    }

    /// The score q·k / sqrt(d) of the same two head vectors after RoPE with q `distance` positions after
    /// k, for distance = 0..=max_distance: what position alone does to attention.
    #[wasm_bindgen(js_name = ropeScores)]
    pub fn rope_scores(&self, q: &[f32], k: &[f32], max_distance: usize, yarn: bool) -> Result<Vec<f32>, JsError> {
        let c = &self.model.config;
        let d = c.head_dim();
        expect_len("q", q.len(), d, "one head vector")?;
        expect_len("k", k.len(), d, "one head vector")?;
        let n = max_distance.saturating_add(1);
        self.check_positions(n)?;
        let table = RopeTable::with(d, c.rope_theta, self.yarn(yarn), 0, n);
        let qs = Array3::from_shape_fn((n, 1, d), |(_, _, i)| q[i]);
        let q_rot = table.apply(qs.view()).into_shape_with_order((n, d)).expect("n x 1 x d"); // (n, d): q at 0..n
        let k_rot = ArrayView2::from_shape((1, d), k).expect("length checked"); // k at position 0: unrotated
        Ok(head_scores(q_rot.view(), k_rot, 1.0 / (d as f32).sqrt()).into_raw_vec_and_offset().0)
    }

    /// One traced forward call; see RunRequest. Returns entry metadata; tensors via `tensor(name)`.
    /// `progress`, when given, is called as progress(layersDone, layersInAll) after each layer.
    pub fn run(&mut self, request: JsValue, progress: Option<js_sys::Function>) -> Result<JsValue, JsError> {
        let req: RunRequest = from_js(request, "run request")?;
        let opts = req.options().map_err(js)?;
        let mut rec = Recorder::new(req.selection());
        if let Some(f) = progress {
            rec = rec.with_progress(move |done, total| {
                let _ = f.call2(&JsValue::NULL, &JsValue::from(done as u32), &JsValue::from(total as u32));
            });
        }
        // The last run's trace goes first, so two are never held at once (MAX_MEMORY_BYTES counts one).
        *self.last.borrow_mut() = Trace::default();
        *self.last_request.borrow_mut() = None;
        let t0 = now_ms();
        let out = self.model.trace_into(&req.ids, req.attention_mask.as_deref(), req.prefix_len, &opts, rec).map_err(js)?;
        let ms = now_ms() - t0;
        *self.last.borrow_mut() = out.trace;
        *self.last_request.borrow_mut() = Some(req);
        to_js(&RunResult {
            entries: &self.last.borrow().entries,
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
        let req = self.last_request.borrow();
        let req = req.as_ref().ok_or_else(|| JsError::new("run something first"))?;
        let opts = RunOptions { probe: Some(FlashProbe { layer, head, row, tile: tile.max(1) }), ..req.options().map_err(js)? };
        let out = self.model.trace(&req.ids, req.attention_mask.as_deref(), req.prefix_len, &opts, Selection::none()).map_err(js)?;
        let report = out.flash.ok_or_else(|| JsError::new(&format!("no head {head} / row {row} in layer {layer}")))?;
        to_js(&report)
    }

    /// What each head does on the last run's input (`analysis::head_roles`), measured on its
    /// `layers.L.attn.probs` with the run's masks: `[{layer, heads: [{head, role, score, strong,
    /// scores: {previous, current, first, spread, rows}}]}]` for every layer the run recorded; a head
    /// is `{head}` alone when the input is too short to tell.
    #[wasm_bindgen(js_name = headRoles)]
    pub fn head_roles(&self) -> Result<JsValue, JsError> {
        let req = self.last_request.borrow();
        let req = req.as_ref().ok_or_else(|| JsError::new("run something first"))?;
        let mask = MaskSpec { causal: req.causal, prefix_len: req.prefix_len, padding: req.attention_mask.as_deref() };
        let last = self.last.borrow();
        let layers = (0..self.model.config.num_hidden_layers)
            .filter_map(|layer| {
                let e = last.get(&format!("layers.{layer}.attn.probs"))?;
                let probs = ArrayView3::from_shape((e.shape[0], e.shape[1], e.shape[2]), &e.data[..]).expect("probs are [nH, T, S]");
                let heads: Vec<usize> = e.heads.clone().unwrap_or_else(|| (0..e.shape[0]).collect());
                let measured = head_roles::measure(probs, &mask);
                let heads = heads.into_iter().zip(measured).map(|(head, s)| HeadRoleView { head, role: s.map(|s| s.role()) }).collect();
                Some(LayerRoles { layer, heads })
            })
            .collect::<Vec<_>>();
        to_js(&layers)
    }

    /// A tensor of the last run or decoding step, row-major, copied into a new Float32Array.
    pub fn tensor(&self, name: &str) -> Result<Float32Array, JsError> {
        let last = self.last.borrow();
        let e = last.get(name).ok_or_else(|| JsError::new(&format!("the last run recorded no tensor named '{name}'")))?;
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
        *self.last.borrow_mut() = step.trace;
        let last = self.last.borrow();
        self.step_logits = last.get("logits").map_or_else(Vec::new, |e| {
            let v = self.model.config.vocab_size;
            e.data[e.data.len() - v..].to_vec()
        });
        let top = step.top.iter().map(|&(id, p)| Candidate { id, p, piece: self.piece(id) }).collect();
        let gen = self.generator.as_ref().expect("set above");
        to_js(&StepResult {
            token: step.token,
            piece: self.piece(step.token),
            ids: &gen.ids,
            top,
            entries: &last.entries,
            ms,
            cache_len: gen.cache().len(),
            cache_bytes: gen.cache().bytes(),
        })
    }

    /// Cached decoding against recomputation: the last step's logits row, computed with the KV cache,
    /// against the last row of one forward pass over the same ids from scratch.
    /// `{max_abs_diff, positions}`.
    #[wasm_bindgen(js_name = decodeCheck)]
    pub fn decode_check(&self) -> Result<JsValue, JsError> {
        let gen = self.generator.as_ref().ok_or_else(|| JsError::new("call generateStart first"))?;
        if self.step_logits.is_empty() {
            return Err(JsError::new("take a decoding step first"));
        }
        // The step appended its token to ids without running it yet.
        let fed = &gen.ids[..gen.ids.len() - 1];
        let full = self.model.trace(fed, None, 0, &RunOptions::default(), Selection::none()).map_err(js)?;
        let last = full.logits.row(fed.len() - 1);
        let max_abs_diff = last.iter().zip(&self.step_logits).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
        to_js(&DecodeCheck { max_abs_diff, positions: fed.len() })
    }
}

impl Session {
    fn with(model: Model) -> Session {
        Session {
            model: Rc::new(model),
            tokenizer: None,
            last: Rc::default(),
            last_request: Rc::default(),
            #[cfg(feature = "gpu")]
            gpu: Rc::default(),
            generator: None,
            step_logits: Vec::new(),
        }
    }

    fn piece(&self, id: u32) -> String {
        self.tokenizer.as_ref().map_or_else(|| id.to_string(), |t| t.id_to_piece(id))
    }

    /// Whether YaRN changes the frequencies when turned on for this model (its context must exceed YaRN's original one).
    fn yarn(&self, on: bool) -> bool {
        on && yarn_active(&Config { inference_rope_scaling: true, ..self.model.config.clone() })
    }

    fn check_positions(&self, n: usize) -> Result<(), JsError> {
        let limit = self.model.config.max_position_embeddings.min(MAX_TOKENS);
        if n == 0 || n > limit {
            return Err(JsError::new(&format!("positions must be between 1 and {limit}, not {n}")));
        }
        Ok(())
    }

    fn tokenizer(&self) -> Result<&Tokenizer, JsError> {
        self.tokenizer.as_ref().ok_or_else(|| JsError::new("no tokenizer loaded"))
    }
}

/// One tensor of `compareGpuCpu`: the contract's measure, max |gpu - cpu| / max |cpu| over the finite
/// entries; `problem` says when a NaN or a different -inf pattern makes the two disagree outright.
#[cfg(feature = "gpu")]
#[derive(Serialize)]
struct TensorDiff {
    name: String,
    rel: f32,
    problem: Option<String>,
}

#[cfg(feature = "gpu")]
#[derive(Serialize)]
struct GpuCheck {
    tensors: Vec<TensorDiff>,
    worst: Option<TensorDiff>,
    adapter: String,
    gpu_ms: f64,
    cpu_ms: f64,
}

#[cfg(feature = "gpu")]
fn tensor_diff(name: &str, gpu: &[f32], cpu: &[f32]) -> TensorDiff {
    let problem = |p: String| TensorDiff { name: name.to_string(), rel: f32::MAX, problem: Some(p) };
    if gpu.len() != cpu.len() {
        return problem(format!("{} entries on the GPU, {} on the CPU", gpu.len(), cpu.len()));
    }
    let (mut scale, mut worst) = (0.0f32, 0.0f32);
    for (i, (&a, &b)) in gpu.iter().zip(cpu).enumerate() {
        if a.is_nan() || b.is_nan() {
            return problem(format!("NaN at entry {i}"));
        }
        if a == f32::NEG_INFINITY || b == f32::NEG_INFINITY {
            if a != b {
                return problem(format!("-inf pattern differs at entry {i}"));
            }
        } else {
            scale = scale.max(b.abs());
            worst = worst.max((a - b).abs());
        }
    }
    TensorDiff { name: name.to_string(), rel: worst / scale.max(1e-30), problem: None }
}

#[cfg(feature = "gpu")]
fn gpu_err(e: Error) -> JsValue {
    JsError::new(&e.to_string()).into()
}

/// The WebGPU path: the same trace as `run`, computed by `gpu::GpuModel`. The calls return Promises
/// that reject with an Error (no adapter, device lost, validation) and leave the CPU path untouched.
#[cfg(feature = "gpu")]
#[wasm_bindgen]
impl Session {
    /// Opens WebGPU and uploads the model's weights; resolves to the adapter's name.
    #[wasm_bindgen(js_name = enableGpu)]
    pub fn enable_gpu(&self) -> js_sys::Promise {
        let (model, slot) = (self.model.clone(), self.gpu.clone());
        wasm_bindgen_futures::future_to_promise(async move {
            let gpu = crate::gpu::GpuModel::new(&model).await.map_err(gpu_err)?;
            let adapter = JsValue::from_str(gpu.adapter());
            *slot.borrow_mut() = Some(Rc::new(gpu));
            Ok(adapter)
        })
    }

    /// Drops the GPU's copy of the model (after a failure, or when the page picks the CPU).
    #[wasm_bindgen(js_name = disableGpu)]
    pub fn disable_gpu(&self) {
        self.gpu.borrow_mut().take();
    }

    #[wasm_bindgen(js_name = gpuEnabled)]
    pub fn gpu_enabled(&self) -> bool {
        self.gpu.borrow().is_some()
    }

    /// `run` on the GPU: resolves to the same metadata with `backend: "webgpu"`; the trace becomes
    /// the last run's, served by `tensor(name)`.
    #[wasm_bindgen(js_name = runGpu)]
    pub fn run_gpu(&self, request: JsValue) -> js_sys::Promise {
        let (gpu, last, last_request) = (self.gpu.borrow().clone(), self.last.clone(), self.last_request.clone());
        wasm_bindgen_futures::future_to_promise(async move {
            let gpu = gpu.ok_or_else(|| JsValue::from(JsError::new("WebGPU is not enabled")))?;
            let req: RunRequest = from_js(request, "run request").map_err(JsValue::from)?;
            let opts = req.options().map_err(gpu_err)?;
            let t0 = now_ms();
            let out = gpu.trace(&req.ids, req.attention_mask.as_deref(), req.prefix_len, &opts, req.selection()).await.map_err(gpu_err)?;
            let ms = now_ms() - t0;
            *last.borrow_mut() = out.trace;
            *last_request.borrow_mut() = Some(req);
            let last = last.borrow();
            to_js(&RunResult { entries: &last.entries, backend: "webgpu", ms, flash: None, cache_len: 0, cache_bytes: 0 }).map_err(JsValue::from)
        })
    }

    /// Runs `request` on the GPU and on the CPU (neither becomes the last run) and compares every
    /// tensor: `{tensors: [{name, rel, problem}], worst, adapter, gpu_ms, cpu_ms}`.
    #[wasm_bindgen(js_name = compareGpuCpu)]
    pub fn compare_gpu_cpu(&self, request: JsValue) -> js_sys::Promise {
        let (gpu, model) = (self.gpu.borrow().clone(), self.model.clone());
        wasm_bindgen_futures::future_to_promise(async move {
            let gpu = gpu.ok_or_else(|| JsValue::from(JsError::new("WebGPU is not enabled")))?;
            let req: RunRequest = from_js(request, "run request").map_err(JsValue::from)?;
            let opts = req.options().map_err(gpu_err)?;
            let (ids, mask) = (&req.ids, req.attention_mask.as_deref());
            let t0 = now_ms();
            let g = gpu.trace(ids, mask, req.prefix_len, &opts, req.selection()).await.map_err(gpu_err)?;
            let t1 = now_ms();
            let c = model.trace(ids, mask, req.prefix_len, &opts, req.selection()).map_err(gpu_err)?;
            let t2 = now_ms();
            let mut tensors = Vec::with_capacity(c.trace.entries.len());
            for ce in &c.trace.entries {
                tensors.push(match g.trace.get(&ce.name) {
                    Some(ge) => tensor_diff(&ce.name, &ge.data, &ce.data),
                    None => TensorDiff { name: ce.name.clone(), rel: f32::MAX, problem: Some("not recorded on the GPU".into()) },
                });
            }
            let worst = tensors.iter().max_by(|a, b| a.rel.total_cmp(&b.rel)).map(|w| TensorDiff { name: w.name.clone(), rel: w.rel, problem: w.problem.clone() });
            to_js(&GpuCheck { tensors, worst, adapter: gpu.adapter().to_string(), gpu_ms: t1 - t0, cpu_ms: t2 - t1 }).map_err(JsValue::from)
        })
    }
}

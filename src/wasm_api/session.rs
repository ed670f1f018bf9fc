//! The Session bridge: a `Session` owns a model (seeded random weights or a user's checkpoint) and a
//! tokenizer, runs traced forward calls and decoding steps, and hands tensors to JS as Float32Array by
//! contract name. The last run's trace and request stay for `tensor`, `flashRecord` and `headRoles`.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Float32Array;
use ndarray::ArrayView3;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use super::memory::config_view;
use super::{expect_len, from_js, js, now_ms, to_js};
use crate::analysis::head_roles::{self, HeadRole, Stretch};
use crate::analysis::{circuit, induction, patching};
use crate::model::attention::MaskSpec;
use crate::model::generate::{draw, top_tokens, Generator, Sampling};
use crate::model::{AttentionPath, FlashProbe, Interventions, Model, RunOptions};
use crate::tokenizer::Tokenizer;
use crate::trace::{Recorder, Selection, Trace};
use crate::weights;
use crate::{Config, Error};

/// What `run` takes from JS.
#[derive(Clone, Deserialize)]
#[serde(default)]
pub(super) struct RunRequest {
    pub(super) ids: Vec<u32>,
    pub(super) attention_mask: Option<Vec<u8>>,
    pub(super) prefix_len: usize,
    pub(super) causal: bool,
    pub(super) layers: Option<Vec<usize>>,
    pub(super) heads: Option<Vec<usize>>,
    /// "auto", "naive" or "flash".
    pub(super) attention: String,
    pub(super) tile: usize,
    pub(super) probe: Option<FlashProbe>,
    /// [[layer, head], …]: heads knocked out (their attn.context zeroed before o_proj).
    pub(super) ablate: Vec<(usize, usize)>,
    /// Record `layers.{l}.logit_lens`.
    #[serde(rename = "logitLens")]
    pub(super) logit_lens: bool,
    /// Record `layers.{l}.attn.head_logit`, toward `targetToken` (null: each position's top-1).
    #[serde(rename = "headLogit")]
    pub(super) head_logit: bool,
    #[serde(rename = "targetToken")]
    pub(super) target_token: Option<u32>,
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
            ablate: Vec::new(),
            logit_lens: false,
            head_logit: false,
            target_token: None,
        }
    }
}

impl RunRequest {
    pub(super) fn options(&self) -> Result<RunOptions, Error> {
        let path = match self.attention.as_str() {
            "auto" => AttentionPath::Auto,
            "naive" => AttentionPath::Naive,
            "flash" => AttentionPath::Flash { tile: self.tile.max(1) },
            other => return Err(Error::Input(format!("attention must be auto, naive or flash, not '{other}'"))),
        };
        let interventions = Interventions::ablating(self.ablate.clone());
        Ok(RunOptions { causal: self.causal, path, probe: self.probe, interventions })
    }

    pub(super) fn selection(&self) -> Selection {
        Selection {
            layers: self.layers.clone(),
            heads: self.heads.clone(),
            logit_lens: self.logit_lens,
            head_logit: self.head_logit,
            target_token: self.target_token,
            ..Selection::default()
        }
    }
}

/// What `tokenize` takes besides the text.
#[derive(Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct TokenizeOptions {
    /// Start with the model's BOS token.
    bos: bool,
}

#[derive(Serialize)]
pub(super) struct RunResult<'a> {
    pub(super) entries: &'a [crate::trace::Entry],
    pub(super) backend: &'static str,
    pub(super) ms: f64,
    pub(super) flash: Option<crate::model::forward::FlashReport>,
    pub(super) cache_len: usize,
    pub(super) cache_bytes: usize,
    /// Set when `runGpu` ran this request on the CPU instead, and why.
    #[serde(rename = "cpuFallback", skip_serializing_if = "Option::is_none")]
    pub(super) cpu_fallback: Option<String>,
}

#[derive(Serialize)]
struct Candidate {
    id: u32,
    p: f32,
    piece: String,
}

#[derive(Serialize)]
struct SampleView {
    kept: usize,
    probs: Vec<f32>,
    drawn: Candidate,
}

#[derive(Serialize)]
struct HeadRoleView {
    head: usize,
    #[serde(flatten)]
    role: Option<HeadRole>,
    /// A long input's stretches (`head_roles::stretches`), where the role changes along it; absent
    /// where it keeps one role or the input is short.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stretches: Vec<Stretch>,
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

/// `run`'s work, shared with `runGpu`'s fallback: runs `req` on the CPU into `rec` and makes it the last
/// run; the metadata `run` returns, with `cpuFallback` when given.
pub(super) fn run_on_cpu(model: &Model, last: &RefCell<Trace>, last_request: &RefCell<Option<RunRequest>>, req: RunRequest, rec: Recorder, cpu_fallback: Option<String>) -> Result<JsValue, JsValue> {
    let opts = req.options().map_err(js)?;
    // The last run's trace goes first, so two are never held at once (MAX_MEMORY_BYTES counts one).
    *last.borrow_mut() = Trace::default();
    *last_request.borrow_mut() = None;
    let t0 = now_ms();
    let out = model.trace_into(&req.ids, req.attention_mask.as_deref(), req.prefix_len, &opts, rec).map_err(super::js_said)?;
    let ms = now_ms() - t0;
    *last.borrow_mut() = out.trace;
    *last_request.borrow_mut() = Some(req);
    to_js(&RunResult {
        entries: &last.borrow().entries,
        backend: "cpu",
        ms,
        flash: out.flash,
        cache_len: out.cache.len(),
        cache_bytes: out.cache.bytes(),
        cpu_fallback,
    })
    .map_err(JsValue::from)
}

#[wasm_bindgen]
pub struct Session {
    /// Shared with the GPU calls' futures, which outlive any borrow of the Session.
    pub(super) model: Rc<Model>,
    tokenizer: Option<Tokenizer>,
    pub(super) last: Rc<RefCell<Trace>>,
    pub(super) last_request: Rc<RefCell<Option<RunRequest>>>,
    /// The model's weights on the GPU, once `enableGpu` has succeeded.
    #[cfg(feature = "gpu")]
    pub(super) gpu: Rc<RefCell<Option<Rc<crate::gpu::GpuModel>>>>,
    generator: Option<Generator>,
    /// The last decoding step's logits row, for `decodeCheck`.
    step_logits: Vec<f32>,
}

/// A tokenizer.json read before its model exists: while the model's weights are still downloading,
/// so that the reading (a few hundred milliseconds for MiniMind's, in wasm) is not added after them.
/// `Session.useTokenizer` takes it; the reading is the one `setTokenizer` does, for the vocabulary
/// size the model's config.json gives.
#[wasm_bindgen]
pub struct TokenizerRead {
    tokenizer: Tokenizer,
    vocab_size: usize,
}

#[wasm_bindgen]
impl TokenizerRead {
    /// Reads `tokenizer_json` for the model `config_json` describes (refused as `setTokenizer` refuses it).
    pub fn read(tokenizer_json: &str, config_json: &str) -> Result<TokenizerRead, JsValue> {
        let config = Config::from_json(config_json).map_err(super::js_said)?;
        let tokenizer = Tokenizer::for_model(tokenizer_json, config.vocab_size).map_err(super::js_said)?;
        Ok(TokenizerRead { tokenizer, vocab_size: config.vocab_size })
    }
}

#[wasm_bindgen]
impl Session {
    /// A model with seeded random weights for any valid configuration (HF config.json keys).
    pub fn random(config_json: &str, seed: f64) -> Result<Session, JsValue> {
        let config = Config::from_json(config_json).map_err(super::js_said)?;
        let w = weights::random(&config, seed as u64);
        Ok(Session::with(Model::new(config, w)))
    }

    /// A checkpoint: config.json text and model.safetensors bytes (f32, f16 or bf16); without a
    /// `qk_norm` key in config.json, the checkpoint's tensors decide it (see `weights::load_checkpoint`).
    #[wasm_bindgen(js_name = fromCheckpoint)]
    pub fn from_checkpoint(config_json: &str, safetensors: &[u8]) -> Result<Session, JsValue> {
        let (config, w) = weights::load_checkpoint(config_json, safetensors).map_err(super::js_said)?;
        Ok(Session::with(Model::new(config, w)))
    }

    /// A GGUF file (llama, qwen2, qwen3; F32 to Q6_K), with the tokenizer its metadata carries.
    #[wasm_bindgen(js_name = fromGguf)]
    pub fn from_gguf(bytes: &[u8]) -> Result<Session, JsValue> {
        let loaded = crate::gguf::load(bytes).map_err(super::js_said)?;
        let tokenizer = Tokenizer::for_model(&loaded.tokenizer_json, loaded.config.vocab_size).map_err(super::js_said)?;
        let mut session = Session::with(Model::new(loaded.config, loaded.weights));
        session.tokenizer = Some(tokenizer);
        Ok(session)
    }

    /// Loads a tokenizer.json; refused when it has more ids than the model's vocabulary.
    #[wasm_bindgen(js_name = setTokenizer)]
    pub fn set_tokenizer(&mut self, tokenizer_json: &str) -> Result<(), JsValue> {
        let t = Tokenizer::for_model(tokenizer_json, self.model.config.vocab_size).map_err(super::js_said)?;
        self.tokenizer = Some(t);
        Ok(())
    }

    /// Takes a tokenizer read ahead of this model (`TokenizerRead`), as `setTokenizer` would have read
    /// it: refused, and the tokenizer dropped, when it was read for another vocabulary size.
    #[wasm_bindgen(js_name = useTokenizer)]
    pub fn use_tokenizer(&mut self, read: TokenizerRead) -> Result<(), JsError> {
        if read.vocab_size != self.model.config.vocab_size {
            return Err(JsError::new(&format!("the tokenizer was read for {} ids, the model has {}", read.vocab_size, self.model.config.vocab_size)));
        }
        self.tokenizer = Some(read.tokenizer);
        Ok(())
    }

    pub fn config(&self) -> Result<JsValue, JsError> {
        config_view(&self.model.config)
    }

    /// `{ids, pieces, bytes, chars, split, special}`: each token as read in the sentence, a character
    /// cut over several tokens shown in each with its part (昨¹ 昨²), the token's bytes in hex, and
    /// whether it is a special token (tokenizer.rs). `options.bos`: the config's `bos_token_id` first,
    /// as MiniMind trains; refused for a model whose config names none.
    pub fn tokenize(&self, text: &str, options: JsValue) -> Result<JsValue, JsValue> {
        let options: TokenizeOptions = if options.is_undefined() || options.is_null() { TokenizeOptions::default() } else { from_js(options, "tokenize options")? };
        let tokenizer = self.tokenizer()?;
        let enc = if options.bos {
            let bos = self.model.config.bos_token_id.ok_or_else(|| JsError::new("this model's config.json has no bos_token_id, so no text can start with BOS"))?;
            tokenizer.encode_with_bos(text, bos)
        } else {
            tokenizer.encode(text)
        };
        Ok(to_js(&enc.map_err(super::js_said)?)?)
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

    /// What sampling settings (`{temperature, top_k, top_p, seed}`, MiniMind's generate) make of one
    /// logits row: `{kept, probs, drawn: {id, p, piece}}`, where `kept` is how many tokens can still
    /// be drawn, `probs` the probability of each of `ids` after the settings (0 where they are cut),
    /// and `drawn` the token a decoding run with these settings would pick first.
    #[wasm_bindgen(js_name = sampleTokens)]
    pub fn sample_tokens(&self, logits: &[f32], sampling: JsValue, ids: Vec<u32>) -> Result<JsValue, JsValue> {
        expect_len("logits", logits.len(), self.model.config.vocab_size, "one row of [T, V]")?;
        let sampling: Sampling = from_js(sampling, "sampling")?;
        let d = draw(logits, &sampling, &ids).map_err(js)?;
        let drawn = Candidate { id: d.drawn.0, p: d.drawn.1, piece: self.piece(d.drawn.0) };
        Ok(to_js(&SampleView { kept: d.kept, probs: d.probs, drawn })?)
    }

    /// One traced forward call; see RunRequest. Returns entry metadata; tensors via `tensor(name)`.
    /// `progress`, when given, is called as progress(layersDone, layersInAll) after each layer.
    pub fn run(&mut self, request: JsValue, progress: Option<js_sys::Function>) -> Result<JsValue, JsValue> {
        let req: RunRequest = from_js(request, "run request")?;
        let mut rec = Recorder::new(req.selection());
        if let Some(f) = progress {
            rec = rec.with_progress(move |done, total| {
                let _ = f.call2(&JsValue::NULL, &JsValue::from(done as u32), &JsValue::from(total as u32));
            });
        }
        run_on_cpu(&self.model, &self.last, &self.last_request, req, rec, None)
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
    /// scores: {previous, current, first, spread, rows}, stretches?: [{from, to, role, score, strong,
    /// scores}]}]}]` for every layer the run recorded; a head is `{head}` alone when the input is too
    /// short to tell. `stretches` is there for a long input where the head's role changes along it.
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
                let mut stretches = head_roles::stretches(probs, &mask);
                let heads = heads
                    .into_iter()
                    .zip(measured)
                    .zip(stretches.iter_mut())
                    .map(|((head, s), st)| HeadRoleView { head, role: s.map(|s| s.role()), stretches: if st.len() > 1 { std::mem::take(st) } else { Vec::new() } })
                    .collect();
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
    pub fn generate_start(&mut self, ids: Vec<u32>, sampling: JsValue) -> Result<(), JsValue> {
        let sampling: Sampling = if sampling.is_undefined() || sampling.is_null() { Sampling::default() } else { from_js(sampling, "sampling")? };
        self.generator = Some(Generator::new(&self.model, &ids, sampling).map_err(super::js_said)?);
        Ok(())
    }

    /// One decoding step (the first one prefills the prompt); records `request`'s layers and heads.
    #[wasm_bindgen(js_name = generateStep)]
    pub fn generate_step(&mut self, request: JsValue) -> Result<JsValue, JsValue> {
        let req: RunRequest = if request.is_undefined() || request.is_null() { RunRequest::default() } else { from_js(request, "step request")? };
        let opts = req.options().map_err(js)?;
        let gen = self.generator.as_mut().ok_or_else(|| JsError::new("call generateStart first"))?;
        let t0 = now_ms();
        // A step past the model's positions is said for the page (`Error::Budget`'s pastPositions).
        let step = gen.step(&self.model, &opts, req.selection()).map_err(super::js_said)?;
        let ms = now_ms() - t0;
        *self.last.borrow_mut() = step.trace;
        let last = self.last.borrow();
        self.step_logits = last.get("logits").map_or_else(Vec::new, |e| {
            let v = self.model.config.vocab_size;
            e.data[e.data.len() - v..].to_vec()
        });
        let top = step.top.iter().map(|&(id, p)| Candidate { id, p, piece: self.piece(id) }).collect();
        let gen = self.generator.as_ref().expect("set above");
        Ok(to_js(&StepResult {
            token: step.token,
            piece: self.piece(step.token),
            ids: &gen.ids,
            top,
            entries: &last.entries,
            ms,
            cache_len: gen.cache().len(),
            cache_bytes: gen.cache().bytes(),
        })?)
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

    /// The induction probe (`analysis::induction`): `{length, seed, first}` random ordinary tokens of
    /// the tokenizer (readable alone: no piece of a character, no control character), twice, run on their own (the last run stays the last run); returns
    /// `{ids, length, layers: [{layer, heads: [{head, induction, duplicate, rows, role, score, strong,
    /// positions}]}]}`, `positions` being what `headRoles` says of the head on that sequence.
    #[wasm_bindgen(js_name = probeHeads)]
    pub fn probe_heads(&self, request: JsValue) -> Result<JsValue, JsValue> {
        let req: induction::ProbeRequest = if request.is_undefined() || request.is_null() { Default::default() } else { from_js(request, "probe request")? };
        // Tokens a reader can read on the probe's axes, where the tokenizer has enough of them.
        let ordinary = self.tokenizer.as_ref().map(|t| Some(t.readable_ids()).filter(|r| r.len() >= req.length).unwrap_or_else(|| t.ordinary_ids()));
        Ok(to_js(&induction::probe(&self.model, ordinary.as_deref(), &req).map_err(super::js_said)?)?)
    }

    /// Activation patching (`analysis::patching`) on `{clean, corrupt, target, against}` (ids of equal
    /// length; token ids), run on their own (the last run stays the last run). `progress(done, total)`
    /// after each partial run. Returns `{clean_metric, corrupt_metric, layers, positions, heads,
    /// resid_out: Float32Array [L·T], head_context: Float32Array [L·nH]}`; a refusal has `code`
    /// (`patch.lengths`, `patch.token`, `patch.tooLong`, or the forward's own).
    pub fn patch(&self, request: JsValue, progress: Option<js_sys::Function>) -> Result<JsValue, JsValue> {
        #[derive(Deserialize)]
        struct PatchRequest {
            clean: Vec<u32>,
            corrupt: Vec<u32>,
            target: u32,
            against: u32,
        }
        let req: PatchRequest = from_js(request, "patch request")?;
        let report = |done: usize, total: usize| {
            if let Some(f) = progress.as_ref() {
                let _ = f.call2(&JsValue::NULL, &JsValue::from(done as u32), &JsValue::from(total as u32));
            }
        };
        let p = patching::patch(&self.model, &req.clean, &req.corrupt, req.target, req.against, report).map_err(super::js_said)?;
        #[derive(Serialize)]
        struct Sizes {
            clean_metric: f32,
            corrupt_metric: f32,
            layers: usize,
            positions: usize,
            heads: usize,
        }
        let out = to_js(&Sizes { clean_metric: p.clean_metric, corrupt_metric: p.corrupt_metric, layers: p.layers, positions: p.positions, heads: p.heads })?;
        let arrays = super::typed_fields(&[("resid_out", &p.resid_out), ("head_context", &p.head_context)])?;
        js_sys::Object::assign(&out.clone().into(), &arrays);
        Ok(out)
    }

    /// "Find the circuit" (`analysis::circuit`) on `{ids, target?, k?}` (k: 3 by default): the heads
    /// that push the answer most by direct logit attribution, its probability with them knocked out and
    /// with as many least-pushing heads knocked out, and the logit lens at the last position; runs on
    /// their own (the last run stays the last run). Returns `{target, probability, heads: [{layer, head,
    /// push}], knocked_out, control_heads, control_knocked_out, lens: [{layer, rank, probability}],
    /// answer_layer}`.
    #[wasm_bindgen(js_name = findCircuit)]
    pub fn find_circuit(&self, request: JsValue) -> Result<JsValue, JsValue> {
        #[derive(Deserialize)]
        struct CircuitRequest {
            ids: Vec<u32>,
            #[serde(default)]
            target: Option<u32>,
            #[serde(default)]
            k: Option<usize>,
        }
        let req: CircuitRequest = from_js(request, "circuit request")?;
        Ok(to_js(&circuit::find(&self.model, &req.ids, req.target, req.k.unwrap_or(3)).map_err(super::js_said)?)?)
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


    fn tokenizer(&self) -> Result<&Tokenizer, JsError> {
        self.tokenizer.as_ref().ok_or_else(|| JsError::new("no tokenizer loaded"))
    }
}

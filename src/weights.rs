//! Model weights: MiniMind / Hugging Face names, f32 in memory.
//! Loading (safetensors f32/f16/bf16) and seeded random initialisation live here.

use std::collections::{BTreeMap, HashMap, HashSet};

use half::{bf16, f16};
use ndarray::{Array1, ArrayBase, ArrayD, Data, Dimension, Ix1, Ix2, IxDyn};
use safetensors::tensor::{Metadata, TensorView};
use safetensors::{Dtype, SafeTensors};

use crate::model::linear::Weight;
use crate::{Config, Error, Said};

/// One decoder layer. Linear weights keep nn.Linear's `[out, in]` layout: y = x W^T.
#[derive(Clone, Debug)]
pub struct LayerWeights {
    pub input_layernorm: Array1<f32>,          // [H]
    pub q_proj: Weight,                        // [nH*d, H]
    pub k_proj: Weight,                        // [nKV*d, H]
    pub v_proj: Weight,                        // [nKV*d, H]
    pub o_proj: Weight,                        // [H, nH*d]
    pub q_norm: Option<Array1<f32>>,           // [d]; None for Llama-style models
    pub k_norm: Option<Array1<f32>>,           // [d]
    /// q/k/v_proj's biases (Qwen2), added after the product; None for MiniMind and Llama.
    pub qkv_bias: Option<[Array1<f32>; 3]>,    // [nH*d], [nKV*d], [nKV*d]
    pub post_attention_layernorm: Array1<f32>, // [H]
    pub mlp: Mlp,
}

/// MiniMindBlock's `mlp`: `FeedForward(config) if not config.use_moe else MOEFeedForward(config)`.
#[derive(Clone, Debug, PartialEq)]
pub enum Mlp {
    Dense(FeedForward),
    Moe(MoeFeedForward),
}

impl Mlp {
    /// The dense FFN; None for a mixture of experts.
    pub fn dense(&self) -> Option<&FeedForward> {
        match self {
            Mlp::Dense(f) => Some(f),
            Mlp::Moe(_) => None,
        }
    }
}

/// MiniMind's FeedForward (SwiGLU); also each expert of a MOEFeedForward.
#[derive(Clone, Debug, PartialEq)]
pub struct FeedForward {
    pub gate_proj: Weight, // [I, H]
    pub up_proj: Weight,   // [I, H]
    pub down_proj: Weight, // [H, I]
}

/// MiniMind's MOEFeedForward: the router and the experts (no shared expert).
#[derive(Clone, Debug, PartialEq)]
pub struct MoeFeedForward {
    pub gate: Weight,               // [E, H], the router `mlp.gate`
    pub experts: Vec<FeedForward>, // E experts, intermediate size moe_intermediate_size
}

#[derive(Clone, Debug)]
pub struct Weights {
    pub embed_tokens: Weight,         // [V, H]; packed for linear (in wasm32) only when it is lm_head too
    pub layers: Vec<LayerWeights>,
    pub norm: Array1<f32>,            // [H]
    /// `None` when tied: lm_head is embed_tokens.
    pub lm_head: Option<Weight>,      // [V, H]
}

impl Weights {
    pub fn lm_head(&self) -> &Weight {
        self.lm_head.as_ref().unwrap_or(&self.embed_tokens)
    }
}

/// How `random` fills a tensor. Loading ignores it.
#[derive(Clone, Copy)]
enum Init {
    /// RMSNorm weights: exactly 1, as a fresh model has them.
    Ones,
    /// Biases: 0, as a fresh nn.Linear's are not but a random model's need not move anything.
    Zeros,
    /// Linear and embedding matrices: uniform with std 1 / sqrt(fan_in) (see `random`).
    FanIn(usize),
}

/// One tensor of MiniMind's layout.
pub(crate) struct Slot {
    pub(crate) name: String,
    pub(crate) shape: Vec<usize>,
    init: Init,
}

/// MiniMind's layout for `config` in checkpoint order: the one place where the names and shapes
/// are written down. Loading checks a file against it; `assemble` builds `Weights` from it.
pub(crate) fn layout(config: &Config) -> Vec<Slot> {
    let (h, d, i, v) = (config.hidden_size, config.head_dim(), config.intermediate_size(), config.vocab_size);
    let (q_out, kv_out) = (config.num_attention_heads * d, config.num_key_value_heads * d);
    let vector = |name: String, len: usize| Slot { name, shape: vec![len], init: Init::Ones };
    let matrix = |name: String, rows: usize, cols: usize| Slot { name, shape: vec![rows, cols], init: Init::FanIn(cols) };
    let mut slots = vec![matrix("model.embed_tokens.weight".into(), v, h)];
    for l in 0..config.num_hidden_layers {
        let name = |suffix: &str| format!("model.layers.{l}.{suffix}");
        slots.push(vector(name("input_layernorm.weight"), h));
        slots.push(matrix(name("self_attn.q_proj.weight"), q_out, h));
        slots.push(matrix(name("self_attn.k_proj.weight"), kv_out, h));
        slots.push(matrix(name("self_attn.v_proj.weight"), kv_out, h));
        if config.attention_bias {
            let bias = |name: String, len: usize| Slot { name, shape: vec![len], init: Init::Zeros };
            slots.push(bias(name("self_attn.q_proj.bias"), q_out));
            slots.push(bias(name("self_attn.k_proj.bias"), kv_out));
            slots.push(bias(name("self_attn.v_proj.bias"), kv_out));
        }
        slots.push(matrix(name("self_attn.o_proj.weight"), h, q_out));
        if config.qk_norm {
            slots.push(vector(name("self_attn.q_norm.weight"), d));
            slots.push(vector(name("self_attn.k_norm.weight"), d));
        }
        slots.push(vector(name("post_attention_layernorm.weight"), h));
        let feed_forward = |prefix: String, i: usize| {
            [("gate_proj", i, h), ("up_proj", i, h), ("down_proj", h, i)]
                .map(|(proj, rows, cols)| matrix(name(&format!("{prefix}{proj}.weight")), rows, cols))
        };
        if config.use_moe {
            // PyTorch's state_dict order: the router (registered first), then the experts.
            slots.push(matrix(name("mlp.gate.weight"), config.num_experts, h));
            for e in 0..config.num_experts {
                slots.extend(feed_forward(format!("mlp.experts.{e}."), config.moe_intermediate_size()));
            }
        } else {
            slots.extend(feed_forward("mlp.".into(), i));
        }
    }
    slots.push(vector("model.norm.weight".into(), h));
    if !config.tie_word_embeddings {
        slots.push(matrix("lm_head.weight".into(), v, h));
    }
    slots
}

/// Builds `Weights` from `layout(config)`, asking `fetch(slot)` for each tensor's row-major data,
/// in layout order. Loading and random initialisation both build `Weights` through here.
pub(crate) fn assemble<F>(config: &Config, mut fetch: F) -> Result<Weights, Error>
where
    F: FnMut(&Slot) -> Result<Vec<f32>, Error>,
{
    let mut slots = layout(config).into_iter();
    // The next slot of the layout, which must be the one named: the fields below follow its order.
    let mut next = |suffix: &str| -> Result<ArrayD<f32>, Error> {
        let slot = slots.next().expect("the layout has a slot for every field");
        assert!(slot.name.ends_with(suffix), "layout order: {} where {suffix} was expected", slot.name);
        let data = fetch(&slot)?;
        Ok(ArrayD::from_shape_vec(IxDyn(&slot.shape), data).expect("fetch returns one value per element"))
    };
    let vector = |a: ArrayD<f32>| a.into_dimensionality::<Ix1>().expect("a vector slot");
    let matrix = |a: ArrayD<f32>| a.into_dimensionality::<Ix2>().expect("a matrix slot");

    let embed = matrix(next("embed_tokens.weight")?);
    let embed_tokens = if config.tie_word_embeddings { Weight::new(embed) } else { Weight::unpacked(embed) };
    let mut layers = Vec::with_capacity(config.num_hidden_layers);
    for _ in 0..config.num_hidden_layers {
        let feed_forward = |next: &mut dyn FnMut(&str) -> Result<ArrayD<f32>, Error>| -> Result<FeedForward, Error> {
            Ok(FeedForward {
                gate_proj: Weight::new(matrix(next("gate_proj.weight")?)),
                up_proj: Weight::new(matrix(next("up_proj.weight")?)),
                down_proj: Weight::new(matrix(next("down_proj.weight")?)),
            })
        };
        layers.push(LayerWeights {
            input_layernorm: vector(next("input_layernorm.weight")?),
            q_proj: Weight::new(matrix(next("q_proj.weight")?)),
            k_proj: Weight::new(matrix(next("k_proj.weight")?)),
            v_proj: Weight::new(matrix(next("v_proj.weight")?)),
            qkv_bias: if config.attention_bias {
                Some([vector(next("q_proj.bias")?), vector(next("k_proj.bias")?), vector(next("v_proj.bias")?)])
            } else {
                None
            },
            o_proj: Weight::new(matrix(next("o_proj.weight")?)),
            q_norm: if config.qk_norm { Some(vector(next("q_norm.weight")?)) } else { None },
            k_norm: if config.qk_norm { Some(vector(next("k_norm.weight")?)) } else { None },
            post_attention_layernorm: vector(next("post_attention_layernorm.weight")?),
            mlp: if config.use_moe {
                let gate = Weight::new(matrix(next("mlp.gate.weight")?));
                let experts = (0..config.num_experts).map(|_| feed_forward(&mut next)).collect::<Result<_, _>>()?;
                Mlp::Moe(MoeFeedForward { gate, experts })
            } else {
                Mlp::Dense(feed_forward(&mut next)?)
            },
        });
    }
    let norm = vector(next("model.norm.weight")?);
    let lm_head = if config.tie_word_embeddings { None } else { Some(Weight::new(matrix(next("lm_head.weight")?))) };
    Ok(Weights { embed_tokens, layers, norm, lm_head })
}

/// A checkpoint's table of contents: tensor name -> (dtype, shape), from its header alone.
type Listing = BTreeMap<String, (Dtype, Vec<usize>)>;

/// Checks a checkpoint's listing against `layout(config)`, before any tensor data is read: every
/// tensor the config implies must be there with exactly its shape, stored as F32, F16 or BF16, and
/// nothing else may be; Q/K norm weights are there exactly when `config.qk_norm` is set. Each error
/// names the tensor. With `tie_word_embeddings` an `lm_head.weight` in the file is ignored, as
/// Hugging Face does (it re-ties lm_head to embed_tokens after loading): some exports keep the
/// shared tensor twice.
fn check_listing(config: &Config, listing: &Listing) -> Result<(), Error> {
    match (config.qk_norm, has_qk_norm(listing)) {
        (true, false) => {
            return Err(said(
                "qkNormMissing",
                vec![],
                "the config has qk_norm = true (MiniMind-3 / Qwen3 layout) but the checkpoint has no \
                 self_attn.q_norm / k_norm weights, like a Llama-layout checkpoint; set \"qk_norm\": false \
                 in config.json"
                    .into(),
            ))
        }
        (false, true) => {
            return Err(said(
                "qkNormExtra",
                vec![],
                "the checkpoint has self_attn.q_norm / k_norm weights but the config has qk_norm = false; \
                 set \"qk_norm\": true in config.json"
                    .into(),
            ))
        }
        _ => {}
    }
    let slots = layout(config);
    for Slot { name, shape, .. } in &slots {
        let (dtype, found) = listing
            .get(name)
            .ok_or_else(|| {
                said(
                    "missingTensor",
                    vec![("name", name.clone()), ("shape", format!("{shape:?}"))],
                    format!("missing tensor {name} (expected shape {shape:?})"),
                )
            })?;
        if found != shape {
            return Err(said(
                "tensorShape",
                vec![("name", name.clone()), ("found", format!("{found:?}")), ("expected", format!("{shape:?}"))],
                format!("tensor {name} has shape {found:?}, expected {shape:?}"),
            ));
        }
        if !matches!(dtype, Dtype::F32 | Dtype::F16 | Dtype::BF16) {
            return Err(said(
                "tensorDtype",
                vec![("name", name.clone()), ("dtype", dtype.to_string())],
                format!("tensor {name} is stored as {dtype}; attnscope reads F32, F16 and BF16"),
            ));
        }
    }

    let used: HashSet<&str> = slots.iter().map(|s| s.name.as_str()).collect();
    // Older Hugging Face checkpoints also save RoPE's inverse frequencies (`…rotary_emb.inv_freq`), a
    // buffer the model computes from rope_theta, not a weight: left out, as transformers does.
    let ignored = |name: &str| (config.tie_word_embeddings && name == "lm_head.weight") || name.ends_with(".rotary_emb.inv_freq");
    // BTreeMap keys come sorted, so the first unexpected name is always the same one.
    let unexpected: Vec<&str> = listing.keys().map(String::as_str).filter(|n| !used.contains(n) && !ignored(n)).collect();
    if let Some(first) = unexpected.first() {
        let beyond_last_layer = first
            .strip_prefix("model.layers.")
            .and_then(|rest| rest.split('.').next()?.parse::<usize>().ok())
            .is_some_and(|l| l >= config.num_hidden_layers);
        let hint = if beyond_last_layer {
            format!(" (the config has num_hidden_layers = {})", config.num_hidden_layers)
        } else {
            String::new()
        };
        let others = unexpected.len() - 1;
        let more = match others {
            0 => String::new(),
            n => format!(", and {n} more"),
        };
        let (key, mut args) = match beyond_last_layer {
            true => ("unexpectedLayer", vec![("layers", config.num_hidden_layers.to_string())]),
            false => ("unexpectedTensor", vec![]),
        };
        args.extend([("name", first.to_string()), ("others", others.to_string())]);
        return Err(said(key, args, format!("unexpected tensor {first}{hint}{more}")));
    }
    Ok(())
}

/// Reads a safetensors checkpoint in the Hugging Face layout MiniMind saves
/// (docs/minimind-semantics.md, "Weight names"). F32, F16 and BF16 are read into f32.
/// The file must pass `check_listing`; a NaN or inf value is an error that names the tensor and
/// the element.
pub fn load_safetensors(config: &Config, bytes: &[u8]) -> Result<Weights, Error> {
    let config = config.clone().resolve()?;
    let file = open(bytes)?;
    let listing = file.tensors().into_iter().map(|(name, view)| (name, (view.dtype(), view.shape().to_vec()))).collect();
    check_listing(&config, &listing)?;
    assemble(&config, |Slot { name, shape, .. }| {
        let data = to_f32(&file.tensor(name).expect("check_listing found it"));
        if let Some(at) = data.iter().position(|x| !x.is_finite()) {
            let (value, index) = (data[at], unravel(at, shape));
            return Err(said(
                "nonFinite",
                vec![("name", name.clone()), ("value", value.to_string()), ("index", format!("{index:?}"))],
                format!("tensor {name} holds {value} at index {index:?}"),
            ));
        }
        Ok(data)
    })
}

/// An `Error::Checkpoint`: a refusal the page says in the reader's language (see `Said`).
fn said(key: &'static str, args: Vec<(&'static str, String)>, text: String) -> Error {
    Error::Checkpoint(Said { key, args, text })
}

/// A file that is not a readable safetensors file; `key` (under `unreadable.`) and `args` say why,
/// `why` in English.
fn unreadable(key: &'static str, args: Vec<(&'static str, String)>, why: impl std::fmt::Display) -> Error {
    let text = format!("the checkpoint is not a readable safetensors file (truncated or corrupt?): {why}");
    Error::Checkpoint(Said { key, args, text })
}

/// Parses the header, wrapping the safetensors crate's own words in a sentence.
fn open(bytes: &[u8]) -> Result<SafeTensors<'_>, Error> {
    SafeTensors::deserialize(bytes).map_err(|e| unreadable("unreadable", vec![("why", e.to_string())], e))
}

/// Why a header the safetensors crate refuses is at fault, in the page's words where one entry or one
/// pair of entries is: an offset past what this machine can address; an entry that is not {dtype,
/// shape, data_offsets} of a known dtype, or whose shape needs more bytes than a file can hold or
/// other than its offsets span; two tensors whose bytes overlap or leave a gap between them (named
/// both, in the file's order, not only the one where the crate's walk stopped). None where the fault
/// is none of these.
fn culprit(header: &str) -> Option<Error> {
    let entries: serde_json::Map<String, serde_json::Value> = serde_json::from_str(header).ok()?;
    let mut spans = Vec::new();
    for (name, entry) in entries.into_iter().filter(|(name, _)| name != "__metadata__") {
        let past = entry["data_offsets"].as_array().and_then(|o| o.iter().find(|v| v.as_u64().is_some_and(|v| usize::try_from(v).is_err())).cloned());
        if let Some(v) = past {
            let text = format!("its header gives tensor {name} the data offset {v}, past what this machine can address");
            return Some(unreadable("unreadable.offsetTooBig", vec![("name", name), ("offset", v.to_string())], text));
        }
        // A dimension that is no whole number this machine can count to (−1, 2^32 on wasm32), said as
        // that rather than in the JSON parser's words ("expected usize").
        let bad_dim = entry["shape"].as_array().and_then(|s| s.iter().find(|v| !v.as_u64().is_some_and(|d| usize::try_from(d).is_ok())).cloned());
        if let Some(v) = bad_dim {
            let text = format!("its header gives tensor {name} a dimension of {v}; a dimension is a whole number from 0 to {}", usize::MAX);
            return Some(unreadable("unreadable.badDim", vec![("name", name), ("dim", v.to_string()), ("max", usize::MAX.to_string())], text));
        }
        let info = match serde_json::from_value::<safetensors::tensor::TensorInfo>(entry) {
            Ok(info) => info,
            Err(e) => return Some(bad_tensor(name, e.to_string())),
        };
        let bits = info.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).and_then(|n| n.checked_mul(info.dtype.bitsize()));
        let (start, end) = info.data_offsets;
        match bits {
            None => return Some(bad_tensor(name, format!("its shape {:?} has more elements than any file holds", info.shape))),
            Some(bits) if end < start || bits % 8 != 0 || bits / 8 != end - start => {
                let why = format!("its shape {:?} of {:?} needs {} bytes, but its data offsets [{start}, {end}] span {}", info.shape, info.dtype, bits / 8, end.saturating_sub(start));
                return Some(bad_tensor(name, why));
            }
            Some(_) => spans.push((start, end, name)),
        }
    }
    // The tensors' bytes must follow one another from 0, each where the one before it ends.
    spans.sort();
    let mut at = (0, String::new());
    for (start, end, name) in spans {
        if start != at.0 && at.1.is_empty() {
            let text = format!("its first tensor's bytes, {name}'s, start at {start}, not at 0");
            return Some(unreadable("unreadable.startGap", vec![("name", name), ("offset", start.to_string())], text));
        }
        if start != at.0 {
            let key = if start < at.0 { "unreadable.overlap" } else { "unreadable.gap" };
            let text = format!("the bytes of tensors {} and {name} {}", at.1, if start < at.0 { "overlap" } else { "leave a gap between them" });
            return Some(unreadable(key, vec![("a", at.1), ("b", name)], text));
        }
        at = (end, name);
    }
    None
}

fn bad_tensor(name: String, why: String) -> Error {
    let text = format!("its header is not valid: tensor {name}: {why}");
    unreadable("unreadable.badTensor", vec![("name", name), ("why", why)], text)
}

fn has_qk_norm(listing: &Listing) -> bool {
    listing.keys().any(|n| n.ends_with(".self_attn.q_norm.weight") || n.ends_with(".self_attn.k_norm.weight"))
}

/// The data of a tensor `check_listing` accepted (F32, F16 or BF16), in f32.
fn to_f32(view: &TensorView) -> Vec<f32> {
    let bytes = view.data();
    match view.dtype() {
        Dtype::F32 => bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        Dtype::F16 => bytes.chunks_exact(2).map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        Dtype::BF16 => bytes.chunks_exact(2).map(|b| bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        other => unreachable!("check_listing refuses {other}"),
    }
}

/// Flat row-major index -> multi-index, so an error can point at the bad element.
fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (slot, &dim) in index.iter_mut().zip(shape).rev() {
        *slot = flat % dim;
        flat /= dim;
    }
    index
}

/// Seeded random weights for a model nobody trained: deterministic and bit-identical on native and
/// wasm32, so a link with a seed shows the same numbers everywhere.
///
/// Every matrix (embeddings included) is uniform on [-a, a] with a = sqrt(3 / fan_in), i.e. std
/// 1 / sqrt(fan_in): activations keep unit scale through each linear layer, so attention scores
/// q·k / sqrt(d) come out roughly N(0, 1) at any model size, with or without Q/K norm. That gives
/// attention with visible structure that is neither uniform nor one-hot (MiniMind's own init, std
/// 0.02, makes small models' attention almost uniform). Norm weights are 1.
///
/// Each tensor draws from its own SplitMix64 stream keyed by (seed, tensor name), so adding layers
/// or resizing the vocabulary leaves the other tensors unchanged. Only integer arithmetic, exact
/// conversions and correctly rounded f32 `*`, `/` and `sqrt` are used, never ln/cos/exp, whose last
/// bits differ between platforms.
pub fn random(config: &Config, seed: u64) -> Weights {
    assemble(config, |slot| Ok(random_tensor(seed, &slot.name, slot.shape.iter().product(), slot.init)))
        .expect("random weights cannot fail")
}

fn random_tensor(seed: u64, name: &str, len: usize, init: Init) -> Vec<f32> {
    match init {
        Init::Ones => vec![1.0; len],
        Init::Zeros => vec![0.0; len],
        Init::FanIn(fan_in) => {
            let bound = (3.0 / fan_in as f32).sqrt();
            let mut stream = SplitMix64(mix64(seed ^ mix64(fnv1a(name))));
            (0..len)
                .map(|_| {
                    // Top 24 bits -> u in [0, 1) exactly; 2u - 1 is exact too.
                    let u = (stream.next() >> 40) as f32 * (1.0 / 16_777_216.0);
                    (2.0 * u - 1.0) * bound
                })
                .collect()
        }
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough to draw weights.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }
}

fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a, to turn a tensor name into a stream key.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3))
}

/// Writes f32 safetensors in the Hugging Face layout `load_safetensors` reads, with
/// `{"format": "pt"}` metadata as `transformers` writes it. `lm_head.weight` is written only when
/// the config is untied; Q/K norm weights whenever the layers have them.
pub fn to_safetensors(config: &Config, weights: &Weights) -> Vec<u8> {
    fn add<S: Data<Elem = f32>, D: Dimension>(out: &mut Vec<(String, Vec<usize>, Vec<u8>)>, name: String, a: &ArrayBase<S, D>) {
        let bytes = a.iter().flat_map(|x| x.to_le_bytes()).collect();
        out.push((name, a.shape().to_vec(), bytes));
    }
    let mut tensors = Vec::new();
    add(&mut tensors, "model.embed_tokens.weight".into(), &weights.embed_tokens.to_array());
    for (l, layer) in weights.layers.iter().enumerate() {
        let p = format!("model.layers.{l}.");
        add(&mut tensors, format!("{p}input_layernorm.weight"), &layer.input_layernorm);
        add(&mut tensors, format!("{p}self_attn.q_proj.weight"), &layer.q_proj.to_array());
        add(&mut tensors, format!("{p}self_attn.k_proj.weight"), &layer.k_proj.to_array());
        add(&mut tensors, format!("{p}self_attn.v_proj.weight"), &layer.v_proj.to_array());
        if let Some(biases) = &layer.qkv_bias {
            for (proj, bias) in ["q_proj", "k_proj", "v_proj"].iter().zip(biases) {
                add(&mut tensors, format!("{p}self_attn.{proj}.bias"), bias);
            }
        }
        add(&mut tensors, format!("{p}self_attn.o_proj.weight"), &layer.o_proj.to_array());
        if let Some(q_norm) = &layer.q_norm {
            add(&mut tensors, format!("{p}self_attn.q_norm.weight"), q_norm);
        }
        if let Some(k_norm) = &layer.k_norm {
            add(&mut tensors, format!("{p}self_attn.k_norm.weight"), k_norm);
        }
        add(&mut tensors, format!("{p}post_attention_layernorm.weight"), &layer.post_attention_layernorm);
        let feed_forward = |tensors: &mut Vec<_>, prefix: String, f: &FeedForward| {
            add(tensors, format!("{prefix}gate_proj.weight"), &f.gate_proj.to_array());
            add(tensors, format!("{prefix}up_proj.weight"), &f.up_proj.to_array());
            add(tensors, format!("{prefix}down_proj.weight"), &f.down_proj.to_array());
        };
        match &layer.mlp {
            Mlp::Dense(f) => feed_forward(&mut tensors, format!("{p}mlp."), f),
            Mlp::Moe(moe) => {
                add(&mut tensors, format!("{p}mlp.gate.weight"), &moe.gate.to_array());
                for (e, f) in moe.experts.iter().enumerate() {
                    feed_forward(&mut tensors, format!("{p}mlp.experts.{e}."), f);
                }
            }
        }
    }
    add(&mut tensors, "model.norm.weight".into(), &weights.norm);
    if !config.tie_word_embeddings {
        add(&mut tensors, "lm_head.weight".into(), &weights.lm_head().to_array());
    }
    let views = tensors.iter().map(|(name, shape, bytes)| {
        (name.as_str(), TensorView::new(Dtype::F32, shape.clone(), bytes).expect("bytes match the shape"))
    });
    let metadata = HashMap::from([("format".to_owned(), "pt".to_owned())]);
    safetensors::serialize(views, Some(metadata)).expect("an f32 checkpoint serialises")
}

/// The sizes a model.safetensors for `config` can have, in bytes: at least every weight in 2 bytes
/// (f16 / bf16, Q/K norm or not) after the 8-byte header length; at most every weight in f32, plus a
/// tied lm_head stored anyway and the largest header safetensors allows.
pub fn checkpoint_size_range(config: &Config) -> (u64, u64) {
    let fewest = Config { qk_norm: false, ..config.clone() }.weight_count();
    let most = config.weight_count() + config.vocab_size as u64 * config.hidden_size as u64;
    (fewest * 2 + 8, most * 4 + 8 + MAX_HEADER_BYTES)
}

/// The safetensors crate's limit on a header.
const MAX_HEADER_BYTES: u64 = 100_000_000;

/// Refuses, before a byte of it is read, a model.safetensors whose size cannot hold this config's
/// weights: a file cut short, or a config.json that belongs to another model.
pub fn check_checkpoint_size(config: &Config, size: u64) -> Result<(), Error> {
    let (smallest, largest) = checkpoint_size_range(config);
    if size < smallest {
        return Err(said(
            "tooSmall",
            vec![("size", size.to_string()), ("count", config.weight_count().to_string()), ("least", smallest.to_string())],
            format!(
                "model.safetensors is {}, but the {} weights of this config need at least {} even in f16 or bf16: \
                 the file is truncated, or config.json belongs to another model",
                in_units(size),
                config.weight_count(),
                in_units(smallest)
            ),
        ));
    }
    if size > largest {
        return Err(said(
            "tooLarge",
            vec![("size", size.to_string()), ("count", config.weight_count().to_string()), ("most", largest.to_string())],
            format!(
                "model.safetensors is {}, more than the {} weights of this config can take even in f32 ({}): \
                 is config.json the right one?",
                in_units(size),
                config.weight_count(),
                in_units(largest)
            ),
        ));
    }
    Ok(())
}

/// What a tab may hold for its models at once, in bytes: wasm32 addresses 4 GiB, the last GiB of it
/// left to the traces, and the page's own copies count against the same memory.
pub const MAX_LOAD_BYTES: u64 = 3 << 30;

/// Refuses, before a byte of its tensor data is read, a checkpoint the tab could not hold while it
/// loads: its file twice (the page's copy, kept for the next visit and for rebuilding after Cancel or
/// a trap, and the core's, copied into WebAssembly memory to be read), `weights`, what its weights take
/// in the core (`Config::weight_bytes_held`), and `held`, what the tab holds already until the new
/// model replaces it (the model loaded now, its trace, its kept copy). The refusal is a plain
/// sentence: nothing is wrong with the file, only with its size here.
pub fn check_load_budget(file: u64, weights: u64, held: u64) -> Result<(), Said> {
    let need = file.saturating_mul(2).saturating_add(weights).saturating_add(held);
    if need > MAX_LOAD_BYTES {
        let gb = |b: u64| b as f64 / 1e9;
        let args = [("need", need), ("file", file), ("weights", weights), ("held", held), ("most", MAX_LOAD_BYTES)];
        let args = args.iter().map(|&(k, v)| (k, v.to_string())).collect();
        return Err(Said { key: "budget", args, text: format!(
            "this checkpoint needs {:.2} GB to load (its {:.2} GB file twice, the page's copy and the core's, \
             {:.2} GB of f32 weights, and {:.2} GB held for the model loaded now), more than the {:.2} GB \
             a browser tab has for its models",
            gb(need),
            gb(file),
            gb(weights),
            gb(held),
            gb(MAX_LOAD_BYTES)
        ) });
    }
    Ok(())
}

/// A size for a sentence: "35.200 kB", "6.595 MB", "1.200 GB" (decimal units).
fn in_units(bytes: u64) -> String {
    let b = bytes as f64;
    match b {
        b if b >= 1e9 => format!("{:.3} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.3} MB", b / 1e6),
        b if b >= 1e3 => format!("{:.3} kB", b / 1e3),
        _ => format!("{bytes} bytes"),
    }
}

/// What a checkpoint is, known from config.json and the safetensors header alone.
#[derive(Clone, Debug)]
pub struct CheckpointHeader {
    /// The config as the weights will be loaded with (`qk_norm` decided, see `check_checkpoint`).
    pub config: Config,
    /// The dtypes the tensors are stored in, in the order F32, F16, BF16.
    pub dtypes: Vec<Dtype>,
}

/// Checks a checkpoint before its tensor data is read: config.json's text, `head` (at least the
/// file's first 8 + N bytes, N being its header length; the whole file will do) and the file's
/// size. The size must suit the config, the header must parse and describe exactly the bytes that
/// follow it, and its tensors must pass `check_listing`. When config.json does not say `qk_norm`,
/// the checkpoint decides: Q/K norm weights present means on (MiniMind-3, Qwen3), absent means off
/// (MiniMind2, Llama).
pub fn check_checkpoint(config_json: &str, head: &[u8], file_size: u64) -> Result<CheckpointHeader, Error> {
    let mut config = Config::from_json(config_json)?;
    check_checkpoint_size(&config, file_size)?;
    let n = head
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        .ok_or_else(|| unreadable("unreadable.short", vec![], "it is shorter than 8 bytes"))?;
    if n > MAX_HEADER_BYTES {
        return Err(unreadable(
            "unreadable.headerLength",
            vec![("n", n.to_string())],
            format!("its first 8 bytes give a header length of {n} bytes, which no safetensors file has"),
        ));
    }
    let data_start = 8 + n;
    if file_size < data_start {
        return Err(unreadable(
            "unreadable.shortHeader",
            vec![("n", n.to_string()), ("size", file_size.to_string())],
            format!("the file is truncated: its header should be {n} bytes but the file is {file_size} bytes"),
        ));
    }
    let header = head.get(8..data_start as usize).ok_or_else(|| {
        Error::Input(format!("the first {data_start} bytes of the file are needed to read its header, {} were given", head.len()))
    })?;
    let header = std::str::from_utf8(header).map_err(|e| unreadable("unreadable.notText", vec![], format!("its header is not UTF-8 text: {e}")))?;
    // A header that is not JSON at all is placed by its column (it is one line); valid JSON that is
    // not a safetensors header names the entry at fault, where one is.
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(header) {
        let (_, args) = crate::json_fault(&e);
        return Err(unreadable("unreadable.headerNotJson", args, format!("its header is not valid JSON: {e}")));
    }
    let metadata: Metadata = serde_json::from_str(header).map_err(|e| {
        culprit(header).unwrap_or_else(|| unreadable("unreadable.badHeader", vec![("why", e.to_string())], format!("its header is not valid: {e}")))
    })?;
    let (described, held) = (metadata.data_len() as u64, file_size - data_start);
    if held < described {
        return Err(unreadable(
            "unreadable.shortData",
            vec![("described", described.to_string()), ("held", held.to_string())],
            format!("the file is truncated: its header describes {described} bytes of tensor data but only {held} follow"),
        ));
    }
    if held > described {
        return Err(unreadable(
            "unreadable.extraData",
            vec![("extra", (held - described).to_string())],
            format!("{} bytes follow the last tensor its header describes", held - described),
        ));
    }
    let listing: Listing =
        metadata.tensors().into_iter().map(|(name, info)| (name, (info.dtype, info.shape.clone()))).collect();
    let says_qk_norm =
        serde_json::from_str::<serde_json::Value>(config_json).is_ok_and(|raw| raw.get("qk_norm").is_some());
    if !says_qk_norm {
        config.qk_norm = has_qk_norm(&listing);
    }
    check_listing(&config, &listing)?;
    let dtypes =
        [Dtype::F32, Dtype::F16, Dtype::BF16].into_iter().filter(|d| listing.values().any(|(t, _)| t == d)).collect();
    Ok(CheckpointHeader { config, dtypes })
}

/// Reads a checkpoint as MiniMind / `transformers` save it: `config.json` text and the bytes of
/// `model.safetensors`, checked first by `check_checkpoint`.
pub fn load_checkpoint(config_json: &str, bytes: &[u8]) -> Result<(Config, Weights), Error> {
    let CheckpointHeader { config, .. } = check_checkpoint(config_json, bytes, bytes.len() as u64)?;
    let weights = load_safetensors(&config, bytes)?;
    Ok((config, weights))
}

/// Reads a model directory (`config.json` and `model.safetensors`) with `load_checkpoint`; errors
/// name the file they are about.
#[cfg(not(target_arch = "wasm32"))]
pub fn load_dir(dir: &std::path::Path) -> Result<(Config, Weights), Error> {
    let config_path = dir.join("config.json");
    let model_path = dir.join("model.safetensors");
    let text = std::fs::read_to_string(&config_path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", config_path.display())))?;
    let in_file = |e: Error| match e {
        Error::Config(s) => Error::Config(Said { text: format!("{}: {}", config_path.display(), s.text), ..s }),
        Error::Weights(m) => Error::Weights(format!("{}: {m}", model_path.display())),
        Error::Checkpoint(s) => Error::Checkpoint(Said { text: format!("{}: {}", model_path.display(), s.text), ..s }),
        other => other,
    };
    let config = Config::from_json(&text).map_err(in_file)?;
    let size = std::fs::metadata(&model_path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", model_path.display())))?
        .len();
    check_checkpoint_size(&config, size).map_err(in_file)?;
    let bytes =
        std::fs::read(&model_path).map_err(|e| Error::Io(format!("cannot read {}: {e}", model_path.display())))?;
    load_checkpoint(&text, &bytes).map_err(in_file)
}

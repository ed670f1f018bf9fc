//! Model weights: MiniMind / Hugging Face names, f32 in memory.
//! Loading (safetensors f32/f16/bf16) and seeded random initialisation live here.

use std::collections::{HashMap, HashSet};

use half::{bf16, f16};
use ndarray::{Array, Array1, Array2, Dimension};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

use crate::{Config, Error};

/// One decoder layer. Linear weights keep nn.Linear's `[out, in]` layout: y = x W^T.
#[derive(Clone, Debug)]
pub struct LayerWeights {
    pub input_layernorm: Array1<f32>,          // [H]
    pub q_proj: Array2<f32>,                   // [nH*d, H]
    pub k_proj: Array2<f32>,                   // [nKV*d, H]
    pub v_proj: Array2<f32>,                   // [nKV*d, H]
    pub o_proj: Array2<f32>,                   // [H, nH*d]
    pub q_norm: Option<Array1<f32>>,           // [d]; None for Llama-style models
    pub k_norm: Option<Array1<f32>>,           // [d]
    pub post_attention_layernorm: Array1<f32>, // [H]
    pub gate_proj: Array2<f32>,                // [I, H]
    pub up_proj: Array2<f32>,                  // [I, H]
    pub down_proj: Array2<f32>,                // [H, I]
}

#[derive(Clone, Debug)]
pub struct Weights {
    pub embed_tokens: Array2<f32>,    // [V, H]
    pub layers: Vec<LayerWeights>,
    pub norm: Array1<f32>,            // [H]
    /// `None` when tied: lm_head is embed_tokens.
    pub lm_head: Option<Array2<f32>>, // [V, H]
}

impl Weights {
    pub fn lm_head(&self) -> &Array2<f32> {
        self.lm_head.as_ref().unwrap_or(&self.embed_tokens)
    }
}

/// How `random` fills a tensor. Loading ignores it.
#[derive(Clone, Copy)]
enum Init {
    /// RMSNorm weights: exactly 1, as a fresh model has them.
    Ones,
    /// Linear and embedding matrices: uniform with std 1 / sqrt(fan_in) (see `random`).
    FanIn(usize),
}

/// Walks MiniMind's layout once, in checkpoint order, asking `fetch(name, shape, init)` for each
/// tensor's row-major data. Loading and random initialisation both build `Weights` through here,
/// so the names and shapes are written down exactly once.
fn assemble<F>(config: &Config, mut fetch: F) -> Result<Weights, Error>
where
    F: FnMut(&str, &[usize], Init) -> Result<Vec<f32>, Error>,
{
    fn vector<F: FnMut(&str, &[usize], Init) -> Result<Vec<f32>, Error>>(
        fetch: &mut F,
        name: &str,
        len: usize,
    ) -> Result<Array1<f32>, Error> {
        Ok(Array1::from_vec(fetch(name, &[len], Init::Ones)?))
    }
    fn matrix<F: FnMut(&str, &[usize], Init) -> Result<Vec<f32>, Error>>(
        fetch: &mut F,
        name: &str,
        rows: usize,
        cols: usize,
    ) -> Result<Array2<f32>, Error> {
        let data = fetch(name, &[rows, cols], Init::FanIn(cols))?;
        Ok(Array2::from_shape_vec((rows, cols), data).expect("fetch returns rows * cols values"))
    }

    let (h, d, i, v) = (config.hidden_size, config.head_dim(), config.intermediate_size(), config.vocab_size);
    let (q_out, kv_out) = (config.num_attention_heads * d, config.num_key_value_heads * d);
    let f = &mut fetch;
    let embed_tokens = matrix(f, "model.embed_tokens.weight", v, h)?;
    let mut layers = Vec::with_capacity(config.num_hidden_layers);
    for l in 0..config.num_hidden_layers {
        let name = |suffix: &str| format!("model.layers.{l}.{suffix}");
        layers.push(LayerWeights {
            input_layernorm: vector(f, &name("input_layernorm.weight"), h)?,
            q_proj: matrix(f, &name("self_attn.q_proj.weight"), q_out, h)?,
            k_proj: matrix(f, &name("self_attn.k_proj.weight"), kv_out, h)?,
            v_proj: matrix(f, &name("self_attn.v_proj.weight"), kv_out, h)?,
            o_proj: matrix(f, &name("self_attn.o_proj.weight"), h, q_out)?,
            q_norm: if config.qk_norm { Some(vector(f, &name("self_attn.q_norm.weight"), d)?) } else { None },
            k_norm: if config.qk_norm { Some(vector(f, &name("self_attn.k_norm.weight"), d)?) } else { None },
            post_attention_layernorm: vector(f, &name("post_attention_layernorm.weight"), h)?,
            gate_proj: matrix(f, &name("mlp.gate_proj.weight"), i, h)?,
            up_proj: matrix(f, &name("mlp.up_proj.weight"), i, h)?,
            down_proj: matrix(f, &name("mlp.down_proj.weight"), h, i)?,
        });
    }
    let norm = vector(f, "model.norm.weight", h)?;
    let lm_head = if config.tie_word_embeddings { None } else { Some(matrix(f, "lm_head.weight", v, h)?) };
    Ok(Weights { embed_tokens, layers, norm, lm_head })
}

/// Reads a safetensors checkpoint in the Hugging Face layout MiniMind saves
/// (shared/docs/minimind-semantics.md, "Weight names"). F32, F16 and BF16 are read into f32.
///
/// Every tensor the config implies must be present with exactly its shape, and nothing else may be:
/// a missing, unexpected or misshaped tensor, another dtype, or a NaN/inf value is an error that
/// names the tensor. Q/K norm weights must be present exactly when `config.qk_norm` is set.
/// With `tie_word_embeddings` an `lm_head.weight` in the file is ignored, as Hugging Face does
/// (it re-ties lm_head to embed_tokens after loading): some exports keep the shared tensor twice.
pub fn load_safetensors(config: &Config, bytes: &[u8]) -> Result<Weights, Error> {
    let config = config.clone().resolve()?;
    let file = open(bytes)?;
    match (config.qk_norm, has_qk_norm(&file)) {
        (true, false) => {
            return Err(Error::Weights(
                "the config has qk_norm = true (MiniMind-3 / Qwen3 layout) but the checkpoint has no \
                 self_attn.q_norm / k_norm weights, like a Llama-layout checkpoint; set \"qk_norm\": false \
                 in config.json"
                    .into(),
            ))
        }
        (false, true) => {
            return Err(Error::Weights(
                "the checkpoint has self_attn.q_norm / k_norm weights but the config has qk_norm = false; \
                 set \"qk_norm\": true in config.json"
                    .into(),
            ))
        }
        _ => {}
    }

    let mut used = HashSet::new();
    let weights = assemble(&config, |name, shape, _| {
        let view = file
            .tensor(name)
            .map_err(|_| Error::Weights(format!("missing tensor {name} (expected shape {shape:?})")))?;
        if view.shape() != shape {
            return Err(Error::Weights(format!("tensor {name} has shape {:?}, expected {shape:?}", view.shape())));
        }
        let data = to_f32(name, &view)?;
        if let Some(at) = data.iter().position(|x| !x.is_finite()) {
            return Err(Error::Weights(format!("tensor {name} holds {} at index {:?}", data[at], unravel(at, shape))));
        }
        used.insert(name.to_owned());
        Ok(data)
    })?;

    let ignored = |name: &str| config.tie_word_embeddings && name == "lm_head.weight";
    let mut unexpected: Vec<&str> = file.names().into_iter().filter(|n| !used.contains(*n) && !ignored(n)).collect();
    unexpected.sort_unstable();
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
        let more = match unexpected.len() - 1 {
            0 => String::new(),
            n => format!(", and {n} more"),
        };
        return Err(Error::Weights(format!("unexpected tensor {first}{hint}{more}")));
    }
    Ok(weights)
}

/// Parses the header, wrapping the safetensors crate's own words in a sentence.
fn open(bytes: &[u8]) -> Result<SafeTensors<'_>, Error> {
    SafeTensors::deserialize(bytes).map_err(|e| {
        Error::Weights(format!("the checkpoint is not a readable safetensors file (truncated or corrupt?): {e}"))
    })
}

fn has_qk_norm(file: &SafeTensors) -> bool {
    file.names().iter().any(|n| n.ends_with(".self_attn.q_norm.weight") || n.ends_with(".self_attn.k_norm.weight"))
}

fn to_f32(name: &str, view: &TensorView) -> Result<Vec<f32>, Error> {
    let bytes = view.data();
    Ok(match view.dtype() {
        Dtype::F32 => bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        Dtype::F16 => bytes.chunks_exact(2).map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        Dtype::BF16 => bytes.chunks_exact(2).map(|b| bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        other => {
            return Err(Error::Weights(format!(
                "tensor {name} is stored as {other}; attnscope reads F32, F16 and BF16"
            )))
        }
    })
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
    assemble(config, |name, shape, init| Ok(random_tensor(seed, name, shape.iter().product(), init)))
        .expect("random weights cannot fail")
}

fn random_tensor(seed: u64, name: &str, len: usize, init: Init) -> Vec<f32> {
    match init {
        Init::Ones => vec![1.0; len],
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
    fn add<D: Dimension>(out: &mut Vec<(String, Vec<usize>, Vec<u8>)>, name: String, a: &Array<f32, D>) {
        let bytes = a.iter().flat_map(|x| x.to_le_bytes()).collect();
        out.push((name, a.shape().to_vec(), bytes));
    }
    let mut tensors = Vec::new();
    add(&mut tensors, "model.embed_tokens.weight".into(), &weights.embed_tokens);
    for (l, layer) in weights.layers.iter().enumerate() {
        let p = format!("model.layers.{l}.");
        add(&mut tensors, format!("{p}input_layernorm.weight"), &layer.input_layernorm);
        add(&mut tensors, format!("{p}self_attn.q_proj.weight"), &layer.q_proj);
        add(&mut tensors, format!("{p}self_attn.k_proj.weight"), &layer.k_proj);
        add(&mut tensors, format!("{p}self_attn.v_proj.weight"), &layer.v_proj);
        add(&mut tensors, format!("{p}self_attn.o_proj.weight"), &layer.o_proj);
        if let Some(q_norm) = &layer.q_norm {
            add(&mut tensors, format!("{p}self_attn.q_norm.weight"), q_norm);
        }
        if let Some(k_norm) = &layer.k_norm {
            add(&mut tensors, format!("{p}self_attn.k_norm.weight"), k_norm);
        }
        add(&mut tensors, format!("{p}post_attention_layernorm.weight"), &layer.post_attention_layernorm);
        add(&mut tensors, format!("{p}mlp.gate_proj.weight"), &layer.gate_proj);
        add(&mut tensors, format!("{p}mlp.up_proj.weight"), &layer.up_proj);
        add(&mut tensors, format!("{p}mlp.down_proj.weight"), &layer.down_proj);
    }
    add(&mut tensors, "model.norm.weight".into(), &weights.norm);
    if !config.tie_word_embeddings {
        add(&mut tensors, "lm_head.weight".into(), weights.lm_head());
    }
    let views = tensors.iter().map(|(name, shape, bytes)| {
        (name.as_str(), TensorView::new(Dtype::F32, shape.clone(), bytes).expect("bytes match the shape"))
    });
    let metadata = HashMap::from([("format".to_owned(), "pt".to_owned())]);
    safetensors::serialize(views, Some(metadata)).expect("an f32 checkpoint serialises")
}

/// Reads a model directory as MiniMind / `transformers` save it: `config.json` and
/// `model.safetensors`. When config.json does not say `qk_norm`, the checkpoint decides: Q/K norm
/// weights present means on (MiniMind-3, Qwen3), absent means off (MiniMind2, Llama).
#[cfg(not(target_arch = "wasm32"))]
pub fn load_dir(dir: &std::path::Path) -> Result<(Config, Weights), Error> {
    let config_path = dir.join("config.json");
    let text = std::fs::read_to_string(&config_path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", config_path.display())))?;
    let in_file = |e: Error| match e {
        Error::Config(m) => Error::Config(format!("{}: {m}", config_path.display())),
        other => other,
    };
    let mut config = Config::from_json(&text).map_err(in_file)?;

    let model_path = dir.join("model.safetensors");
    let size = std::fs::metadata(&model_path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", model_path.display())))?
        .len();
    // f32 weights, a tied lm_head stored anyway, and the largest header safetensors allows.
    let largest = (config.weight_count() + (config.vocab_size * config.hidden_size) as u64) * 4 + 100_000_008;
    if size > largest {
        return Err(Error::Weights(format!(
            "{} is {:.2} GB, more than this config's weights can take ({:.2} GB); is config.json the right one?",
            model_path.display(),
            size as f64 / 1e9,
            largest as f64 / 1e9
        )));
    }
    let bytes =
        std::fs::read(&model_path).map_err(|e| Error::Io(format!("cannot read {}: {e}", model_path.display())))?;

    let config_says_qk_norm =
        serde_json::from_str::<serde_json::Value>(&text).map(|raw| raw.get("qk_norm").is_some()).unwrap_or(false);
    if !config_says_qk_norm {
        config.qk_norm = has_qk_norm(&open(&bytes)?);
    }
    let weights = load_safetensors(&config, &bytes).map_err(|e| match e {
        Error::Weights(m) => Error::Weights(format!("{}: {m}", model_path.display())),
        other => other,
    })?;
    Ok((config, weights))
}

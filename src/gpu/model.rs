//! `GpuModel`: the whole forward pass on the GPU with the same trace as `Model::trace`: the same names,
//! shapes, order and `Selection` semantics, the same two-call protocol (prefix into the KV cache, then
//! the traced call). Weights are uploaded once; working buffers and the per-layer KV cache live in a
//! workspace that only grows, so repeated runs allocate nothing but their inputs, parameters and
//! read-back. Only the tensors the selection asks for (and the logits) are read back, in one batch.

use std::collections::HashMap;
use std::sync::Mutex;

use ndarray::Array2;

use super::device::{ErrorScopes, Gpu};
use super::kernels::{padding_flags, AttnDims, AttnRecord};
use super::program::{Program, Tap};
use crate::model::forward::{check_input, check_trace_args};
use crate::model::rope::RopeTable;
use crate::model::linear::Weight;
use crate::model::{Model, RunOptions};
use crate::trace::{Recorder, Selection, Trace};
use crate::weights::FeedForward;
use crate::{Config, Error};

/// Why a mixture-of-experts model runs on the CPU: the WebGPU path has kernels for the dense FFN only.
pub const MOE_ON_CPU: &str = "this model's FFN is a mixture of experts (use_moe), which the WebGPU path does not run yet; it runs on the CPU";
/// The sentence for a model whose q/k/v projections have biases (Qwen2).
pub const BIAS_ON_CPU: &str = "this model's q/k/v projections have biases (Qwen2), which the WebGPU path does not add yet; it runs on the CPU";

/// What `GpuModel::trace` returns: `TraceOut` without the CPU-side cache and flash walk (a probe's walk
/// is one row of one head: the caller runs it on the CPU, `flash_attention` with a probe).
pub struct GpuTraceOut {
    pub trace: Trace,
    pub logits: Array2<f32>, // (T, V)
}

/// One layer's weights on the GPU, MiniMind's names, `[out, in]` as in the checkpoint.
struct GpuLayer {
    input_layernorm: wgpu::Buffer,
    q_proj: wgpu::Buffer,
    k_proj: wgpu::Buffer,
    v_proj: wgpu::Buffer,
    o_proj: wgpu::Buffer,
    q_norm: Option<wgpu::Buffer>,
    k_norm: Option<wgpu::Buffer>,
    post_attention_layernorm: wgpu::Buffer,
    gate_proj: wgpu::Buffer,
    up_proj: wgpu::Buffer,
    down_proj: wgpu::Buffer,
}

pub struct GpuModel {
    gpu: Gpu,
    config: Config,
    embed_tokens: wgpu::Buffer,
    layers: Vec<GpuLayer>,
    norm: wgpu::Buffer,
    lm_head: Option<wgpu::Buffer>,
    workspace: Mutex<Workspace>,
}

/// Working buffers by name, reused across runs and grown (doubling) when a run needs more.
#[derive(Default)]
struct Workspace {
    buffers: HashMap<String, wgpu::Buffer>,
}

impl Workspace {
    fn get(&mut self, gpu: &Gpu, name: &str, elems: usize) -> Result<wgpu::Buffer, Error> {
        let bytes = (elems.max(1) * 4) as u64;
        match self.buffers.get(name) {
            Some(b) if b.size() >= bytes => Ok(b.clone()),
            old => {
                let grown = old.map_or(bytes, |b| (b.size() * 2).min(gpu.max_binding()).max(bytes));
                let b = gpu.scratch(name, grown)?;
                self.buffers.insert(name.to_string(), b.clone());
                Ok(b)
            }
        }
    }
}

/// Where a trace entry's data comes from: the CPU (RoPE tables) or a read-back region.
enum Source {
    Host(Vec<f32>),
    Gpu(Tap),
}

/// One trace entry as planned: what `Recorder::put_heads` will get once the data is back.
struct Planned {
    name: String,
    shape: Vec<usize>,
    heads: Option<Vec<usize>>,
    source: Source,
}

/// The trace as planned: entries in computation order, data still on the GPU.
struct Plan<'r> {
    rec: Option<&'r Recorder>,
    entries: Vec<Planned>,
}

impl Plan<'_> {
    fn wants(&self, layer: Option<usize>) -> bool {
        self.rec.is_some_and(|r| r.wants(layer))
    }

    /// Reads `shape` elements from `buf` at element `offset` back as entry `name`.
    fn put(&mut self, prog: &mut Program, name: String, shape: &[usize], buf: &wgpu::Buffer, offset: usize) {
        let tap = prog.read(buf, offset, shape.iter().product());
        self.entries.push(Planned { name, shape: shape.to_vec(), heads: None, source: Source::Gpu(tap) });
    }
}

impl GpuModel {
    /// Opens the GPU, compiles the kernels and uploads `model`'s weights (f32, as held on the CPU).
    /// A mixture-of-experts model (MiniMind's `use_moe`) is refused with a sentence that says so:
    /// the page then runs it on the CPU and shows that sentence, as for any other fallback.
    pub async fn new(model: &Model) -> Result<GpuModel, Error> {
        if model.weights.layers.iter().any(|lw| lw.qkv_bias.is_some()) {
            return Err(Error::Gpu(BIAS_ON_CPU.into()));
        }
        let dense: Vec<&FeedForward> = model
            .weights
            .layers
            .iter()
            .map(|lw| lw.mlp.dense().ok_or_else(|| Error::Gpu(MOE_ON_CPU.into())))
            .collect::<Result<_, _>>()?;
        let gpu = Gpu::open().await?;
        let scopes = ErrorScopes::push(&gpu.device);
        let w = &model.weights;
        let up = |name: &str, a: &[f32]| gpu.upload(name, a);
        let vec = |a: &ndarray::Array1<f32>| a.as_slice().expect("contiguous").to_vec();
        // One matrix at a time in row-major order (where weights are packed, unpacked from the kernel's panels just for its upload).
        let mat = |a: &Weight| a.to_array().as_standard_layout().into_owned().into_raw_vec_and_offset().0;
        let mut layers = Vec::with_capacity(w.layers.len());
        for (l, (lw, ffn)) in w.layers.iter().zip(dense).enumerate() {
            let name = |s: &str| format!("model.layers.{l}.{s}");
            layers.push(GpuLayer {
                input_layernorm: up(&name("input_layernorm.weight"), &vec(&lw.input_layernorm))?,
                q_proj: up(&name("self_attn.q_proj.weight"), &mat(&lw.q_proj))?,
                k_proj: up(&name("self_attn.k_proj.weight"), &mat(&lw.k_proj))?,
                v_proj: up(&name("self_attn.v_proj.weight"), &mat(&lw.v_proj))?,
                o_proj: up(&name("self_attn.o_proj.weight"), &mat(&lw.o_proj))?,
                q_norm: lw.q_norm.as_ref().map(|n| up(&name("self_attn.q_norm.weight"), &vec(n))).transpose()?,
                k_norm: lw.k_norm.as_ref().map(|n| up(&name("self_attn.k_norm.weight"), &vec(n))).transpose()?,
                post_attention_layernorm: up(&name("post_attention_layernorm.weight"), &vec(&lw.post_attention_layernorm))?,
                gate_proj: up(&name("mlp.gate_proj.weight"), &mat(&ffn.gate_proj))?,
                up_proj: up(&name("mlp.up_proj.weight"), &mat(&ffn.up_proj))?,
                down_proj: up(&name("mlp.down_proj.weight"), &mat(&ffn.down_proj))?,
            });
        }
        let embed_tokens = up("model.embed_tokens.weight", &mat(&w.embed_tokens))?;
        let norm = up("model.norm.weight", &vec(&w.norm))?;
        let lm_head = w.lm_head.as_ref().map(|m| up("lm_head.weight", &mat(m))).transpose()?;
        scopes.pop("uploading the weights").await?;
        Ok(GpuModel { gpu, config: model.config.clone(), embed_tokens, layers, norm, lm_head, workspace: Mutex::default() })
    }

    /// The adapter in use, e.g. "llvmpipe (LLVM 19.1.7, 256 bits) (Vulkan)".
    pub fn adapter(&self) -> &str {
        &self.gpu.adapter
    }

    /// Why a run must go to the CPU instead, or None: interventions and the readouts (logit lens,
    /// head attribution) have no kernels; callers fall back to `Model::trace` and say so.
    pub fn cpu_only(opts: &RunOptions, selection: &Selection) -> Option<&'static str> {
        let asked = [
            (!opts.interventions.is_empty(), "knocking out heads"),
            (selection.logit_lens, "the logit lens"),
            (selection.head_logit, "head attribution"),
        ];
        asked.iter().find(|(on, _)| *on).map(|(_, what)| *what)
    }

    /// `Model::trace` on the GPU: ids[..prefix_len] fill the KV cache unrecorded, then ids[prefix_len..]
    /// are traced. Input errors are `Error::Input` exactly as on the CPU; GPU failures are `Error::Gpu`;
    /// a run `cpu_only` names is refused as `Error::Gpu`, never traced without what it asked for.
    pub async fn trace(&self, ids: &[u32], mask: Option<&[u8]>, prefix_len: usize, opts: &RunOptions, selection: Selection) -> Result<GpuTraceOut, Error> {
        if let Some(what) = Self::cpu_only(opts, &selection) {
            return Err(Error::Gpu(format!("{what} runs on the CPU only")));
        }
        check_trace_args(ids, mask, prefix_len)?;
        let rec = Recorder::new(selection);
        if prefix_len > 0 {
            check_input(&self.config, 0, &ids[..prefix_len], mask.map(|m| &m[..prefix_len]), &Recorder::off())?;
        }
        check_input(&self.config, prefix_len, &ids[prefix_len..], mask, &rec)?;

        let mut plan = Plan { rec: Some(&rec), entries: Vec::new() };
        let mut prog = Program::new(&self.gpu);
        let logits = {
            let mut ws = self.workspace.lock().unwrap_or_else(|p| p.into_inner());
            if prefix_len > 0 {
                let mut silent = Plan { rec: None, entries: Vec::new() };
                self.call(&mut prog, &mut ws, &mut silent, &ids[..prefix_len], 0, mask.map(|m| &m[..prefix_len]), opts, ids.len())?;
            }
            self.call(&mut prog, &mut ws, &mut plan, &ids[prefix_len..], prefix_len, mask, opts, ids.len())?
        };
        let logits = logits.expect("the traced call computes logits");
        let mut data = prog.run().await?;

        let (t, v) = (ids.len() - prefix_len, self.config.vocab_size);
        let entries = plan.entries;
        let mut rec = rec;
        for Planned { name, shape, heads, source } in entries {
            let values = match source {
                Source::Host(values) => values,
                Source::Gpu(tap) if tap.index() == logits.index() => data[tap.index()].clone(),
                Source::Gpu(tap) => std::mem::take(&mut data[tap.index()]),
            };
            rec.put_heads(name, &shape, values, heads);
        }
        let logits = Array2::from_shape_vec((t, v), std::mem::take(&mut data[logits.index()])).expect("T * V logits");
        Ok(GpuTraceOut { trace: rec.trace, logits })
    }

    /// Plans one forward call: `ids` (T new tokens) after P = `p` cached positions, the cache sized for
    /// `s_cap` positions. Records into `plan`; a call with no recorder (the prefix) stops after the last
    /// layer, since its logits are never used. Returns the logits' read-back region.
    #[allow(clippy::too_many_arguments)]
    fn call<'g>(&'g self, prog: &mut Program<'g>, ws: &mut Workspace, plan: &mut Plan, ids: &[u32], p: usize, mask: Option<&[u8]>, opts: &RunOptions, s_cap: usize) -> Result<Option<Tap>, Error> {
        let (cfg, gpu) = (&self.config, &self.gpu);
        let (t, s) = (ids.len(), p + ids.len());
        let (hid, n_h, n_kv, d, inter) = (cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim(), cfg.intermediate_size());
        let eps = cfg.rms_norm_eps;

        let ids_buf = gpu.upload("ids", ids)?;
        let rope = RopeTable::new(cfg, p, t);
        let cos = gpu.upload("rope.cos", rope.cos.as_slice().expect("contiguous"))?;
        let sin = gpu.upload("rope.sin", rope.sin.as_slice().expect("contiguous"))?;
        let pad = gpu.upload("padding", &padding_flags(mask, s))?;
        let x = ws.get(gpu, "x", t * hid)?; // (T, H): the residual stream
        let h = ws.get(gpu, "h", t * hid)?; // (T, H): each RMSNorm's output
        let q = ws.get(gpu, "q", t * n_h * d)?; // (T, nH, d)
        let q_normed = ws.get(gpu, "q_norm", t * n_h * d)?;
        let q_rope = ws.get(gpu, "q_rope", t * n_h * d)?;
        let k = ws.get(gpu, "k", t * n_kv * d)?; // (T, nKV, d)
        let k_normed = ws.get(gpu, "k_norm", t * n_kv * d)?;
        let context = ws.get(gpu, "context", t * n_h * d)?; // (T, nH, d)
        let attn_out = ws.get(gpu, "attn_out", t * hid)?;
        let gate = ws.get(gpu, "gate", t * inter)?; // (T, I)
        let up = ws.get(gpu, "up", t * inter)?;
        let act = ws.get(gpu, "act", t * inter)?;
        let ffn_out = ws.get(gpu, "ffn_out", t * hid)?;

        prog.embed(&ids_buf, &self.embed_tokens, &x, t, hid);
        if plan.wants(None) {
            plan.put(prog, "embed".into(), &[t, hid], &x, 0);
            for (name, table) in [("rope.cos", rope.cos), ("rope.sin", rope.sin)] {
                let source = Source::Host(table.into_raw_vec_and_offset().0);
                plan.entries.push(Planned { name: name.into(), shape: vec![t, d], heads: None, source });
            }
        }

        let dims = AttnDims { t, s, n_heads: n_h, n_kv, d, prefix_len: p, causal: opts.causal, scale: 1.0 / (d as f32).sqrt() };
        let flash = opts.path.flash_tile(s).is_some();
        let heads = plan.rec.map_or_else(Vec::new, |r| r.heads(n_h));
        // The explicit path's scratch: [heads per block, rows per chunk, S] x 3, within one binding.
        let block = if flash { 1 } else { n_h };
        let chunk_rows = ((gpu.max_binding().min(1 << 28) / (block * s * 4) as u64) as usize).clamp(1, t);
        let scratch_elems = block * chunk_rows * s;

        for (l, lw) in self.layers.iter().enumerate() {
            let on = plan.wants(Some(l));
            let name = |n: &str| format!("layers.{l}.{n}");
            let kv_elems = s_cap * n_kv * d;
            let (k_cache, v_cache) = (ws.get(gpu, &format!("k_cache.{l}"), kv_elems)?, ws.get(gpu, &format!("v_cache.{l}"), kv_elems)?);
            let at_p = p * n_kv * d; // this call's first cache row

            prog.rms_norm(&x, &lw.input_layernorm, &h, t, hid, eps);
            prog.linear(&h, 0, &lw.q_proj, &q, 0, t, n_h * d, hid);
            prog.linear(&h, 0, &lw.k_proj, &k, 0, t, n_kv * d, hid);
            prog.linear(&h, 0, &lw.v_proj, &v_cache, at_p, t, n_kv * d, hid); // v goes to the cache unchanged
            if on {
                plan.put(prog, name("input_norm"), &[t, hid], &h, 0);
                plan.put(prog, name("attn.q"), &[t, n_h, d], &q, 0);
                plan.put(prog, name("attn.k"), &[t, n_kv, d], &k, 0);
                plan.put(prog, name("attn.v"), &[t, n_kv, d], &v_cache, at_p);
            }
            // Q/K norm per head: [T, heads, d] is T * heads rows of d. Without q_norm / k_norm
            // (Llama layout) the tensors pass through, as on the CPU.
            let qn = match &lw.q_norm {
                Some(wn) => {
                    prog.rms_norm(&q, wn, &q_normed, t * n_h, d, eps);
                    &q_normed
                }
                None => &q,
            };
            let kn = match &lw.k_norm {
                Some(wn) => {
                    prog.rms_norm(&k, wn, &k_normed, t * n_kv, d, eps);
                    &k_normed
                }
                None => &k,
            };
            prog.rope(qn, &cos, &sin, &q_rope, 0, t, n_h, d);
            prog.rope(kn, &cos, &sin, &k_cache, at_p, t, n_kv, d); // rotated keys go to the cache
            if on {
                plan.put(prog, name("attn.q_norm"), &[t, n_h, d], qn, 0);
                plan.put(prog, name("attn.k_norm"), &[t, n_kv, d], kn, 0);
                plan.put(prog, name("attn.q_rope"), &[t, n_h, d], &q_rope, 0);
                plan.put(prog, name("attn.k_rope"), &[t, n_kv, d], &k_cache, at_p);
                plan.put(prog, name("attn.k_cache"), &[s, n_kv, d], &k_cache, 0);
                plan.put(prog, name("attn.v_cache"), &[s, n_kv, d], &v_cache, 0);
            }

            // Attention. The [nH, T, S] tensors exist only for the heads the selection asks for.
            let record = on.then(|| {
                let taps = [prog.tap(heads.len() * t * s), prog.tap(heads.len() * t * s), prog.tap(heads.len() * t * s)];
                let tag = (heads.len() != n_h).then(|| heads.clone());
                for (n, tap) in ["attn.scores", "attn.masked_scores", "attn.probs"].into_iter().zip(taps) {
                    plan.entries.push(Planned { name: name(n), shape: vec![heads.len(), t, s], heads: tag.clone(), source: Source::Gpu(tap) });
                }
                AttnRecord { heads: &heads, taps }
            });
            let needs_scratch = !flash || record.is_some();
            if needs_scratch {
                let sc = [ws.get(gpu, "scores", scratch_elems)?, ws.get(gpu, "masked", scratch_elems)?, ws.get(gpu, "probs", scratch_elems)?];
                let scratch = [&sc[0], &sc[1], &sc[2]];
                if flash {
                    let blocks: Vec<(usize, usize)> = heads.iter().map(|&hh| (hh, 1)).collect();
                    prog.explicit_attention(&dims, &q_rope, &k_cache, &v_cache, &pad, scratch, chunk_rows, &blocks, None, record.as_ref());
                } else {
                    prog.explicit_attention(&dims, &q_rope, &k_cache, &v_cache, &pad, scratch, chunk_rows, &[(0, n_h)], Some(&context), record.as_ref());
                }
            }
            if flash {
                prog.flash(&dims, &q_rope, &k_cache, &v_cache, &pad, &context);
            }

            prog.linear(&context, 0, &lw.o_proj, &attn_out, 0, t, hid, n_h * d);
            if on {
                plan.put(prog, name("attn.context"), &[t, n_h, d], &context, 0);
                plan.put(prog, name("attn.out"), &[t, hid], &attn_out, 0);
            }
            prog.residual(&x, &attn_out, t * hid);
            if on {
                plan.put(prog, name("attn.residual"), &[t, hid], &x, 0);
            }
            prog.rms_norm(&x, &lw.post_attention_layernorm, &h, t, hid, eps);
            prog.linear(&h, 0, &lw.gate_proj, &gate, 0, t, inter, hid);
            prog.linear(&h, 0, &lw.up_proj, &up, 0, t, inter, hid);
            prog.swiglu(&gate, &up, &act, t * inter);
            prog.linear(&act, 0, &lw.down_proj, &ffn_out, 0, t, hid, inter);
            if on {
                plan.put(prog, name("post_norm"), &[t, hid], &h, 0);
                plan.put(prog, name("ffn.gate"), &[t, inter], &gate, 0);
                plan.put(prog, name("ffn.up"), &[t, inter], &up, 0);
                plan.put(prog, name("ffn.act"), &[t, inter], &act, 0);
                plan.put(prog, name("ffn.out"), &[t, hid], &ffn_out, 0);
            }
            prog.residual(&x, &ffn_out, t * hid);
            if on {
                plan.put(prog, name("out"), &[t, hid], &x, 0);
            }
        }
        if plan.rec.is_none() {
            return Ok(None);
        }

        prog.rms_norm(&x, &self.norm, &h, t, hid, eps);
        if plan.wants(None) {
            plan.put(prog, "final_norm".into(), &[t, hid], &h, 0);
        }
        // lm_head over row chunks, so that [T, V] never has to fit one binding.
        let v = cfg.vocab_size;
        let lm_head = self.lm_head.as_ref().unwrap_or(&self.embed_tokens);
        let chunk = ((gpu.max_binding().min(1 << 28) / (v * 4) as u64) as usize).clamp(1, t);
        let logits_buf = ws.get(gpu, "logits", chunk * v)?;
        let logits = prog.tap(t * v);
        for r0 in (0..t).step_by(chunk) {
            let rows = chunk.min(t - r0);
            prog.linear(&h, r0 * hid, lm_head, &logits_buf, 0, rows, v, hid);
            prog.copy(&logits_buf, 0, logits, r0 * v, rows * v);
        }
        if plan.wants(None) {
            plan.entries.push(Planned { name: "logits".into(), shape: vec![t, v], heads: None, source: Source::Gpu(logits) });
        }
        Ok(Some(logits))
    }
}

//! The WebGPU path's promises: `enableGpu`, `runGpu` and `compareGpuCpu` on a Session, computed by
//! `gpu::GpuModel`; a failure rejects with an Error and leaves the CPU path untouched.

use std::rc::Rc;

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::session::{run_on_cpu, RunRequest, RunResult, Session};
use super::{from_js, now_ms, to_js};
use crate::gpu::GpuModel;
use crate::trace::Recorder;
use crate::Error;

/// One tensor of `compareGpuCpu`: the contract's measure, max |gpu - cpu| / max |cpu| over the finite
/// entries; `problem` says when a NaN or a different -inf pattern makes the two disagree outright.
#[derive(Serialize)]
struct TensorDiff {
    name: String,
    rel: f32,
    problem: Option<String>,
}

#[derive(Serialize)]
struct GpuCheck {
    tensors: Vec<TensorDiff>,
    worst: Option<TensorDiff>,
    adapter: String,
    gpu_ms: f64,
    cpu_ms: f64,
}

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

fn gpu_err(e: Error) -> JsValue {
    JsError::new(&e.to_string()).into()
}

/// The WebGPU path: the same trace as `run`, computed by `gpu::GpuModel`. The calls return Promises
/// that reject with an Error (no adapter, device lost, validation) and leave the CPU path untouched.

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
    /// the last run's, served by `tensor(name)`. A request the GPU has no kernels for (knocked-out
    /// heads, logit lens, head attribution: `GpuModel::cpu_only`) runs on the CPU instead and resolves
    /// with `backend: "cpu"` and `cpuFallback` saying why.
    #[wasm_bindgen(js_name = runGpu)]
    pub fn run_gpu(&self, request: JsValue) -> js_sys::Promise {
        let (gpu, last, last_request) = (self.gpu.borrow().clone(), self.last.clone(), self.last_request.clone());
        let model = self.model.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            let gpu = gpu.ok_or_else(|| JsValue::from(JsError::new("WebGPU is not enabled")))?;
            let req: RunRequest = from_js(request, "run request").map_err(JsValue::from)?;
            let opts = req.options().map_err(gpu_err)?;
            if let Some(what) = GpuModel::cpu_only(&opts, &req.selection()) {
                let rec = Recorder::new(req.selection());
                let why = format!("{what} has no GPU kernels; this run went to the CPU");
                return run_on_cpu(&model, &last, &last_request, req, rec, Some(why)).map_err(JsValue::from);
            }
            let t0 = now_ms();
            let out = gpu.trace(&req.ids, req.attention_mask.as_deref(), req.prefix_len, &opts, req.selection()).await.map_err(gpu_err)?;
            let ms = now_ms() - t0;
            *last.borrow_mut() = out.trace;
            *last_request.borrow_mut() = Some(req);
            let last = last.borrow();
            to_js(&RunResult { entries: &last.entries, backend: "webgpu", ms, flash: None, cache_len: 0, cache_bytes: 0, cpu_fallback: None }).map_err(JsValue::from)
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

//! The WebGPU path: the same forward pass and the same trace as `model`, computed by WGSL kernels
//! through wgpu (Vulkan or GL natively, with Mesa's lavapipe in CI; WebGPU in the browser).
//! Built with the `gpu` cargo feature.
//!
//! - `device`: adapter and device, kernels compiled once, failures as `Error::Gpu` (never a panic).
//! - `program`: one submission planned as dispatches and read-back copies, read back in one batch.
//! - `kernels`: one typed dispatch per WGSL kernel (`*.wgsl` here, each with its CPU twin named in its
//!   header: matmul (tiled, for GPUs) and matmul_blocked (for CPU adapters such as lavapipe),
//!   rms_norm, rope, attention + probs_v, flash, swiglu, residual, embed).
//! - `ops`: each kernel run once on host arrays, the twins tests/gpu.rs checks against the CPU.
//! - `model`: `GpuModel`, weights uploaded once, `trace` as `Model::trace`.
//!
//! Tolerance against the CPU: the contract's 2e-4 relative per tensor. Kernels that sum in another
//! order than the CPU (matmul, rms_norm, attention's dot and softmax sums, probs_v, flash) differ
//! by float rounding only; embed, rope's table, residual and the masks are exact.

mod device;
mod kernels;
mod model;
mod ops;
mod program;

pub use device::{Gpu, Matmul};
pub use model::{GpuModel, GpuTraceOut, MOE_ON_CPU};

//! The matmul kernels of benches/kernels on wasm32 + simd128, for tools/bench/matmul_wasm.mjs:
//! `cargo build --release --example matmul_wasm --target wasm32-unknown-unknown` (the target's
//! rustflags in .cargo/config.toml turn simd128 on). No wasm-bindgen: a few plain exports, and the
//! caller keeps time, since wasm32-unknown-unknown has no clock.

#[path = "../benches/kernels/mod.rs"]
mod kernels;

use std::sync::Mutex;

use ndarray::Array2;

/// x [T, in] and W [out, in] of the prepared case.
static INPUTS: Mutex<Option<(Array2<f32>, kernels::Operand)>> = Mutex::new(None);

#[no_mangle]
pub extern "C" fn shape_count() -> u32 {
    kernels::SHAPES.len() as u32
}

#[no_mangle]
pub extern "C" fn kernel_count() -> u32 {
    kernels::KERNELS.len() as u32
}

/// Fills the inputs for `kernels::SHAPES[shape]` at `t` rows; returns the flops of one call.
#[no_mangle]
pub extern "C" fn prepare(shape: u32, t: u32) -> f64 {
    let (k, out) = kernels::SHAPES[shape as usize];
    *INPUTS.lock().unwrap() = Some((kernels::filled(t as usize, k, 1), kernels::Operand::new(kernels::filled(out, k, 2))));
    2.0 * t as f64 * k as f64 * out as f64
}

/// Runs `kernels::KERNELS[kernel]` `reps` times on the prepared inputs; returns one output entry
/// so that nothing is optimised away.
#[no_mangle]
pub extern "C" fn run(kernel: u32, reps: u32) -> f32 {
    let inputs = INPUTS.lock().unwrap();
    let (x, w) = inputs.as_ref().expect("prepare first");
    let (_, multiply) = kernels::KERNELS[kernel as usize];
    (0..reps).fold(0.0, |_, _| multiply(x.view(), w)[[0, 0]])
}

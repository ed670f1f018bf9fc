//! GPU against CPU on one MiniMind-3-shaped layer (hidden 768, 8 query / 4 KV heads, head_dim 96,
//! FFN 2432), at T = 128, 1024 and 4096 tokens, no cache, nothing recorded but the logits: the time of
//! a whole `trace` call (upload of the inputs, every kernel, read-back), and matmul throughput alone
//! (up_proj's shape, with upload and read-back) for the CPU and both GPU matmul kernels.
//!   CARGO_TARGET_DIR=target/gpu cargo bench --features gpu --bench gpu [-- 128 1024 4096]
//! Prints a markdown table for BENCHMARKS.md. Attention takes the Auto path on both sides: explicit
//! below 1024 keys, flash from 1024 on.

use std::time::Instant;

use attnscope::gpu::{Gpu, GpuModel, Matmul};
use attnscope::model::linear::{linear, Weight};
use attnscope::model::{Model, RunOptions};
use attnscope::trace::Selection;
use attnscope::weights::random;
use attnscope::Config;
use ndarray::Array2;

/// Median seconds of `runs` calls after one warm-up call.
fn time(runs: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![128, 1024, 4096] } else { sizes };
    // One layer; a small vocabulary so that lm_head (not part of a layer) stays out of the numbers.
    let config = Config { num_hidden_layers: 1, vocab_size: 64, ..Config::default() }.resolve().expect("config");
    let model = Model::new(config.clone(), random(&config, 1));
    let gm = match pollster::block_on(GpuModel::new(&model)) {
        Ok(gm) => gm,
        Err(e) => {
            eprintln!("SKIP: {e}");
            return;
        }
    };
    let mut gpu = match pollster::block_on(Gpu::open()) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("SKIP: {e}");
            return;
        }
    };
    println!("adapter: {}", gm.adapter());
    println!();
    println!("layer matmuls on the GPU: {:?}", gpu.matmul);
    println!();
    println!("| T | CPU layer | GPU layer | GPU / CPU | matmul GFLOP/s: CPU | GPU blocked | GPU tiled |");
    println!("|---|---|---|---|---|---|---|");
    let (h, i) = (config.hidden_size, config.intermediate_size());
    let w_up = Weight::new(Array2::from_shape_fn((i, h), |(r, c)| ((r * 31 + c * 17) % 97) as f32 * 1e-3));
    for t in sizes {
        let ids: Vec<u32> = (0..t).map(|k| (k % 64) as u32).collect();
        let opts = RunOptions::default();
        let runs = if t >= 4096 { 1 } else { 3 };
        let cpu = time(runs, || {
            model.trace(&ids, None, 0, &opts, Selection::none()).expect("cpu run");
        });
        let on_gpu = time(runs, || {
            pollster::block_on(gm.trace(&ids, None, 0, &opts, Selection::none())).expect("gpu run");
        });
        // up_proj's shape: [T, 768] x [2432, 768]^T; the GPU time includes upload and read-back.
        let x = Array2::from_shape_fn((t, h), |(r, c)| ((r * 13 + c * 7) % 89) as f32 * 1e-2);
        let flop = 2.0 * (t * h * i) as f64;
        let cpu_mm = time(runs, || {
            std::hint::black_box(linear(x.view(), &w_up));
        });
        let mut gpu_mm = |kernel: Matmul| {
            gpu.matmul = kernel;
            time(runs, || {
                pollster::block_on(gpu.linear(x.view(), w_up.to_array().view())).expect("gpu matmul");
            })
        };
        let (blocked, tiled) = (gpu_mm(Matmul::Blocked), gpu_mm(Matmul::Tiled));
        println!(
            "| {t} | {:.1} ms | {:.1} ms | {:.1} | {:.1} | {:.1} | {:.1} |",
            cpu * 1e3,
            on_gpu * 1e3,
            on_gpu / cpu,
            flop / cpu_mm / 1e9,
            flop / blocked / 1e9,
            flop / tiled / 1e9
        );
    }
}

//! `cargo bench --bench layer [-- matmul layer attention]`: the CPU numbers of BENCHMARKS.md, one
//! thread throughout (matrixmultiply without its threading feature, gemm with `Parallelism::None`).
//!
//! - matmul: GFLOP/s of y = x W^T at a MiniMind-3 layer's shapes, T = 128 and 1024, for every kernel
//!   in benches/kernels (matrixmultiply, what linear.rs once ran, is the baseline of the ratios;
//!   "packed" is what it runs now).
//! - layer: one MiniMind-3 decoder layer (hidden 768, 8 query / 4 KV heads, d 96, FFN 2432, Q/K norm,
//!   causal, empty cache, nothing recorded) at T = 128 and 1024, on each attention path, and on the
//!   path `Model::forward` picks with the weights held transposed for gemm (how they were held
//!   natively before the x86-64 kernels, and still are on a CPU with neither AVX-512F nor AVX2);
//!   tools/bench/run.sh sets these against PyTorch's on one thread.
//! - attention: `naive_attention` against `flash_attention` (tile 64, the default) at T = S = 512,
//!   2048 and 8192, with the peak heap each call allocates, counted by the allocator below.
//!
//! `LAYER_T=1024` (comma-separated) times only the lengths named, in the layer and attention sections.
//!
//! Every line is `section key=value ...` so scripts can read it. Timings are medians over rounds in
//! which the compared functions take turns, so load from elsewhere on the machine hits them alike.

mod kernels;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use attnscope::model::attention::{naive_attention, MaskSpec};
use attnscope::model::block::{decoder_layer, LayerRun};
use attnscope::model::flash::flash_attention;
use attnscope::model::forward::DEFAULT_TILE;
use attnscope::model::kv_cache::KvCache;
use attnscope::model::Interventions;
use attnscope::model::rope::RopeTable;
use attnscope::trace::Recorder;
use attnscope::model::linear::Weight;
use attnscope::weights::{LayerWeights, Mlp};
use attnscope::{weights, Config};
use ndarray::Array3;

/// The system allocator, counting live bytes and their high-water mark.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes, Relaxed) + bytes;
    PEAK.fetch_max(now, Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout);
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = System.realloc(p, layout, new_size);
        if !q.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
            grew(new_size);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` and returns the most heap it held above what was live before. The blocks the scratch
/// pool keeps from earlier calls are dropped first, so that the peak counts every block the call
/// uses (its later calls take them from the pool instead of the allocator).
fn peak_during(f: &mut dyn FnMut()) -> usize {
    attnscope::model::scratch::release();
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    f();
    PEAK.load(Relaxed) - base
}

/// Median seconds per call and peak bytes of one call, for each function. The first call of each
/// measures memory and sets how many calls make a sample of at least 20 ms; it counts as a sample
/// itself when it took a quarter second or more (past that, one more warm-up would only cost time).
fn interleaved(rounds: usize, fns: &mut [&mut dyn FnMut()]) -> Vec<(f64, usize)> {
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); fns.len()];
    let mut peaks = Vec::new();
    let mut reps = Vec::new();
    for (f, s) in fns.iter_mut().zip(&mut samples) {
        let start = Instant::now();
        peaks.push(peak_during(*f));
        let first = start.elapsed().as_secs_f64();
        if first >= 0.25 {
            s.push(first);
        }
        reps.push(((0.02 / first).ceil() as usize).max(1));
    }
    for _ in 0..rounds {
        for ((f, s), &n) in fns.iter_mut().zip(&mut samples).zip(&reps) {
            if s.len() < rounds {
                let start = Instant::now();
                for _ in 0..n {
                    f();
                }
                s.push(start.elapsed().as_secs_f64() / n as f64);
            }
        }
    }
    samples.into_iter().map(median).zip(peaks).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// MiniMind-3's shapes with one layer.
fn minimind3_layer() -> Config {
    Config { num_hidden_layers: 1, ..Config::default() }.resolve().expect("MiniMind-3 defaults are valid")
}

fn matmul() {
    for t in [128, 1024] {
        for (k, out) in kernels::SHAPES {
            let x = kernels::filled(t, k, 1);
            let w = kernels::Operand::new(kernels::filled(out, k, 2));
            let mut runs: Vec<Box<dyn FnMut() + '_>> = kernels::KERNELS
                .iter()
                .map(|&(_, kernel)| {
                    let (x, w) = (x.view(), &w);
                    Box::new(move || {
                        black_box(kernel(x, w));
                    }) as Box<dyn FnMut() + '_>
                })
                .collect();
            let mut refs: Vec<&mut dyn FnMut()> = runs.iter_mut().map(|f| f.as_mut() as &mut dyn FnMut()).collect();
            let results = interleaved(11, &mut refs);
            let flop = 2.0 * (t * k * out) as f64;
            for ((name, _), (secs, _)) in kernels::KERNELS.iter().zip(&results) {
                println!(
                    "matmul T={t} in={k} out={out} kernel={name} median_ms={:.3} gflops={:.1}",
                    secs * 1e3,
                    flop / secs / 1e9
                );
            }
            let base = results[0].0;
            for ((name, _), (secs, _)) in kernels::KERNELS.iter().zip(&results).skip(1) {
                println!("matmul T={t} in={k} out={out} speedup_{name}_over_{}={:.2}", kernels::KERNELS[0].0, base / secs);
            }
        }
    }
}

/// The layer's weights held transposed for gemm, as `Weight::new` holds them on a CPU with neither
/// AVX-512F nor AVX2 and FMA (and held them everywhere natively before the x86-64 kernels: the
/// "before" of BENCHMARKS.md section 1).
fn transposed(w: &LayerWeights) -> LayerWeights {
    let transposed = |w: &Weight| Weight::transposed(w.to_array().as_standard_layout().into_owned());
    let mut out = w.clone();
    for weight in [&mut out.q_proj, &mut out.k_proj, &mut out.v_proj, &mut out.o_proj] {
        *weight = transposed(weight);
    }
    if let Mlp::Dense(f) = &mut out.mlp {
        for weight in [&mut f.gate_proj, &mut f.up_proj, &mut f.down_proj] {
            *weight = transposed(weight);
        }
    }
    out
}

fn layer() {
    let cfg = minimind3_layer();
    let w = weights::random(&cfg, 1);
    let before = transposed(&w.layers[0]);
    for t in lengths(&[128, 1024]) {
        let x = kernels::filled(t, cfg.hidden_size, 3);
        let rope = RopeTable::new(&cfg, 0, t);
        let auto_tile = (t >= attnscope::model::forward::AUTO_FLASH_MIN_KEYS).then_some(DEFAULT_TILE);
        // (path, flash tile, weights as held or transposed for gemm). The paths on one set of
        // weights take turns; the transposed set is timed in rounds of its own after them, so that
        // no sample finds the caches holding the other set (PyTorch's side has one set).
        let all = [("naive", None, false), ("flash", Some(DEFAULT_TILE), false), ("auto", auto_tile, true)];
        // LAYER_PATHS=naive (comma-separated) times only the paths named, for a profiler's run.
        let only = std::env::var("LAYER_PATHS").ok();
        let wanted = |name: &str| only.as_ref().is_none_or(|o| o.split(',').any(|n| n == name));
        for set in [false, true] {
            let paths: Vec<_> = all.iter().copied().filter(|p| p.2 == set && wanted(p.0)).collect();
            if paths.is_empty() {
                continue;
            }
            let layer = if set { &before } else { &w.layers[0] };
            let mut runs: Vec<Box<dyn FnMut() + '_>> = paths
                .iter()
                .map(|&(_, flash_tile, _)| {
                    let (cfg, x, rope) = (&cfg, &x, &rope);
                    Box::new(move || {
                        let run = LayerRun {
                            layer: 0,
                            rope,
                            mask: MaskSpec { causal: true, prefix_len: 0, padding: None },
                            flash_tile,
                            probe: None,
                            interventions: &Interventions::default(),
                            keep_context: false,
                        };
                        let mut cache = KvCache::new(cfg);
                        let out = decoder_layer(cfg, layer, x.clone(), &mut cache.layers[0], &run, &mut Recorder::off());
                        black_box(out.x);
                    }) as Box<dyn FnMut() + '_>
                })
                .collect();
            let mut refs: Vec<&mut dyn FnMut()> = runs.iter_mut().map(|f| f.as_mut() as &mut dyn FnMut()).collect();
            let rounds = if t <= 128 { 15 } else { 7 };
            for ((name, _, as_before), (secs, peak)) in paths.iter().zip(interleaved(rounds, &mut refs)) {
                if *as_before {
                    println!("layer T={t} attention={name} weights=transposed median_ms={:.2} peak_bytes={peak}", secs * 1e3);
                    continue;
                }
                let auto = (t >= attnscope::model::forward::AUTO_FLASH_MIN_KEYS) == (*name == "flash");
                println!("layer T={t} attention={name} auto={auto} median_ms={:.2} peak_bytes={peak}", secs * 1e3);
            }
        }
    }
}

/// The sequence lengths a section times: `default`, or those of `LAYER_T` (comma-separated; for a
/// profiler's run of one length, e.g. `LAYER_T=1024 perf record ... layer`).
fn lengths(default: &[usize]) -> Vec<usize> {
    match std::env::var("LAYER_T") {
        Ok(v) => v.split(',').map(|t| t.trim().parse().expect("LAYER_T: comma-separated lengths")).collect(),
        Err(_) => default.to_vec(),
    }
}

/// MemAvailable from /proc/meminfo, in bytes (None where there is no such file).
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

fn attention() {
    let cfg = minimind3_layer();
    let (n_h, n_kv, d) = (cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim());
    let scale = 1.0 / (d as f32).sqrt();
    let mask = MaskSpec { causal: true, prefix_len: 0, padding: None };
    for t in lengths(&[512, 2048, 8192]) {
        let shaped = |heads: usize, seed: u64| -> Array3<f32> {
            kernels::filled(t, heads * d, seed).into_shape_with_order((t, heads, d)).unwrap() // (T, heads, d)
        };
        let (q, k, v) = (shaped(n_h, 4), shaped(n_kv, 5), shaped(n_kv, 6));
        let (q, k, v) = (q.view(), k.view(), v.view());
        // naive_attention keeps scores, masked scores and probs, [nH, T, S] each, plus one head's
        // three [T, S] temporaries.
        let naive_bytes = 4 * (3 * n_h + 3) as u64 * (t * t) as u64;
        let naive_fits = mem_available().is_some_and(|avail| naive_bytes < avail / 2);
        let mut naive = || {
            black_box(naive_attention(q, k, v, &mask, scale));
        };
        let mut flash = || {
            black_box(flash_attention(q, k, v, &mask, scale, DEFAULT_TILE, None));
        };
        let rounds = if t >= 8192 { 3 } else if t >= 2048 { 5 } else { 9 };
        let results = if naive_fits {
            interleaved(rounds, &mut [&mut naive, &mut flash])
        } else {
            println!("attention T={t} path=naive skipped=1 estimated_peak_bytes={naive_bytes} mem_available={:?}", mem_available());
            interleaved(rounds, &mut [&mut flash])
        };
        let (flash_secs, flash_peak) = *results.last().unwrap();
        if naive_fits {
            let (naive_secs, naive_peak) = results[0];
            println!("attention T={t} path=naive median_ms={:.1} peak_bytes={naive_peak}", naive_secs * 1e3);
            println!(
                "attention T={t} path=flash median_ms={:.1} peak_bytes={flash_peak} time_vs_naive={:.2} memory_vs_naive={:.4}",
                flash_secs * 1e3,
                flash_secs / naive_secs,
                flash_peak as f64 / naive_peak as f64
            );
        } else {
            println!("attention T={t} path=flash median_ms={:.1} peak_bytes={flash_peak}", flash_secs * 1e3);
        }
        println!("attention T={t} path=flash peak_bytes_per_query_row={:.0}", flash_peak as f64 / t as f64);
    }
}

fn main() {
    // `cargo bench` passes --bench; anything else names a section.
    let sections: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let want = |s: &str| sections.is_empty() || sections.iter().any(|x| x == s);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "machine cpu={:?} cpus={} kernel={} loadavg_1m={}",
        cpu.unwrap_or_default(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        attnscope::model::linear::kernel_name(),
        load.split_whitespace().next().unwrap_or("?")
    );
    if want("matmul") {
        matmul();
    }
    if want("layer") {
        layer();
    }
    if want("attention") {
        attention();
    }
}

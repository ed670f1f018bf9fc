//! The GPU path (src/gpu, `--features gpu`) against its CPU twins, kernel by kernel, then the whole
//! forward pass on every PyTorch fixture and against the CPU trace.
//!   CARGO_TARGET_DIR=target/gpu cargo test --features gpu --test gpu -- --nocapture
//! Each comparison prints its worst ratio of |gpu - cpu| to what is allowed. Tolerances (tests/common,
//! docs/trace-contract.md "Tolerance"), entry by entry: GPU_KERNEL_VS_CPU for each kernel on values from
//! [-2, 2), GPU_VS_CPU for the whole trace against the CPU's, GPU_VS_PYTORCH against the fixtures; the
//! kernels that sum in another order than the CPU (matmul, rms_norm, the attention dot products and
//! softmax sums, probs @ V, flash) stay within them, and embed, residual, RoPE's tables and the -inf /
//! padding masks are exact. Without an adapter each test prints
//! "SKIP: no GPU adapter: ..." and returns (unless ATTNSCOPE_REQUIRE_GPU is set); any other GPU
//! failure fails the test. A validation error becoming `Error::Gpu` is checked in src/gpu/program.rs
//! (`cargo test --features gpu --lib gpu::`).
#![cfg(feature = "gpu")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use attnscope::gpu::{Gpu, GpuModel, Matmul};
use attnscope::model::attention::{naive_attention, MaskSpec};
use attnscope::model::flash::flash_attention;
use attnscope::model::linear::{linear, Weight};
use attnscope::model::rms_norm::rms_norm;
use attnscope::model::rope::RopeTable;
use attnscope::model::swiglu::silu;
use attnscope::model::{AttentionPath, Interventions, Model, RunOptions};
use attnscope::trace::{Selection, Trace};
use attnscope::weights::{load_dir, random};
use attnscope::{Config, Error};
use common::{assert_close, assert_matches_fixture, fixtures, GPU_KERNEL_VS_CPU, GPU_VS_CPU, GPU_VS_PYTORCH};
use ndarray::{Array, Array1, Array2, Array3, Dimension, ShapeBuilder};
use serde::Deserialize;

/// None (after printing why) when this machine has no adapter; any other failure panics, and so does
/// a missing adapter when ATTNSCOPE_REQUIRE_GPU is set (CI, which has lavapipe).
fn skip_without_adapter<T>(r: Result<T, Error>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(Error::Gpu(m)) if m.starts_with("no GPU adapter") && std::env::var_os("ATTNSCOPE_REQUIRE_GPU").is_none() => {
            eprintln!("SKIP: {m}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn gpu() -> Option<&'static Gpu> {
    static GPU: OnceLock<Option<Gpu>> = OnceLock::new();
    GPU.get_or_init(|| skip_without_adapter(pollster::block_on(Gpu::open()))).as_ref()
}

/// Deterministic values in [-2, 2), so cases are reproducible without a rand crate.
fn fill<Sh: ShapeBuilder>(shape: Sh, seed: u64) -> Array<f32, Sh::Dim>
where
    Sh::Dim: Dimension,
{
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    Array::from_shape_fn(shape, |_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ((x >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
    })
}

/// Asserts a kernel's output within GPU_KERNEL_VS_CPU of the CPU's, entry by entry, and prints the worst ratio.
fn check<D: Dimension>(what: &str, gpu: &Array<f32, D>, cpu: &Array<f32, D>) -> f32 {
    assert_eq!(gpu.shape(), cpu.shape(), "{what}: shape");
    let worst = assert_close(&GPU_KERNEL_VS_CPU, what, gpu.shape(), gpu.as_slice().unwrap(), cpu.as_standard_layout().as_slice().unwrap());
    eprintln!("{what}: worst {:.2} of the allowed, at {:?}", worst.ratio, worst.index);
    worst.ratio
}

// ---- kernels against their CPU twins ----

#[test]
fn matmul_both_kernels_match_linear_on_sizes_that_divide_no_tile() {
    let Some(mut gpu) = skip_without_adapter(pollster::block_on(Gpu::open())) else { return };
    // (rows, in, out): decode (one row), odd sizes, in < one k-step, MiniMind-3's FFN shape.
    for kernel in [Matmul::Tiled, Matmul::Blocked] {
        gpu.matmul = kernel;
        for (i, &(n, k, m)) in [(1, 768, 2432), (37, 100, 65), (130, 33, 7), (5, 3, 1), (65, 768, 2432)].iter().enumerate() {
            let x: Array2<f32> = fill((n, k), 1 + i as u64);
            let w: Array2<f32> = fill((m, k), 100 + i as u64);
            let ours = pollster::block_on(gpu.linear(x.view(), w.view())).unwrap();
            check(&format!("matmul ({kernel:?}) {n}x{k} . ({m}x{k})^T"), &ours, &linear(x.view(), &Weight::new(w.clone())));
        }
    }
}

#[test]
fn rms_norm_rows_and_per_head() {
    let Some(gpu) = gpu() else { return };
    // (rows, dim): hidden rows, Q/K norm as T * heads rows of d, dims that are not a multiple of 64.
    for (i, &(rows, dim)) in [(7, 768), (37 * 8, 96), (3, 1), (2, 1000), (1, 8192)].iter().enumerate() {
        let x: Array2<f32> = fill((rows, dim), 10 + i as u64);
        let w: Array1<f32> = fill(dim, 20 + i as u64);
        let ours = pollster::block_on(gpu.rms_norm(x.view(), w.view(), 1e-6)).unwrap();
        check(&format!("rms_norm {rows}x{dim}"), &ours, &rms_norm(x.view(), &w, 1e-6));
    }
    let zeros = Array2::<f32>::zeros((2, 5));
    let ours = pollster::block_on(gpu.rms_norm(zeros.view(), Array1::ones(5).view(), 1e-6)).unwrap();
    assert_eq!(ours, zeros, "an all-zero row stays zero");
}

#[test]
fn rope_with_cpu_tables_at_cache_offsets_and_yarn() {
    let Some(gpu) = gpu() else { return };
    // (rows, heads, d, first position, yarn)
    for (i, &(n, heads, d, start, yarn)) in [(13, 3, 96, 0, false), (4, 8, 96, 1000, false), (5, 2, 32, 120, true), (1, 1, 10, 7, false)].iter().enumerate() {
        let table = RopeTable::with(d, 1e6, yarn, start, n);
        let x: Array3<f32> = fill((n, heads, d), 30 + i as u64);
        let ours = pollster::block_on(gpu.rope(x.view(), &table)).unwrap();
        check(&format!("rope n={n} heads={heads} d={d} from {start} yarn={yarn}"), &ours, &table.apply(x.view()));
    }
}

#[test]
fn swiglu_activation_including_saturated_gates() {
    let Some(gpu) = gpu() else { return };
    let mut gate: Array2<f32> = fill((7, 333), 40);
    gate[[0, 0]] = -100.0; // exp(100) overflows on the CPU: silu = -0
    gate[[0, 1]] = 100.0;
    gate[[0, 2]] = -88.5;
    let up: Array2<f32> = fill((7, 333), 41);
    let ours = pollster::block_on(gpu.swiglu(gate.view(), up.view())).unwrap();
    let cpu = ndarray::Zip::from(&gate).and(&up).map_collect(|&g, &u| silu(g) * u);
    check("swiglu 7x333", &ours, &cpu);
}

#[test]
fn residual_add_is_exact() {
    let Some(gpu) = gpu() else { return };
    let (x, y): (Array2<f32>, Array2<f32>) = (fill((9, 301), 50), fill((9, 301), 51));
    let ours = pollster::block_on(gpu.residual(x.view(), y.view())).unwrap();
    assert_eq!(ours, &x + &y);
}

/// One attention case: T query rows after S - T cached keys.
struct Attn {
    t: usize,
    s: usize,
    n_h: usize,
    n_kv: usize,
    d: usize,
    causal: bool,
    padding: Option<Vec<u8>>,
    /// Query rows per explicit-path pass on the GPU.
    chunk_rows: usize,
}

/// The explicit path (scores, masked_scores, probs, context) and the flash path against the CPU's.
fn attention_case(name: &str, c: Attn, seed: u64) {
    let Some(gpu) = gpu() else { return };
    let q: Array3<f32> = fill((c.t, c.n_h, c.d), seed);
    let k: Array3<f32> = fill((c.s, c.n_kv, c.d), seed + 1);
    let v: Array3<f32> = fill((c.s, c.n_kv, c.d), seed + 2);
    let mask = MaskSpec { causal: c.causal, prefix_len: c.s - c.t, padding: c.padding.as_deref() };
    let scale = 1.0 / (c.d as f32).sqrt();
    let cpu = naive_attention(q.view(), k.view(), v.view(), &mask, scale);
    let ours = pollster::block_on(gpu.attention(q.view(), k.view(), v.view(), &mask, scale, c.chunk_rows)).unwrap();
    check(&format!("{name}: scores"), &ours.scores, &cpu.scores);
    check(&format!("{name}: masked_scores"), &ours.masked, &cpu.masked);
    check(&format!("{name}: probs"), &ours.probs, &cpu.probs);
    check(&format!("{name}: context"), &ours.context, &cpu.context);
    let flash = pollster::block_on(gpu.flash_attention(q.view(), k.view(), v.view(), &mask, scale)).unwrap();
    let (cpu_flash, _) = flash_attention(q.view(), k.view(), v.view(), &mask, scale, 64, None);
    check(&format!("{name}: flash context vs CPU flash"), &flash, &cpu_flash);
    check(&format!("{name}: flash context vs explicit"), &flash, &cpu.context);
}

#[test]
fn attention_decode_one_query_row_against_a_cache() {
    attention_case("decode", Attn { t: 1, s: 37, n_h: 8, n_kv: 4, d: 96, causal: true, padding: None, chunk_rows: 64 }, 1);
}

#[test]
fn attention_prefill_without_cache() {
    attention_case("prefill", Attn { t: 33, s: 33, n_h: 2, n_kv: 2, d: 8, causal: true, padding: None, chunk_rows: 64 }, 2);
}

#[test]
fn attention_prefill_with_cache_offset() {
    attention_case("prefill after 16 cached", Attn { t: 5, s: 21, n_h: 4, n_kv: 4, d: 8, causal: true, padding: None, chunk_rows: 2 }, 3);
}

#[test]
fn attention_gqa_and_mqa() {
    attention_case("gqa", Attn { t: 9, s: 9, n_h: 8, n_kv: 4, d: 24, causal: true, padding: None, chunk_rows: 4 }, 4);
    attention_case("mqa", Attn { t: 9, s: 9, n_h: 8, n_kv: 1, d: 24, causal: true, padding: None, chunk_rows: 64 }, 5);
}

#[test]
fn attention_left_and_inner_padding_with_fully_masked_rows() {
    // Rows 0 and 1 see only padding (causal), so their masked row is -1e9-ish and -inf: finite probs,
    // never NaN. Without the causal mask every row sees real keys.
    let pad = vec![0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1];
    attention_case("padding, causal", Attn { t: 11, s: 11, n_h: 2, n_kv: 1, d: 8, causal: true, padding: Some(pad.clone()), chunk_rows: 3 }, 6);
    attention_case("padding, not causal", Attn { t: 11, s: 11, n_h: 2, n_kv: 1, d: 8, causal: false, padding: Some(pad), chunk_rows: 64 }, 7);
}

#[test]
fn attention_row_that_sees_only_padding_is_finite() {
    // Row 0 sees key 0 only (causal), and key 0 is padding: its masked row is [s - 1e9, -inf, -inf], so
    // softmax puts all weight on the padded key, as the CPU and PyTorch do; never NaN.
    let Some(gpu) = gpu() else { return };
    let q: Array3<f32> = fill((3, 1, 4), 8);
    let k: Array3<f32> = fill((3, 1, 4), 9);
    let pad = [0u8, 1, 1];
    let mask = MaskSpec { causal: true, prefix_len: 0, padding: Some(&pad) };
    let ours = pollster::block_on(gpu.attention(q.view(), k.view(), k.view(), &mask, 0.5, 8)).unwrap();
    let cpu = naive_attention(q.view(), k.view(), k.view(), &mask, 0.5);
    check("row 0 sees only padding: masked_scores", &ours.masked, &cpu.masked);
    check("row 0 sees only padding: probs", &ours.probs, &cpu.probs);
    let flash = pollster::block_on(gpu.flash_attention(q.view(), k.view(), k.view(), &mask, 0.5)).unwrap();
    check("row 0 sees only padding: flash context", &flash, &cpu.context);
}

#[test]
fn attention_long_rows() {
    // S over AUTO_FLASH_MIN_KEYS, many key tiles, the explicit path in chunks of 100 rows.
    attention_case("long, T=S=1100", Attn { t: 1100, s: 1100, n_h: 2, n_kv: 1, d: 64, causal: true, padding: None, chunk_rows: 100 }, 10);
    let mut pad = vec![1u8; 1500];
    pad[..7].fill(0);
    pad[700] = 0;
    attention_case("long decode with padding, S=1500", Attn { t: 3, s: 1500, n_h: 4, n_kv: 2, d: 96, causal: true, padding: Some(pad), chunk_rows: 1 }, 11);
}

#[test]
fn attention_random_shapes() {
    let mut x = 12345u64;
    let mut next = |n: usize| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((x >> 33) as usize) % n
    };
    for case in 0..25 {
        let n_kv = [1, 2, 4][next(3)];
        let n_h = n_kv * [1, 2, 4][next(3)];
        let s = 1 + next(150);
        let t = 1 + next(s);
        let d = 2 * (1 + next(70));
        let causal = next(4) != 0;
        let padding = if next(2) == 0 { Some((0..s).map(|_| (next(4) != 0) as u8).collect()) } else { None };
        let chunk_rows = 1 + next(t);
        attention_case(&format!("random {case} (T={t} S={s} nH={n_h} nKV={n_kv} d={d})"), Attn { t, s, n_h, n_kv, d, causal, padding, chunk_rows }, 100 + case);
    }
}

// ---- the whole forward pass ----

#[derive(Deserialize)]
struct Input {
    ids: Vec<u32>,
    attention_mask: Option<Vec<u8>>,
    prefix_len: usize,
}

/// Every PyTorch reference in tests/fixtures, with the directory of its model: the case's own for the
/// semantic corners, www/models/<case> for a shipped model (the built-in one).
/// Every plain fixture: not the interpretability ones (with a run.json), which ask for what
/// `GpuModel::cpu_only` sends to the CPU (checked below), nor the mixture-of-experts ones: the GPU path runs
/// dense FFNs only (`a_moe_model_is_refused_so_the_page_runs_it_on_the_cpu`), nor activation patching's
/// (`patch_*`), which are no forward's trace and run on the CPU.
fn cases() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cases: Vec<(String, PathBuf)> = std::fs::read_dir(fixtures())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("trace.safetensors").exists() && !e.path().join("run.json").exists() && !["moe_", "patch_"].iter().any(|p| e.file_name().to_string_lossy().starts_with(p)))
        .map(|e| {
            let case = e.file_name().to_string_lossy().into_owned();
            let model = if e.path().join("config.json").exists() { e.path() } else { root.join("www/models").join(&case) };
            (case, model)
        })
        .collect();
    cases.sort();
    cases
}

/// The worst ratio to GPU_VS_CPU's allowance per tensor kind (layer prefix dropped), GPU against CPU.
fn against_cpu(what: &str, gpu: &Trace, cpu: &Trace) -> Vec<(String, f32)> {
    assert_eq!(gpu.names(), cpu.names(), "{what}: names and order");
    let mut worst: Vec<(String, f32)> = Vec::new();
    for (g, c) in gpu.entries.iter().zip(&cpu.entries) {
        assert_eq!((&g.shape, &g.heads), (&c.shape, &c.heads), "{what}: shape of {}", g.name);
        let rel = assert_close(&GPU_VS_CPU, &format!("{what}: {}", g.name), &g.shape, &g.data, &c.data).ratio;
        let kind = g.name.strip_prefix("layers.").map_or(g.name.as_str(), |r| r.split_once('.').map_or(r, |(_, k)| k)).to_string();
        match worst.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, w)) => *w = w.max(rel),
            None => worst.push((kind, rel)),
        }
    }
    worst
}

#[test]
fn forward_on_every_fixture_matches_pytorch_and_the_cpu() {
    let mut all: Vec<(String, f32)> = Vec::new();
    for (case, model_dir) in cases() {
        let (config, weights) = load_dir(&model_dir).unwrap_or_else(|e| panic!("{case}: {e}"));
        let input = fixtures().join(&case).join("input.json");
        let input: Input = serde_json::from_str(&std::fs::read_to_string(input).unwrap()).unwrap();
        let model = Model::new(config, weights);
        let Some(gm) = skip_without_adapter(pollster::block_on(GpuModel::new(&model))) else { return };
        for path in [AttentionPath::Naive, AttentionPath::Flash { tile: 3 }] {
            let opts = RunOptions { causal: true, path, ..RunOptions::default() };
            let mask = input.attention_mask.as_deref();
            let ours = pollster::block_on(gm.trace(&input.ids, mask, input.prefix_len, &opts, Selection::all())).unwrap();
            assert_matches_fixture(&GPU_VS_PYTORCH, &case, &ours.trace.to_safetensors());
            let cpu = model.trace(&input.ids, mask, input.prefix_len, &opts, Selection::all()).unwrap();
            for (kind, rel) in against_cpu(&format!("{case} {path:?}"), &ours.trace, &cpu.trace) {
                match all.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, w)) => *w = w.max(rel),
                    None => all.push((kind, rel)),
                }
            }
            assert_eq!(ours.logits.as_slice().unwrap(), ours.trace.get("logits").unwrap().data.as_slice());
        }
    }
    eprintln!("GPU against CPU, the worst ratio to what GPU_VS_CPU allows over every fixture and both paths:");
    for (kind, rel) in all {
        eprintln!("  {kind:<20} {rel:.2e}");
    }
}

/// Knocked-out heads, the logit lens and head attribution have no kernels: `cpu_only` names each, and
/// `GpuModel::trace` refuses such a run rather than trace it without what it asked for.
#[test]
fn interventions_and_readouts_are_refused_on_the_gpu_by_name() {
    let ablate = RunOptions { interventions: Interventions::ablating(vec![(0, 1)]), ..RunOptions::default() };
    let plain = RunOptions::default();
    assert_eq!(GpuModel::cpu_only(&ablate, &Selection::all()), Some("knocking out heads"));
    assert_eq!(GpuModel::cpu_only(&plain, &Selection { logit_lens: true, ..Selection::all() }), Some("the logit lens"));
    assert_eq!(GpuModel::cpu_only(&plain, &Selection { head_logit: true, ..Selection::all() }), Some("head attribution"));
    assert_eq!(GpuModel::cpu_only(&plain, &Selection { target_token: Some(3), ..Selection::all() }), None);
    let model = small_model(1, 3);
    let Some(gm) = skip_without_adapter(pollster::block_on(GpuModel::new(&model))) else { return };
    match pollster::block_on(gm.trace(&[1, 2, 3], None, 0, &ablate, Selection::all())) {
        Err(Error::Gpu(m)) => assert!(m.contains("knocking out heads") && m.contains("CPU"), "{m}"),
        other => panic!("a run with a knocked-out head was not refused: {:?}", other.map(|o| o.trace.names().len())),
    }
}

fn small_model(layers: usize, seed: u64) -> Model {
    let config = Config {
        hidden_size: 64,
        num_hidden_layers: layers,
        num_attention_heads: 4,
        num_key_value_heads: 2,
        vocab_size: 300,
        ..Config::default()
    }
    .resolve()
    .unwrap();
    let weights = random(&config, seed);
    Model::new(config, weights)
}

fn ids(n: usize, vocab: usize) -> Vec<u32> {
    (0..n).map(|i| ((i * 7919 + 13) % vocab) as u32).collect()
}

#[test]
fn selection_of_layers_and_heads_gives_the_cpu_names_shapes_and_head_tags() {
    let model = small_model(3, 7);
    let Some(gm) = skip_without_adapter(pollster::block_on(GpuModel::new(&model))) else { return };
    let ids = ids(12, 300);
    for path in [AttentionPath::Naive, AttentionPath::Flash { tile: 5 }] {
        for selection in [
            Selection { layers: Some(vec![2, 0]), heads: Some(vec![3, 1, 9]), ..Selection::default() },
            Selection { layers: Some(vec![1]), heads: None, ..Selection::default() },
            Selection::none(),
        ] {
            let opts = RunOptions { causal: true, path, ..RunOptions::default() };
            let ours = pollster::block_on(gm.trace(&ids, None, 4, &opts, selection.clone())).unwrap();
            let cpu = model.trace(&ids, None, 4, &opts, selection.clone()).unwrap();
            against_cpu(&format!("{path:?} {selection:?}"), &ours.trace, &cpu.trace);
            assert_eq!(ours.logits.shape(), cpu.logits.shape());
            let (gpu_logits, cpu_logits) = (ours.logits.as_standard_layout(), cpu.logits.as_standard_layout());
            assert_close(&GPU_VS_CPU, &format!("{path:?} {selection:?}: logits"), ours.logits.shape(), gpu_logits.as_slice().unwrap(), cpu_logits.as_slice().unwrap());
        }
    }
}

#[test]
fn long_sequence_takes_the_flash_path_and_matches_the_cpu() {
    // S = 1100 >= AUTO_FLASH_MIN_KEYS: Auto takes the flash path on both; the [nH, T, S] tensors are
    // recorded for one head, as a long trace would be.
    let model = small_model(1, 8);
    let Some(gm) = skip_without_adapter(pollster::block_on(GpuModel::new(&model))) else { return };
    let ids = ids(1100, 300);
    let mut mask = vec![1u8; 1100];
    mask[..5].fill(0);
    let selection = Selection { layers: None, heads: Some(vec![2]), ..Selection::default() };
    let opts = RunOptions::default();
    let ours = pollster::block_on(gm.trace(&ids, Some(&mask), 1000, &opts, selection.clone())).unwrap();
    let cpu = model.trace(&ids, Some(&mask), 1000, &opts, selection).unwrap();
    for (kind, rel) in against_cpu("long", &ours.trace, &cpu.trace) {
        eprintln!("long S=1100 (flash): {kind:<20} {rel:.2e}");
    }
}

#[test]
fn one_gpu_model_serves_runs_of_growing_and_shrinking_length() {
    let model = small_model(2, 9);
    let Some(gm) = skip_without_adapter(pollster::block_on(GpuModel::new(&model))) else { return };
    for (n, prefix) in [(5, 0), (40, 10), (3, 2), (70, 69)] {
        let ids = ids(n, 300);
        let opts = RunOptions::default();
        let ours = pollster::block_on(gm.trace(&ids, None, prefix, &opts, Selection::all())).unwrap();
        let cpu = model.trace(&ids, None, prefix, &opts, Selection::all()).unwrap();
        against_cpu(&format!("run n={n} prefix={prefix}"), &ours.trace, &cpu.trace);
    }
}

#[test]
fn bad_input_is_the_cpu_error_not_a_gpu_one() {
    let model = small_model(1, 10);
    let Some(gm) = skip_without_adapter(pollster::block_on(GpuModel::new(&model))) else { return };
    let opts = RunOptions::default();
    for (ids, mask, prefix) in [(vec![1, 2, 3], None, 3), (vec![1, 2, 999], None, 0), (vec![1, 2], Some(vec![1u8]), 0), (vec![1, 2], Some(vec![1u8, 2]), 0)] {
        let ours = pollster::block_on(gm.trace(&ids, mask.as_deref(), prefix, &opts, Selection::all())).err();
        let cpu = model.trace(&ids, mask.as_deref(), prefix, &opts, Selection::all()).err();
        assert!(matches!(ours, Some(Error::Input(_))), "{ours:?}");
        assert_eq!(ours, cpu);
    }
}

#[test]
fn a_moe_model_is_refused_so_the_page_runs_it_on_the_cpu() {
    // Refused before any adapter is asked for, so this runs on machines without one too.
    let (config, weights) = load_dir(&fixtures().join("moe_top1")).unwrap();
    let e = pollster::block_on(GpuModel::new(&Model::new(config, weights))).err().expect("a MoE model is refused");
    assert_eq!(e.to_string(), format!("GPU: {}", attnscope::gpu::MOE_ON_CPU));
}

//! What the integration tests share: the fixture folder and the trace contract's comparison
//! (docs/trace-contract.md, "Tolerance"), so a trace from the library and one written by the
//! command line are held to exactly the same standard.
// Each test binary uses its own part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use safetensors::SafeTensors;

/// A fresh empty directory under the system temp dir, removed when dropped (pass or fail).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(test: &str) -> TempDir {
        let unique = format!("attnscope-{test}-{}-{:?}", std::process::id(), std::time::SystemTime::now());
        let dir = std::env::temp_dir().join(unique.replace([' ', ':', '{', '}', ','], "_"));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One kind of reference check (docs/trace-contract.md, "Tolerance"): every checked entry within
/// `atol + rtol·|ref|` of its reference, and, as the contract's rule before per-entry checks said, within
/// `of_largest`·max |ref| of the tensor, so that no check is looser than it was anywhere. Entries -inf
/// in the reference must be -inf in ours, padding entries (-1e9) within 1e-6 relative, and no entry NaN.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    pub name: &'static str,
    pub rtol: f32,
    pub atol: f32,
    pub of_largest: f32,
}

// The numbers: the tightest that pass every fixture with about 5 times room (worst ratio about 0.2
// on a CPU with AVX2, the GPU path on Mesa's lavapipe), so that another CPU's kernel (AVX-512, gemm,
// simd128) or another adapter, summing in another order, still passes. atol is the error of an entry
// near 0 beside large ones: rounding at the scale of the largest activations it was summed from, so
// the model with the largest activations in each kind sets it. ATTNSCOPE_TOLERANCE_LOG=FILE logs what
// finding them needs (`Calibration`); docs/trace-contract.md, "Tolerance", has the table and the why.

/// The CPU path (native, f32) against PyTorch f32 on the same weights: tests/reference.rs (every case,
/// both attention paths, the bf16/f16 checkpoints), tests/builtin.rs, tests/cli.rs, tests/minimind2.rs.
/// atol: the built-in model's residual stream reaches 204, and entries near 0 there are off by 1.2e-5.
pub const CPU_VS_PYTORCH: Tolerance = Tolerance { name: "CPU vs PyTorch", rtol: 1e-5, atol: 5e-5, of_largest: 2e-4 };
/// Activation patching's metrics (differences of two logits) against PyTorch's: tests/patching.rs,
/// tests/cli.rs. Worst: 5.7e-6 on a metric of 1.9 (the built-in model's).
pub const PATCH_VS_PYTORCH: Tolerance = Tolerance { name: "patching vs PyTorch", rtol: 1e-5, atol: 1e-5, of_largest: 2e-4 };
/// Tiny GGUF models of each architecture and type (dequantized as gguf-py does) traced against
/// transformers' GGUF loader: tests/gguf.rs. Their activations stay under 4: worst 7.7e-7 at 0.09.
pub const GGUF_VS_TRANSFORMERS: Tolerance = Tolerance { name: "GGUF vs transformers", rtol: 1e-5, atol: 3e-6, of_largest: 2e-4 };
/// SmolLM2-135M (Q4_1, 30 layers) against transformers: tests/gguf.rs. Its residual stream holds
/// activations up to 2,600: entries there are off by 1.8e-2 (9e-6 relative), and entries near 0 in
/// the same rows by up to 1.3e-3.
pub const SMOLLM2_VS_TRANSFORMERS: Tolerance = Tolerance { name: "SmolLM2 vs transformers", rtol: 1e-4, atol: 3e-3, of_largest: 2e-4 };
/// The GPU path's whole forward pass against PyTorch's fixtures: tests/gpu.rs. Worst 1.7e-5 beside
/// the built-in model's large activations; room for adapters other than lavapipe (exp and fused
/// multiply-adds differ between them).
pub const GPU_VS_PYTORCH: Tolerance = Tolerance { name: "GPU vs PyTorch", rtol: 1e-5, atol: 1e-4, of_largest: 2e-4 };
/// The GPU path's trace against the CPU path's on the same model and input: tests/gpu.rs. As GPU_VS_PYTORCH.
pub const GPU_VS_CPU: Tolerance = Tolerance { name: "GPU vs CPU", rtol: 1e-5, atol: 1e-4, of_largest: 2e-4 };
/// Each GPU kernel against its CPU twin on values drawn from [-2, 2): tests/gpu.rs. A 768-long dot
/// product of such values sums terms up to 4, so an output near 0 is off by up to 8.5e-5.
pub const GPU_KERNEL_VS_CPU: Tolerance = Tolerance { name: "GPU kernel vs CPU", rtol: 1e-5, atol: 5e-4, of_largest: 2e-4 };
/// The wasm32 build (simd128 or relaxed-simd kernels) in Chromium against PyTorch and transformers:
/// tests/wasm.rs, and the page in tests/e2e (tests/e2e/tolerance.mjs, the same numbers, which
/// tests/unit/tolerance.test.mjs keeps equal). Worst: the page's activation patching of the built-in
/// model, 7.2e-6 on a metric of 1.9; the fixtures tests/wasm.rs runs stay under 4 (natively 9e-7).
pub const WASM_VS_PYTORCH: Tolerance = Tolerance { name: "wasm vs PyTorch", rtol: 1e-5, atol: 2e-5, of_largest: 2e-4 };

/// The entry that came closest to (or went furthest past) what its tolerance allows.
#[derive(Clone, Debug, Default)]
pub struct Worst {
    /// What was compared (`compare`'s `what`).
    pub what: String,
    /// |ours - ref| / allowed: at most 1 passes.
    pub ratio: f32,
    pub index: Vec<usize>,
    pub ours: f32,
    pub reference: f32,
    pub allowed: f32,
}

/// Row-major index of flat entry `i` in `shape` (the flat index itself when the shape does not fit).
fn index_in(shape: &[usize], mut i: usize) -> Vec<usize> {
    if shape.iter().product::<usize>() == 0 || shape.is_empty() {
        return vec![i];
    }
    let mut index = vec![0; shape.len()];
    for (k, &n) in shape.iter().enumerate().rev() {
        index[k] = i % n;
        i /= n;
    }
    index
}

/// Compares `ours` with `reference` (of `shape`, row-major) under `tol`. Err names the problem: a NaN,
/// a different -inf pattern, a padding entry off, or the worst entry past its allowance (tensor, index,
/// both values, the allowance). Ok gives the worst entry.
pub fn compare(tol: &Tolerance, what: &str, shape: &[usize], ours: &[f32], reference: &[f32]) -> Result<Worst, String> {
    if ours.len() != reference.len() {
        return Err(format!("{what}: {} entries against the reference's {}", ours.len(), reference.len()));
    }
    let mut scale = 0.0f32;
    for (i, (&a, &b)) in ours.iter().zip(reference).enumerate() {
        let at = || format!("{:?}", index_in(shape, i));
        if a.is_nan() || b.is_nan() {
            return Err(format!("{what}: NaN at {}: ours {a}, reference {b}", at()));
        }
        if b == f32::NEG_INFINITY || a == f32::NEG_INFINITY {
            if a != b {
                return Err(format!("{what}: the -inf pattern differs at {}: ours {a}, reference {b}", at()));
            }
        } else if b <= -1e8 {
            if (a - b).abs() > 1e-6 * b.abs() {
                return Err(format!("{what}: padding entry at {}: ours {a}, reference {b}", at()));
            }
        } else {
            scale = scale.max(b.abs());
        }
    }
    let mut worst = Worst::default();
    let mut log = Calibration::new();
    for (i, (&a, &b)) in ours.iter().zip(reference).enumerate() {
        if b == f32::NEG_INFINITY || b <= -1e8 {
            continue;
        }
        let (diff, mag) = ((a as f64 - b as f64).abs(), (b as f64).abs());
        let allowed = (tol.atol as f64 + tol.rtol as f64 * mag).min(tol.of_largest as f64 * scale as f64);
        let ratio = if diff == 0.0 { 0.0 } else if allowed > 0.0 { diff / allowed } else { f64::INFINITY };
        if ratio > worst.ratio as f64 || worst.index.is_empty() {
            worst = Worst { what: what.to_string(), ratio: ratio as f32, index: index_in(shape, i), ours: a, reference: b, allowed: allowed as f32 };
        }
        log.add(diff, mag);
    }
    log.write(tol, what, scale, &worst);
    if worst.ratio > 1.0 || worst.ratio.is_nan() {
        return Err(format!(
            "{what}: entry {:?} is {:e}, the reference {:e}: |diff| {:.3e} over the {:.3e} allowed ({}: {:e} + {:e}·|ref|, at most {:e}·{:.3e}), {:.2}×",
            worst.index,
            worst.ours,
            worst.reference,
            (worst.ours as f64 - worst.reference as f64).abs(),
            worst.allowed,
            tol.name,
            tol.atol,
            tol.rtol,
            tol.of_largest,
            scale,
            worst.ratio
        ));
    }
    Ok(worst)
}

/// `compare`, panicking with its message on a failure.
pub fn assert_close(tol: &Tolerance, what: &str, shape: &[usize], ours: &[f32], reference: &[f32]) -> Worst {
    compare(tol, what, shape, ours, reference).unwrap_or_else(|e| panic!("{e}"))
}

/// What finding a tolerance needs, written where ATTNSCOPE_TOLERANCE_LOG names a file (natively): one
/// line per comparison with its worst ratio under the current tolerance, the old rule's measure, and
/// the entries no other entry outdoes (none has both a smaller |ref| and a larger |ours - ref|) as
/// |ref|:|diff| pairs; any atol and rtol pass the comparison exactly when they pass those entries.
struct Calibration {
    on: bool,
    points: Vec<(f64, f64)>,
    worst_diff: f64,
}

impl Calibration {
    fn new() -> Calibration {
        Calibration { on: std::env::var_os("ATTNSCOPE_TOLERANCE_LOG").is_some(), points: Vec::new(), worst_diff: 0.0 }
    }

    fn add(&mut self, diff: f64, mag: f64) {
        self.worst_diff = self.worst_diff.max(diff);
        if self.on && diff > 0.0 {
            self.points.push((mag, diff));
        }
    }

    fn write(mut self, tol: &Tolerance, what: &str, scale: f32, worst: &Worst) {
        let Some(path) = std::env::var_os("ATTNSCOPE_TOLERANCE_LOG") else { return };
        self.points.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut most = 0.0;
        let mut frontier = Vec::new();
        for (mag, diff) in self.points {
            if diff > most {
                most = diff;
                frontier.push(format!("{mag:.3e}:{diff:.3e}"));
            }
        }
        let line = format!(
            "{}\t{what}\tratio {:.3e}\told {:.3e}\tmax|ref| {scale:.3e}\t{}\n",
            tol.name,
            worst.ratio,
            self.worst_diff / (scale as f64).max(1e-30),
            frontier.join(" ")
        );
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Checks a trace (safetensors bytes, as `Trace::to_safetensors` and `attnscope trace` write them)
/// against `tests/fixtures/{case}/trace.safetensors` under `tol`: every reference tensor present with its
/// shape and every entry within the tolerance (`compare`).
pub fn assert_matches_fixture(tol: &Tolerance, case: &str, ours: &[u8]) {
    let bytes = std::fs::read(fixtures().join(case).join("trace.safetensors")).unwrap();
    compare_traces(tol, case, &bytes, ours).unwrap_or_else(|e| panic!("{e}"));
}

/// The f32 entries of a safetensors tensor.
pub fn floats(view: &safetensors::tensor::TensorView) -> Vec<f32> {
    view.data().chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect()
}

/// `assert_matches_fixture`'s comparison of two safetensors files, the reference's tensors all checked.
pub fn compare_traces(tol: &Tolerance, case: &str, reference: &[u8], ours: &[u8]) -> Result<(), String> {
    let reference = SafeTensors::deserialize(reference).map_err(|e| format!("{case}: the reference is not safetensors: {e}"))?;
    let ours = SafeTensors::deserialize(ours).map_err(|e| format!("{case}: our trace is not safetensors: {e}"))?;
    let mut names: Vec<String> = reference.names().into_iter().map(|n| n.to_string()).collect();
    names.sort();
    if names.len() < 40 {
        return Err(format!("{case}: reference has only {} tensors", names.len()));
    }
    for name in names {
        let r = reference.tensor(&name).unwrap();
        let e = ours.tensor(&name).map_err(|_| format!("{case}: we do not record {name}"))?;
        if e.dtype() != safetensors::Dtype::F32 || e.shape() != r.shape() {
            return Err(format!("{case}: {name} is {:?} {:?}, the reference {:?} {:?}", e.dtype(), e.shape(), r.dtype(), r.shape()));
        }
        compare(tol, &format!("{case}: {name}"), r.shape(), &floats(&e), &floats(&r))?;
    }
    Ok(())
}

/// `linear` (in wasm32 the packed simd128 kernel, natively the AVX-512 kernel where the CPU has
/// AVX-512F, the AVX2 kernel where it has AVX2 and FMA, else gemm) against a plain triple loop in f64,
/// at sizes that fill no micro-kernel tile (3 x 12 in wasm32, 6 x 64 or 6 x 16 natively), panel,
/// 256- or 384-long inner block, 192- or 132-row block of x (200 rows: two blocks in wasm32) or 240- or
/// 256-column block of c
/// evenly (the panel kernels' output is never zeroed: every cell must be stored), and at empty ones. Each entry must be within 1e-5 of the sum of |x||w| over its products,
/// the rounding a float32 sum of them can reach.
pub fn linear_matches_triple_loop() {
    use attnscope::model::linear::{linear, Weight};
    use ndarray::Array2;
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut filled = |rows: usize, cols: usize| {
        Array2::from_shape_fn((rows, cols), |_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
    };
    // (rows of x, in, out)
    for (m, k, n) in [(1, 1, 1), (7, 5, 13), (7, 13, 5), (3, 300, 9), (5, 257, 17), (4, 256, 8), (9, 513, 23), (70, 300, 17), (13, 1, 33), (8, 385, 65), (11, 769, 300), (140, 769, 300), (200, 300, 250), (0, 5, 3), (2, 0, 3), (2, 3, 0)] {
        let (x, w) = (filled(m, k), filled(n, k));
        let got = linear(x.view(), &Weight::new(w.clone()));
        assert_eq!(got.dim(), (m, n), "{m}x{k} by {n}x{k}");
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|p| x[[i, p]] as f64 * w[[j, p]] as f64).sum();
                let scale: f64 = (0..k).map(|p| (x[[i, p]] as f64 * w[[j, p]] as f64).abs()).sum();
                let err = (got[[i, j]] as f64 - want).abs();
                assert!(err <= 1e-5 * scale + 1e-30, "{m}x{k} by {n}x{k} at [{i}, {j}]: {} vs {want}", got[[i, j]]);
            }
        }
    }
}

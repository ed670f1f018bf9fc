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

/// max |ours - ref| / max |ref| over the specified entries, per tensor.
pub const TOLERANCE: f32 = 2e-4;

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Checks a trace (safetensors bytes, as `Trace::to_safetensors` and `attnscope trace` write them)
/// against `tests/fixtures/{case}/trace.safetensors`: every reference tensor present with its shape,
/// no NaN, the same -inf pattern, padding entries (-1e9) where PyTorch has them, and every other
/// entry within TOLERANCE relative to the tensor's largest |ref|.
pub fn assert_matches_fixture(case: &str, ours: &[u8]) {
    let bytes = std::fs::read(fixtures().join(case).join("trace.safetensors")).unwrap();
    let reference = SafeTensors::deserialize(&bytes).unwrap();
    let ours = SafeTensors::deserialize(ours).unwrap_or_else(|e| panic!("{case}: our trace is not safetensors: {e}"));
    let mut names: Vec<String> = reference.names().into_iter().map(|n| n.to_string()).collect();
    names.sort();
    assert!(names.len() >= 40, "{case}: reference has only {} tensors", names.len());
    let values = |view: &safetensors::tensor::TensorView| -> Vec<f32> {
        view.data().chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect()
    };
    for name in names {
        let r = reference.tensor(&name).unwrap();
        let e = ours.tensor(&name).unwrap_or_else(|_| panic!("{case}: we do not record {name}"));
        assert_eq!(e.dtype(), safetensors::Dtype::F32, "{case}: dtype of {name}");
        assert_eq!(e.shape(), r.shape(), "{case}: shape of {name}");
        let rel = rel_diff(&format!("{case}: {name}"), &values(&e), &values(&r));
        assert!(rel <= TOLERANCE, "{case}: {name} differs by {rel:.2e} relative");
    }
}

/// The contract's measure for one tensor: max |ours - ref| / max |ref| over the specified entries.
/// Panics on a NaN, on a different -inf pattern, and on a padding entry (-1e9 in the reference) that is
/// off by more than 1e-6 relative; those entries are left out of the measure.
pub fn rel_diff(what: &str, ours: &[f32], reference: &[f32]) -> f32 {
    assert_eq!(ours.len(), reference.len(), "{what}: number of entries");
    let mut scale = 0.0f32;
    let mut worst = 0.0f32;
    for (i, (&a, &b)) in ours.iter().zip(reference).enumerate() {
        assert!(!a.is_nan(), "{what}: NaN at {i}");
        if b == f32::NEG_INFINITY || a == f32::NEG_INFINITY {
            assert_eq!(a, b, "{what}: -inf pattern differs at {i}");
        } else if b <= -1e8 {
            assert!((a - b).abs() <= 1e-6 * b.abs(), "{what}: padding entry at {i}: {a} vs {b}");
        } else {
            scale = scale.max(b.abs());
            worst = worst.max((a - b).abs());
        }
    }
    worst / scale.max(1e-30)
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

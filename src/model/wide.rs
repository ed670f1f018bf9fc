//! Elementwise loops (silu, RMSNorm, RoPE, the softmax rows) compiled for the widest vectors this CPU has. A native
//! build targets baseline x86-64, whose widest vectors are SSE2's four lanes; `wide(f)` runs `f`
//! inlined into a copy of itself compiled for AVX-512F or AVX2, picked at run time, so the loops in
//! it vectorise 16 or 8 lanes wide. Rust never fuses a multiply and an add on its own, so the
//! numbers are the same bits on every path. In wasm32 (simd128 for the whole build) and elsewhere
//! it just runs `f`.

/// `f()`, on the widest vectors this CPU has.
#[inline(always)]
pub fn wide<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            return unsafe { on_avx512(f) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            return unsafe { on_avx2(f) };
        }
    }
    f()
}

/// # Safety
/// The CPU must have AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn on_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn on_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

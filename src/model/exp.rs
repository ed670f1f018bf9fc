//! e^x in f32 for the forward's exponentials (softmax on both attention paths, silu), written so that a loop over a
//! slice vectorises: no branches, no calls. In wasm32 `f32::exp` is a call into compiler-builtins'
//! scalar libm, about 18 ns each, which was 3 % of a T = 128 forward and 5 % at T = 512
//! (BENCHMARKS.md section 4); this is Cephes' `expf` (round x / ln 2 to n, a degree-7 polynomial in
//! the remainder, times 2^n), within 2 ulp of the true value.
//!
//! Below -87.4 (where e^x is under 1.1e-38, the smallest normal f32) it returns exactly 0, so a masked
//! (-inf) score's weight is exactly 0; from 88.73 up it returns +inf, as `f32::exp` does; NaN stays NaN.

/// Inputs below this give exactly 0.
const LOW: f32 = -87.4;
/// Inputs are clamped here before the rounding: n stays within 128, so 2^n is two normal factors.
const HIGH: f32 = 88.8;

#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // Comparisons rather than f32::min/max, whose NaN rules cost extra instructions; NaN passes
    // through both and comes out NaN.
    let xc = if x > HIGH { HIGH } else if x < LOW { LOW } else { x };
    // n = round(x / ln 2), by adding and removing 1.5 * 2^23 (round to nearest even, no call).
    // The sum's low mantissa bits hold n itself, read below as an integer: `n as i32` would be a
    // saturating conversion, which does not vectorise on x86-64.
    const SHIFT: f32 = 12_582_912.0;
    let shifted = xc * std::f32::consts::LOG2_E + SHIFT;
    let n = shifted - SHIFT;
    // r = x - n ln 2, with ln 2 split in two so that n * LN2_HI is exact.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    let r = xc - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_1e-4f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 5.000_000_1e-1;
    let y = p * r * r + r + 1.0;
    // 2^n as 2^(n/2) * 2^(n - n/2): each factor a normal f32 for n in [-126, 128].
    // For NaN these bits are arbitrary, and y is NaN already.
    let n = shifted.to_bits() as i32 - SHIFT.to_bits() as i32;
    let half = n >> 1;
    let two = |e: i32| f32::from_bits(((e + 127) as u32) << 23);
    let e = y * two(half) * two(n - half);
    if x < LOW {
        0.0
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::exp;

    #[test]
    fn within_two_ulp_of_f64_over_the_range() {
        let mut worst = 0.0f64;
        let mut x = -87.3f32;
        while x < 88.7 {
            let want = (x as f64).exp();
            let got = exp(x) as f64;
            worst = worst.max((got - want).abs() / want);
            x += 0.0137;
        }
        // One ulp of f32 is 2^-23 = 1.2e-7 relative at most.
        assert!(worst < 2.5e-7, "worst relative error {worst:e}");
    }

    #[test]
    fn edges() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(-100.0), 0.0);
        assert_eq!(exp(89.0), f32::INFINITY);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert!(exp(f32::NAN).is_nan());
        assert!((exp(-87.0) as f64 / (-87.0f64).exp() - 1.0).abs() < 1e-6);
        assert!((exp(88.7) as f64 / (88.7f32 as f64).exp() - 1.0).abs() < 1e-6);
    }
}

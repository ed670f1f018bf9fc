//! ggml's tensor types and their dequantization to f32, block by block, exactly as ggml's
//! `dequantize_row_*` (ggml-quants.c) and gguf-py's `gguf.quants.dequantize` compute them: every
//! product is one f32 multiplication in the same order (`(d * sc) * q - (dmin * m)` for the K-quants),
//! so the floats are theirs bit for bit (tests/fixtures/gguf/*/weights.safetensors).

use half::{bf16, f16};

/// The ggml types attnscope reads, by their number in the GGUF file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GgmlType {
    F32,
    F16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q2K,
    Q3K,
    Q4K,
    Q5K,
    Q6K,
    BF16,
}

/// Super-block size of the K-quants.
const QK_K: usize = 256;

impl GgmlType {
    /// The type numbered `id` in ggml's `enum ggml_type`, or the name of one attnscope does not read.
    pub fn from_id(id: u32) -> Result<GgmlType, &'static str> {
        Ok(match id {
            0 => GgmlType::F32,
            1 => GgmlType::F16,
            2 => GgmlType::Q4_0,
            3 => GgmlType::Q4_1,
            6 => GgmlType::Q5_0,
            7 => GgmlType::Q5_1,
            8 => GgmlType::Q8_0,
            10 => GgmlType::Q2K,
            11 => GgmlType::Q3K,
            12 => GgmlType::Q4K,
            13 => GgmlType::Q5K,
            14 => GgmlType::Q6K,
            30 => GgmlType::BF16,
            other => return Err(unsupported_name(other)),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            GgmlType::F32 => "F32",
            GgmlType::F16 => "F16",
            GgmlType::Q4_0 => "Q4_0",
            GgmlType::Q4_1 => "Q4_1",
            GgmlType::Q5_0 => "Q5_0",
            GgmlType::Q5_1 => "Q5_1",
            GgmlType::Q8_0 => "Q8_0",
            GgmlType::Q2K => "Q2_K",
            GgmlType::Q3K => "Q3_K",
            GgmlType::Q4K => "Q4_K",
            GgmlType::Q5K => "Q5_K",
            GgmlType::Q6K => "Q6_K",
            GgmlType::BF16 => "BF16",
        }
    }

    /// (elements per block, bytes per block).
    pub fn block(self) -> (usize, usize) {
        match self {
            GgmlType::F32 => (1, 4),
            GgmlType::F16 | GgmlType::BF16 => (1, 2),
            GgmlType::Q4_0 => (32, 18),
            GgmlType::Q4_1 => (32, 20),
            GgmlType::Q5_0 => (32, 22),
            GgmlType::Q5_1 => (32, 24),
            GgmlType::Q8_0 => (32, 34),
            GgmlType::Q2K => (QK_K, 84),
            GgmlType::Q3K => (QK_K, 110),
            GgmlType::Q4K => (QK_K, 144),
            GgmlType::Q5K => (QK_K, 176),
            GgmlType::Q6K => (QK_K, 210),
        }
    }

    /// Bytes of a row of `n` elements, None when `n` is not a whole number of blocks.
    pub fn row_bytes(self, n: u64) -> Option<u64> {
        let (per, bytes) = self.block();
        (n % per as u64 == 0).then(|| n / per as u64 * bytes as u64)
    }
}

/// Every type `from_id` reads, for a refusal that lists them.
pub const SUPPORTED: &str = "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K";

fn unsupported_name(id: u32) -> &'static str {
    match id {
        4 => "Q4_2",
        5 => "Q4_3",
        9 => "Q8_1",
        15 => "Q8_K",
        16 => "IQ2_XXS",
        17 => "IQ2_XS",
        18 => "IQ3_XXS",
        19 => "IQ1_S",
        20 => "IQ4_NL",
        21 => "IQ3_S",
        22 => "IQ2_S",
        23 => "IQ4_XS",
        24 => "I8",
        25 => "I16",
        26 => "I32",
        27 => "I64",
        28 => "F64",
        29 => "IQ1_M",
        34 => "TQ1_0",
        35 => "TQ2_0",
        39 => "MXFP4",
        _ => "",
    }
}

fn half(b: &[u8], at: usize) -> f32 {
    f16::from_le_bytes([b[at], b[at + 1]]).to_f32()
}

/// `data` (whole blocks of `ty`, as `row_bytes` sized it) as f32, appended to `out`.
pub fn dequantize(ty: GgmlType, data: &[u8], out: &mut Vec<f32>) {
    let (_, size) = ty.block();
    match ty {
        GgmlType::F32 => out.extend(data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        GgmlType::F16 => out.extend(data.chunks_exact(2).map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32())),
        GgmlType::BF16 => out.extend(data.chunks_exact(2).map(|b| bf16::from_le_bytes([b[0], b[1]]).to_f32())),
        _ => {
            for block in data.chunks_exact(size) {
                let start = out.len();
                out.resize(start + ty.block().0, 0.0);
                let y = &mut out[start..];
                match ty {
                    GgmlType::Q4_0 => q4_0(block, y),
                    GgmlType::Q4_1 => q4_1(block, y),
                    GgmlType::Q5_0 => q5_0(block, y),
                    GgmlType::Q5_1 => q5_1(block, y),
                    GgmlType::Q8_0 => q8_0(block, y),
                    GgmlType::Q2K => q2_k(block, y),
                    GgmlType::Q3K => q3_k(block, y),
                    GgmlType::Q4K => q4_k(block, y),
                    GgmlType::Q5K => q5_k(block, y),
                    GgmlType::Q6K => q6_k(block, y),
                    GgmlType::F32 | GgmlType::F16 | GgmlType::BF16 => unreachable!("handled above"),
                }
            }
        }
    }
}

// Q4_0: d (f16), 16 bytes of nibbles; element j is the low nibble of byte j, element j + 16 the high.
fn q4_0(b: &[u8], y: &mut [f32]) {
    let d = half(b, 0);
    for (j, &q) in b[2..18].iter().enumerate() {
        y[j] = ((q & 0x0F) as i32 - 8) as f32 * d;
        y[j + 16] = ((q >> 4) as i32 - 8) as f32 * d;
    }
}

// Q4_1: d, m (f16), 16 bytes of nibbles; x = q * d + m.
fn q4_1(b: &[u8], y: &mut [f32]) {
    let (d, m) = (half(b, 0), half(b, 2));
    for (j, &q) in b[4..20].iter().enumerate() {
        y[j] = (q & 0x0F) as f32 * d + m;
        y[j + 16] = (q >> 4) as f32 * d + m;
    }
}

// Q5_0: d, qh (the 32 fifth bits, little-endian u32), 16 bytes of nibbles; q - 16.
fn q5_0(b: &[u8], y: &mut [f32]) {
    let d = half(b, 0);
    let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
    for (j, &q) in b[6..22].iter().enumerate() {
        let h0 = ((qh >> j) << 4) & 0x10;
        let h1 = (qh >> (j + 12)) & 0x10;
        y[j] = ((q as u32 & 0x0F | h0) as i32 - 16) as f32 * d;
        y[j + 16] = ((q as u32 >> 4 | h1) as i32 - 16) as f32 * d;
    }
}

// Q5_1: d, m, qh, nibbles; x = q * d + m.
fn q5_1(b: &[u8], y: &mut [f32]) {
    let (d, m) = (half(b, 0), half(b, 2));
    let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    for (j, &q) in b[8..24].iter().enumerate() {
        let h0 = ((qh >> j) << 4) & 0x10;
        let h1 = (qh >> (j + 12)) & 0x10;
        y[j] = (q as u32 & 0x0F | h0) as f32 * d + m;
        y[j + 16] = (q as u32 >> 4 | h1) as f32 * d + m;
    }
}

// Q8_0: d, 32 signed bytes.
fn q8_0(b: &[u8], y: &mut [f32]) {
    let d = half(b, 0);
    for (j, &q) in b[2..34].iter().enumerate() {
        y[j] = q as i8 as f32 * d;
    }
}

/// The 6-bit scale and min of sub-block `j` (0..8) packed in the K-quants' 12 scale bytes.
fn scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        ((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4))
    }
}

// Q2_K: scales[16] (low nibble scale, high nibble min), qs[64] (2 bits), d, dmin.
fn q2_k(b: &[u8], y: &mut [f32]) {
    let (scales, qs) = (&b[0..16], &b[16..80]);
    let (d, min) = (half(b, 80), half(b, 82));
    let mut is = 0;
    let mut out = 0;
    for n in 0..2 {
        let q = &qs[n * 32..n * 32 + 32];
        for shift in [0, 2, 4, 6] {
            for half_block in 0..2 {
                let sc = scales[is];
                is += 1;
                let (dl, ml) = (d * (sc & 0x0F) as f32, min * (sc >> 4) as f32);
                for l in 0..16 {
                    y[out] = dl * ((q[half_block * 16 + l] >> shift) & 3) as f32 - ml;
                    out += 1;
                }
            }
        }
    }
}

// Q3_K: hmask[32], qs[64] (2 low bits), scales[12] (sixteen 6-bit scales), d.
fn q3_k(b: &[u8], y: &mut [f32]) {
    let (hmask, qs) = (&b[0..32], &b[32..96]);
    let d_all = half(b, 108);
    // ggml's unpacking of the sixteen 6-bit scales from 12 bytes, as four little-endian u32s.
    let word = |i: usize| u32::from_le_bytes([b[96 + 4 * i], b[97 + 4 * i], b[98 + 4 * i], b[99 + 4 * i]]);
    let (kmask1, kmask2) = (0x0303_0303u32, 0x0f0f_0f0fu32);
    let (a0, a1, tmp) = (word(0), word(1), word(2));
    let aux = [
        (a0 & kmask2) | ((tmp & kmask1) << 4),
        (a1 & kmask2) | (((tmp >> 2) & kmask1) << 4),
        ((a0 >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4),
        ((a1 >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4),
    ];
    let scale = |i: usize| (aux[i / 4] >> (8 * (i % 4))) as u8 as i8;
    let mut is = 0;
    let mut m = 1u8;
    let mut out = 0;
    for n in 0..2 {
        let q = &qs[n * 32..n * 32 + 32];
        for shift in [0, 2, 4, 6] {
            for half_block in 0..2 {
                let dl = d_all * (scale(is) as i32 - 32) as f32;
                is += 1;
                for l in 0..16 {
                    let k = half_block * 16 + l;
                    let low = ((q[k] >> shift) & 3) as i32;
                    let high = if hmask[k] & m != 0 { 0 } else { 4 };
                    y[out] = dl * (low - high) as f32;
                    out += 1;
                }
            }
            m <<= 1;
        }
    }
}

// Q4_K: d, dmin, scales[12], qs[128]; eight sub-blocks of 32 with 6-bit scales and mins.
fn q4_k(b: &[u8], y: &mut [f32]) {
    let (d, min) = (half(b, 0), half(b, 2));
    let (scales, qs) = (&b[4..16], &b[16..144]);
    for j in 0..4 {
        let q = &qs[j * 32..j * 32 + 32];
        let (sc1, m1) = scale_min_k4(2 * j, scales);
        let (sc2, m2) = scale_min_k4(2 * j + 1, scales);
        let (d1, m1) = (d * sc1 as f32, min * m1 as f32);
        let (d2, m2) = (d * sc2 as f32, min * m2 as f32);
        for l in 0..32 {
            y[j * 64 + l] = d1 * (q[l] & 0x0F) as f32 - m1;
            y[j * 64 + 32 + l] = d2 * (q[l] >> 4) as f32 - m2;
        }
    }
}

// Q5_K: d, dmin, scales[12], qh[32], qs[128].
fn q5_k(b: &[u8], y: &mut [f32]) {
    let (d, min) = (half(b, 0), half(b, 2));
    let (scales, qh, qs) = (&b[4..16], &b[16..48], &b[48..176]);
    for j in 0..4 {
        let ql = &qs[j * 32..j * 32 + 32];
        let (u1, u2) = (1u8 << (2 * j), 2u8 << (2 * j));
        let (sc1, m1) = scale_min_k4(2 * j, scales);
        let (sc2, m2) = scale_min_k4(2 * j + 1, scales);
        let (d1, m1) = (d * sc1 as f32, min * m1 as f32);
        let (d2, m2) = (d * sc2 as f32, min * m2 as f32);
        for l in 0..32 {
            let h1 = if qh[l] & u1 != 0 { 16 } else { 0 };
            let h2 = if qh[l] & u2 != 0 { 16 } else { 0 };
            y[j * 64 + l] = d1 * ((ql[l] & 0x0F) + h1) as f32 - m1;
            y[j * 64 + 32 + l] = d2 * ((ql[l] >> 4) + h2) as f32 - m2;
        }
    }
}

// Q6_K: ql[128], qh[64], scales[16] (i8), d.
fn q6_k(b: &[u8], y: &mut [f32]) {
    let (ql_all, qh_all, sc_all) = (&b[0..128], &b[128..192], &b[192..208]);
    let d = half(b, 208);
    for n in 0..2 {
        let (ql, qh, sc) = (&ql_all[n * 64..], &qh_all[n * 32..], &sc_all[n * 8..]);
        let y = &mut y[n * 128..];
        for l in 0..32 {
            let is = l / 16;
            let q1 = ((ql[l] & 0x0F) | ((qh[l] & 3) << 4)) as i32 - 32;
            let q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) as i32 - 32;
            let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i32 - 32;
            let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i32 - 32;
            let s = |k: usize| d * sc[is + k] as i8 as f32;
            y[l] = s(0) * q1 as f32;
            y[l + 32] = s(2) * q2 as f32;
            y[l + 64] = s(4) * q3 as f32;
            y[l + 96] = s(6) * q4 as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16_bytes(x: f32) -> [u8; 2] {
        f16::from_f32(x).to_le_bytes()
    }

    #[test]
    fn q8_0_is_scale_times_signed_byte() {
        let mut block = f16_bytes(0.5).to_vec();
        block.extend((0..32).map(|i| (i as i8 - 16) as u8));
        let mut out = Vec::new();
        dequantize(GgmlType::Q8_0, &block, &mut out);
        assert_eq!(out, (0..32).map(|i| (i - 16) as f32 * 0.5).collect::<Vec<_>>());
    }

    #[test]
    fn q4_0_low_nibbles_first_then_high() {
        let mut block = f16_bytes(2.0).to_vec();
        block.extend((0..16).map(|j| (j as u8) | (15 - j as u8) << 4));
        let mut out = Vec::new();
        dequantize(GgmlType::Q4_0, &block, &mut out);
        for j in 0..16 {
            assert_eq!(out[j], (j as f32 - 8.0) * 2.0);
            assert_eq!(out[j + 16], (15.0 - j as f32 - 8.0) * 2.0);
        }
    }

    #[test]
    fn q5_0_takes_the_fifth_bit_from_qh() {
        let mut block = f16_bytes(1.0).to_vec();
        block.extend(0xFFFF_FFFFu32.to_le_bytes());
        block.extend([0u8; 16]);
        let mut out = Vec::new();
        dequantize(GgmlType::Q5_0, &block, &mut out);
        assert!(out.iter().all(|&x| x == 0.0), "16 - 16 everywhere: {out:?}");
    }

    #[test]
    fn names_the_types_it_does_not_read() {
        assert_eq!(GgmlType::from_id(17), Err("IQ2_XS"));
        assert_eq!(GgmlType::from_id(12), Ok(GgmlType::Q4K));
        assert_eq!(GgmlType::Q6K.row_bytes(512), Some(420));
        assert_eq!(GgmlType::Q4_0.row_bytes(48), None);
    }
}

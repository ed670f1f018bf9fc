//! The flash path: attention by key tiles with an online softmax, as FlashAttention and PyTorch's
//! fused kernel do. Per query row it keeps a running max m, denominator l and output o:
//!   m' = max(m, max_j s_j); l' = l*exp(m - m') + sum_j exp(s_j - m'); o' = o*exp(m - m') + sum_j exp(s_j - m') v_j
//! and returns o / l. It never forms [nH, T, S]: memory is one [T, tile] block per head.
//! `attention.rs` is the explicit twin; tests check they agree on every semantic corner.

use ndarray::{s, Array1, Array2, Array3, ArrayView1, ArrayView3, Axis, Zip};
use serde::Serialize;

use super::attention::{kv_head, max, MaskSpec};
use super::exp::exp;
use super::linear::matmul;
use super::wide::wide;

/// The state of one query row after one key tile, for the flash view.
#[derive(Clone, Debug, Serialize)]
pub struct FlashStep {
    pub key_start: usize,
    pub key_end: usize,
    /// This tile's masked, scaled scores for the row.
    pub scores: Vec<f32>,
    /// Running max after the tile.
    pub m: f32,
    /// Running denominator after the tile.
    pub l: f32,
    /// Running (unnormalised) output after the tile, length d.
    pub o: Vec<f32>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlashRecord {
    pub head: usize,
    pub row: usize,
    pub tile: usize,
    pub steps: Vec<FlashStep>,
    /// o / l at the end: the row's context vector.
    pub output: Vec<f32>,
}

/// q: [T, nH, d], k and v: [S, nKV, d] -> context [T, nH, d]. `probe` = (head, row) to record.
pub fn flash_attention(
    q: ArrayView3<f32>,
    k: ArrayView3<f32>,
    v: ArrayView3<f32>,
    mask: &MaskSpec,
    scale: f32,
    tile: usize,
    probe: Option<(usize, usize)>,
) -> (Array3<f32>, Option<FlashRecord>) {
    let tile = tile.max(1);
    let (t, n_h, d) = q.dim();
    let (s_len, n_kv, _) = k.dim();
    let n_rep = n_h / n_kv;
    let mut context = Array3::zeros((t, n_h, d));
    let mut record = None;
    for h in 0..n_h {
        let kvh = kv_head(h, n_rep);
        let q_h = q.slice(s![.., h, ..]); // (T, d)
        let mut m = Array1::from_elem(t, f32::NEG_INFINITY);
        let mut l = Array1::<f32>::zeros(t);
        let mut o = Array2::<f32>::zeros((t, d));
        let mut steps = Vec::new();
        let watch = probe.filter(|&(ph, row)| ph == h && row < t).map(|(_, row)| row);
        for j0 in (0..s_len).step_by(tile) {
            let j1 = (j0 + tile).min(s_len);
            // Under the causal mask query row i sees keys up to prefix_len + i, so the rows before
            // `first` see none of this tile: their scores are all -inf and their m, l and o stay as
            // they are. Only the rows from `first` on are computed (the tile's part above the
            // diagonal is skipped: about half of the work when T = S).
            let first = if mask.causal { j0.saturating_sub(mask.prefix_len).min(t) } else { 0 };
            let k_tile = k.slice(s![j0..j1, kvh, ..]); // (B, d)
            let v_tile = v.slice(s![j0..j1, kvh, ..]); // (B, d)
            let mut sc = matmul(q_h.slice(s![first.., ..]), k_tile.t()); // (T - first, B)
            let width = j1 - j0;
            wide(#[inline(always)] || {
                for (i, row) in sc.as_slice_mut().expect("a fresh product is standard layout").chunks_exact_mut(width).enumerate() {
                    // Keys of this tile the row sees causally; the rest get -inf, as bias() would give.
                    let seen = mask.visible(first + i, j1).saturating_sub(j0);
                    let (live, future) = row.split_at_mut(seen);
                    future.fill(f32::NEG_INFINITY);
                    match mask.padding {
                        None => live.iter_mut().for_each(|x| *x *= scale),
                        Some(_) => live.iter_mut().enumerate().for_each(|(jj, x)| *x = *x * scale + mask.bias(first + i, j0 + jj)),
                    }
                }
            });
            let tile_scores = watch.map(|row| if row < first { vec![f32::NEG_INFINITY; width] } else { sc.row(row - first).to_vec() });
            let mut alpha = Array1::<f32>::ones(t - first);
            wide(#[inline(always)] || {
                let rows = sc.as_slice_mut().expect("standard layout").chunks_exact_mut(width);
                for (i, (row, (alpha, (m, l)))) in rows.zip(alpha.iter_mut().zip(m.slice_mut(s![first..]).iter_mut().zip(l.slice_mut(s![first..]).iter_mut()))).enumerate() {
                    let seen = mask.visible(first + i, j1).saturating_sub(j0);
                    let (live, future) = row.split_at_mut(seen);
                    future.fill(0.0);
                    let m_new = max(live).max(*m);
                    if m_new == f32::NEG_INFINITY {
                        live.fill(0.0); // nothing visible yet: keep l = 0, o = 0
                        continue;
                    }
                    *alpha = exp(*m - m_new);
                    live.iter_mut().for_each(|x| *x = exp(*x - m_new));
                    *l = *l * *alpha + ArrayView1::from(&*live).sum();
                    *m = m_new;
                }
            });
            let pv = matmul(sc.view(), v_tile); // (T - first, d)
            Zip::from(o.slice_mut(s![first.., ..]).rows_mut()).and(pv.rows()).and(&alpha).for_each(|mut o_row, pv_row, &a| {
                o_row.zip_mut_with(&pv_row, |x, &y| *x = *x * a + y);
            });
            if let (Some(row), Some(scores)) = (watch, tile_scores) {
                steps.push(FlashStep { key_start: j0, key_end: j1, scores, m: m[row], l: l[row], o: o.row(row).to_vec() });
            }
        }
        for (i, mut o_row) in o.axis_iter_mut(Axis(0)).enumerate() {
            let inv = if l[i] > 0.0 { 1.0 / l[i] } else { 0.0 };
            o_row.mapv_inplace(|x| x * inv);
        }
        if let Some(row) = watch {
            record = Some(FlashRecord { head: h, row, tile, steps, output: o.row(row).to_vec() });
        }
        context.slice_mut(s![.., h, ..]).assign(&o);
    }
    (context, record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::attention::naive_attention;

    /// Deterministic pseudo-random fill, so cases are reproducible without a rand crate.
    fn fill(shape: (usize, usize, usize), seed: u64) -> Array3<f32> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        Array3::from_shape_fn(shape, |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
    }

    fn max_rel_diff(a: &Array3<f32>, b: &Array3<f32>) -> f32 {
        let scale = b.iter().fold(0.0f32, |m, x| m.max(x.abs())).max(1e-12);
        Zip::from(a).and(b).fold(0.0f32, |m, x, y| m.max((x - y).abs())) / scale
    }

    struct Case {
        t: usize,
        s: usize,
        n_h: usize,
        n_kv: usize,
        d: usize,
        tile: usize,
        causal: bool,
        padding: Option<Vec<u8>>,
    }

    fn check(c: Case, seed: u64) {
        let q = fill((c.t, c.n_h, c.d), seed);
        let k = fill((c.s, c.n_kv, c.d), seed + 1);
        let v = fill((c.s, c.n_kv, c.d), seed + 2);
        let mask = MaskSpec { causal: c.causal, prefix_len: c.s - c.t, padding: c.padding.as_deref() };
        let scale = 1.0 / (c.d as f32).sqrt();
        let naive = naive_attention(q.view(), k.view(), v.view(), &mask, scale);
        let (flash, _) = flash_attention(q.view(), k.view(), v.view(), &mask, scale, c.tile, None);
        let diff = max_rel_diff(&flash, &naive.context);
        assert!(diff <= 1e-5, "flash differs from naive by {diff} (T={} S={} tile={})", c.t, c.s, c.tile);
        assert!(flash.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn decode_one_query_row_against_a_cache() {
        check(Case { t: 1, s: 37, n_h: 4, n_kv: 2, d: 16, tile: 8, causal: true, padding: None }, 1);
    }

    #[test]
    fn prefill_without_cache() {
        check(Case { t: 33, s: 33, n_h: 2, n_kv: 2, d: 8, tile: 16, causal: true, padding: None }, 2);
    }

    #[test]
    fn prefill_with_cache_offset() {
        check(Case { t: 5, s: 21, n_h: 4, n_kv: 4, d: 8, tile: 4, causal: true, padding: None }, 3);
    }

    #[test]
    fn gqa_and_mqa() {
        check(Case { t: 9, s: 9, n_h: 8, n_kv: 4, d: 8, tile: 3, causal: true, padding: None }, 4);
        check(Case { t: 9, s: 9, n_h: 8, n_kv: 1, d: 8, tile: 5, causal: true, padding: None }, 5);
    }

    #[test]
    fn left_and_inner_padding() {
        let pad = vec![0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1];
        check(Case { t: 11, s: 11, n_h: 2, n_kv: 1, d: 8, tile: 4, causal: true, padding: Some(pad.clone()) }, 6);
        check(Case { t: 11, s: 11, n_h: 2, n_kv: 1, d: 8, tile: 4, causal: false, padding: Some(pad) }, 7);
    }

    #[test]
    fn tile_sizes_that_do_and_do_not_divide_and_exceed_s() {
        for (i, tile) in [1usize, 2, 7, 16, 64, 1000].into_iter().enumerate() {
            check(Case { t: 16, s: 16, n_h: 2, n_kv: 2, d: 4, tile, causal: true, padding: None }, 10 + i as u64);
        }
    }

    #[test]
    fn random_shapes_property() {
        let mut x = 12345u64;
        let mut next = |n: usize| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 33) as usize) % n
        };
        for case in 0..60 {
            let n_kv = [1, 2, 4][next(3)];
            let n_h = n_kv * [1, 2, 4][next(3)];
            let s = 1 + next(70);
            let t = 1 + next(s);
            let d = 2 * (1 + next(12));
            let tile = 1 + next(40);
            let causal = next(4) != 0;
            let padding = if next(2) == 0 { Some((0..s).map(|_| (next(4) != 0) as u8).collect()) } else { None };
            check(Case { t, s, n_h, n_kv, d, tile, causal, padding }, 100 + case);
        }
    }

    /// Longer than a tile several times over with the cache offset and padding, so that whole tiles
    /// lie above the diagonal for the first rows (and are skipped for them).
    #[test]
    fn skipped_tiles_above_the_diagonal() {
        check(Case { t: 50, s: 50, n_h: 2, n_kv: 1, d: 8, tile: 8, causal: true, padding: None }, 20);
        let pad = (0..60).map(|j| (j % 7 != 3) as u8).collect();
        check(Case { t: 45, s: 60, n_h: 4, n_kv: 2, d: 6, tile: 5, causal: true, padding: Some(pad) }, 21);
    }

    /// A recorded row keeps a step for every key tile, the ones it sees none of (skipped in the
    /// computation) as all -inf scores that leave m, l and o as they were.
    #[test]
    fn record_keeps_the_steps_of_tiles_the_row_does_not_see() {
        let (t, s_len, d) = (12, 12, 4);
        let q = fill((t, 1, d), 50);
        let k = fill((s_len, 1, d), 51);
        let v = fill((s_len, 1, d), 52);
        let mask = MaskSpec { causal: true, prefix_len: 0, padding: None };
        let (_, rec) = flash_attention(q.view(), k.view(), v.view(), &mask, 0.5, 4, Some((0, 2)));
        let rec = rec.expect("probe records");
        assert_eq!(rec.steps.iter().map(|s| (s.key_start, s.key_end)).collect::<Vec<_>>(), vec![(0, 4), (4, 8), (8, 12)]);
        assert_eq!(rec.steps[0].scores[3], f32::NEG_INFINITY, "key 3 is row 2's future");
        for later in &rec.steps[1..] {
            assert!(later.scores.iter().all(|&x| x == f32::NEG_INFINITY));
            assert_eq!((later.m, later.l, &later.o), (rec.steps[0].m, rec.steps[0].l, &rec.steps[0].o));
        }
    }

    #[test]
    fn record_of_a_row_ends_at_the_naive_context() {
        let (t, s_len, d) = (6, 6, 8);
        let q = fill((t, 2, d), 40);
        let k = fill((s_len, 1, d), 41);
        let v = fill((s_len, 1, d), 42);
        let mask = MaskSpec { causal: true, prefix_len: 0, padding: None };
        let (ctx, rec) = flash_attention(q.view(), k.view(), v.view(), &mask, 0.5, 4, Some((1, 5)));
        let rec = rec.expect("probe records");
        assert_eq!(rec.steps.len(), 2);
        assert_eq!((rec.steps[1].key_start, rec.steps[1].key_end), (4, 6));
        let last = &rec.steps[1];
        for (i, x) in rec.output.iter().enumerate() {
            assert!((x - last.o[i] / last.l).abs() < 1e-6);
            assert!((x - ctx[[5, 1, i]]).abs() < 1e-6);
        }
    }
}

//! Scaled dot-product attention, the explicit ("naive") path, as MiniMind's manual branch:
//! scores = q·K / sqrt(d), causal -inf on the last T columns, padding (1 - mask) * -1e9, softmax in f32,
//! probs @ V. GQA is repeat_kv by index: query head h reads KV head h / n_rep (it copies nothing).
//! It takes any q, K, V, so lessons can run it on hand-set numbers. `flash.rs` is the tiled twin.

use std::mem::MaybeUninit;

use ndarray::{s, Array2, Array3, ArrayView1, ArrayView2, ArrayView3};

use super::exp::exp;
use super::linear::matmul;
use super::par;
use super::wide::wide;

/// Which keys each query may see. Query row i sits at position `prefix_len + i`; key j at position j.
#[derive(Clone, Copy, Debug)]
pub struct MaskSpec<'a> {
    pub causal: bool,
    pub prefix_len: usize,
    /// Length S, 1 = real token, 0 = padding. `None` = all real.
    pub padding: Option<&'a [u8]>,
}

/// Value padding adds to a score, as MiniMind: (1 - mask) * -1e9.
pub const PADDING_BIAS: f32 = -1e9;

impl MaskSpec<'_> {
    /// How many keys, from the first, query row i may see causally (all S without the causal mask).
    #[inline]
    pub fn visible(&self, i: usize, s_len: usize) -> usize {
        if self.causal {
            (self.prefix_len + i + 1).min(s_len)
        } else {
            s_len
        }
    }

    /// The additive mask for (query row i, key j): 0, -inf (future), or -1e9 (padding key).
    #[inline]
    pub fn bias(&self, i: usize, j: usize) -> f32 {
        let mut b = 0.0;
        if self.causal && j > self.prefix_len + i {
            b = f32::NEG_INFINITY;
        }
        if let Some(p) = self.padding {
            if p[j] == 0 {
                b += PADDING_BIAS;
            }
        }
        b
    }
}

/// Query head h's KV head under repeat_kv.
#[inline]
pub fn kv_head(h: usize, n_rep: usize) -> usize {
    h / n_rep
}

/// Scores of one head: q_h [T, d] against K_h [S, d], times `scale` -> [T, S].
pub fn head_scores(q_h: ArrayView2<f32>, k_h: ArrayView2<f32>, scale: f32) -> Array2<f32> {
    let mut s = matmul(q_h, k_h.t());
    s.mapv_inplace(|v| v * scale);
    s
}

/// Adds the mask bias to a [T, S] block in place.
pub fn mask_in_place(scores: &mut Array2<f32>, mask: &MaskSpec) {
    for ((i, j), v) in scores.indexed_iter_mut() {
        *v += mask.bias(i, j);
    }
}

/// Row softmax in f32. A row that is -inf everywhere gives zeros (never NaN).
pub fn softmax_rows(x: &Array2<f32>) -> Array2<f32> {
    let mut out = x.as_standard_layout().into_owned();
    let s_len = out.ncols();
    if s_len > 0 {
        for row in out.as_slice_mut().expect("standard layout").chunks_exact_mut(s_len) {
            softmax_in_place(row, s_len);
        }
    }
    out
}

/// One row's softmax, in place, where only the first `seen` entries can be finite (the causal
/// future is -inf): the rest get weight exactly 0 without an exp. A row with no finite entry gives
/// zeros; a masked (-inf) entry among the first `seen` gets exactly 0 too (`exp` returns 0 there).
#[inline(always)]
fn softmax_in_place(row: &mut [f32], seen: usize) {
    let (live, future) = row.split_at_mut(seen);
    future.fill(0.0);
    let m = max(live);
    if m == f32::NEG_INFINITY {
        live.fill(0.0);
        return;
    }
    live.iter_mut().for_each(|v| *v = exp(*v - m));
    let sum = ArrayView1::from(&*live).sum();
    live.iter_mut().for_each(|v| *v /= sum);
}

/// The largest entry (-inf for none; NaN is passed over, as f32::max does), in eight lanes of
/// comparisons that vectorise: f32::max compiles to a call per entry in wasm32.
#[inline(always)]
pub(crate) fn max(x: &[f32]) -> f32 {
    let bigger = |a: f32, b: f32| if b > a { b } else { a };
    let mut lanes = [f32::NEG_INFINITY; 8];
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l = bigger(*l, v);
        }
    }
    lanes.into_iter().chain(rest.iter().copied()).fold(f32::NEG_INFINITY, bigger)
}

/// Everything the explicit path computes, each [nH, T, S] except `context` [T, nH, d].
pub struct NaiveOut {
    pub scores: Array3<f32>,
    pub masked: Array3<f32>,
    pub probs: Array3<f32>,
    pub context: Array3<f32>,
}

/// q: [T, nH, d], k and v: [S, nKV, d]. `scale` is 1/sqrt(d) in the model; lessons may pick another.
pub fn naive_attention(q: ArrayView3<f32>, k: ArrayView3<f32>, v: ArrayView3<f32>, mask: &MaskSpec, scale: f32) -> NaiveOut {
    let (t, n_h, d) = q.dim();
    let (s_len, n_kv, _) = k.dim();
    let n_rep = n_h / n_kv;
    let cells = t * s_len;
    // Each head writes its [T, S] block of the [nH, T, S] tables in place (no zeroing first, no
    // per-head copies); with `threads` the heads run across the pool (par.rs), each on one thread.
    let mut tables = [(); 3].map(|_| Vec::<f32>::with_capacity(n_h * cells));
    let mut contexts: Vec<Option<Array2<f32>>> = vec![None; n_h];
    {
        let [a, b, c] = &mut tables;
        let (a, b, c) = (blocks(a, n_h, cells), blocks(b, n_h, cells), blocks(c, n_h, cells));
        let heads = contexts.iter_mut().zip(a.into_iter().zip(b).zip(c)).collect::<Vec<_>>();
        par::for_each(heads, |h, (ctx, ((a, b), c))| *ctx = Some(head_into(q, k, v, h, n_rep, mask, scale, [a, b, c])));
    }
    // SAFETY: `head_into` wrote every cell of each head's block, and the blocks cover n_h * cells.
    tables.iter_mut().for_each(|t| unsafe { t.set_len(n_h * cells) });
    let mut context = Array3::zeros((t, n_h, d));
    for (h, ctx) in contexts.into_iter().enumerate() {
        context.slice_mut(s![.., h, ..]).assign(&ctx.expect("every head ran"));
    }
    let [scores, masked, probs] = tables.map(|a| Array3::from_shape_vec((n_h, t, s_len), a).expect("every head wrote [T, S]"));
    NaiveOut { scores, masked, probs, context }
}

/// The spare capacity of `table` as `n` blocks of `cells` cells, in order (empty ones too).
fn blocks(table: &mut Vec<f32>, n: usize, cells: usize) -> Vec<&mut [MaybeUninit<f32>]> {
    let mut rest = &mut table.spare_capacity_mut()[..n * cells];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let (block, tail) = rest.split_at_mut(cells);
        out.push(block);
        rest = tail;
    }
    out
}

/// One head of the explicit path: each field [T, S], context [T, d].
pub struct HeadOut {
    pub scores: Array2<f32>,
    pub masked: Array2<f32>,
    pub probs: Array2<f32>,
    pub context: Array2<f32>,
}

pub fn head(q: ArrayView3<f32>, k: ArrayView3<f32>, v: ArrayView3<f32>, h: usize, n_rep: usize, mask: &MaskSpec, scale: f32) -> HeadOut {
    let cells = q.dim().0 * k.dim().0;
    let mut tables = [(); 3].map(|_| Vec::<f32>::with_capacity(cells));
    let [a, b, c] = &mut tables.each_mut().map(|t| blocks(t, 1, cells).pop().expect("one block"));
    let context = head_into(q, k, v, h, n_rep, mask, scale, [a, b, c]);
    // SAFETY: `head_into` wrote every one of the `cells` cells of each table.
    tables.iter_mut().for_each(|t| unsafe { t.set_len(cells) });
    let [scores, masked, probs] = tables.map(|a| Array2::from_shape_vec((q.dim().0, k.dim().0), a).expect("the head wrote [T, S]"));
    HeadOut { scores, masked, probs, context }
}

/// Writes `values` into `cells` (as many of each) and returns them as initialised.
#[inline(always)]
fn put(cells: &mut [MaybeUninit<f32>], values: impl Iterator<Item = f32>) -> &mut [f32] {
    let mut n = 0;
    for (c, v) in cells.iter_mut().zip(values) {
        c.write(v);
        n += 1;
    }
    assert_eq!(n, cells.len(), "a value for every cell");
    // SAFETY: every cell was just written; MaybeUninit<f32> has f32's layout.
    unsafe { &mut *(cells as *mut [MaybeUninit<f32>] as *mut [f32]) }
}

/// `cells` as the f32s they hold.
///
/// # Safety
/// Every cell must have been written.
unsafe fn written(cells: &[MaybeUninit<f32>]) -> &[f32] {
    // SAFETY: the caller wrote every cell; MaybeUninit<f32> has f32's layout.
    unsafe { &*(cells as *const [MaybeUninit<f32>] as *const [f32]) }
}

/// Writes one head's [T, S] scores, masked scores and probabilities into `tables` (each `T * S`
/// cells, every one written); returns its context [T, d]. Scale, mask and softmax go row by row
/// while the row is in cache: the masked scores are the scaled ones with the causal future set to
/// -inf (never read), the softmax skips that future.
#[allow(clippy::too_many_arguments)]
fn head_into(q: ArrayView3<f32>, k: ArrayView3<f32>, v: ArrayView3<f32>, h: usize, n_rep: usize, mask: &MaskSpec, scale: f32, tables: [&mut [MaybeUninit<f32>]; 3]) -> Array2<f32> {
    let kvh = kv_head(h, n_rep);
    let raw = matmul(q.slice(s![.., h, ..]), k.slice(s![.., kvh, ..]).t());
    let (t, s_len) = raw.dim();
    let [scores, masked, probs] = tables;
    assert!(scores.len() == t * s_len && masked.len() == t * s_len && probs.len() == t * s_len, "[T, S] blocks");
    wide(#[inline(always)] || {
        for (i, raw) in raw.outer_iter().enumerate() {
            let at = i * s_len;
            let row = put(&mut scores[at..at + s_len], raw.iter().map(|r| r * scale));
            let seen = mask.visible(i, s_len);
            let (live, future) = masked[at..at + s_len].split_at_mut(seen);
            let live = put(live, row[..seen].iter().copied());
            put(future, std::iter::repeat_n(f32::NEG_INFINITY, s_len - seen));
            if let Some(p) = mask.padding {
                live.iter_mut().zip(p).filter(|(_, &p)| p == 0).for_each(|(m, _)| *m += PADDING_BIAS);
            }
            // SAFETY: both parts of the masked row were just written.
            let row = unsafe { written(&masked[at..at + s_len]) };
            softmax_in_place(put(&mut probs[at..at + s_len], row.iter().copied()), seen);
        }
    });
    // SAFETY: every row of the block was written above.
    let probs = unsafe { written(probs) };
    probs_times_v(ArrayView2::from_shape((t, s_len), probs).expect("[T, S] rows"), v.slice(s![.., kvh, ..]), mask)
}

/// Query rows per product in `probs_times_v`: smaller blocks skip more of the causal future, each
/// block is one more call (and in wasm32 one more pack of V's rows it reads).
const PV_ROWS: usize = 32;

/// probs [T, S] · V [S, d] -> context [T, d], reading only the keys the rows can see: the causal
/// future's probabilities are exact zeros (`softmax_in_place`), so each block of PV_ROWS rows is
/// multiplied by the keys up to the ones its last row sees, about half of the product when T = S.
fn probs_times_v(probs: ArrayView2<f32>, v: ArrayView2<f32>, mask: &MaskSpec) -> Array2<f32> {
    let (t, s_len) = probs.dim();
    let mut context = Vec::with_capacity(t * v.ncols());
    for i0 in (0..t).step_by(PV_ROWS) {
        let i1 = (i0 + PV_ROWS).min(t);
        let seen = mask.visible(i1 - 1, s_len);
        let block = matmul(probs.slice(s![i0..i1, ..seen]), v.slice(s![..seen, ..]));
        context.extend(block.into_raw_vec_and_offset().0);
    }
    Array2::from_shape_vec((t, v.ncols()), context).expect("every block appended its rows")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, Array3, Axis};

    fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
    }

    /// The first seed: tokens 小红 / 很 / 她, the seed's 4-dim Q and K, no 1/sqrt(d) scale.
    #[test]
    fn seed_example_row_she_attends_to_xiaohong() {
        let q = array![[0.1f32, 0.2, 0.3, 0.1], [0.0, 0.1, 0.0, 0.2], [0.9, 0.1, 0.8, 0.0]];
        let k = array![[0.8f32, 0.2, 0.9, 0.1], [0.0, 0.3, 0.1, 0.5], [0.7, 0.1, 0.7, 0.0]];
        let scores = head_scores(q.view(), k.view(), 1.0);
        let expect = [[0.40, 0.14, 0.30], [0.04, 0.13, 0.01], [1.46, 0.11, 1.20]];
        for (i, row) in expect.iter().enumerate() {
            assert!(close(&scores.row(i).to_vec(), row, 1e-5), "{scores}");
        }
        let probs = softmax_rows(&scores);
        assert!(close(&probs.row(0).to_vec(), &[0.3737, 0.2881, 0.3381], 1e-4), "{probs}");
        assert!(close(&probs.row(2).to_vec(), &[0.4925, 0.1277, 0.3798], 1e-4), "{probs}");
    }

    #[test]
    fn seed_softmax_of_small_and_large_scores() {
        let p = softmax_rows(&array![[1.0f32, 2.0, 3.0], [10.0, 20.0, 30.0]]);
        assert!(close(&p.row(0).to_vec(), &[0.090, 0.245, 0.665], 1e-3));
        assert!(p[[1, 2]] > 0.9999 && p[[1, 0]] < 1e-8);
    }

    #[test]
    fn seed_causal_example_true_values() {
        // The seed prints [0.24, 0.47, 0.29] for this row; the real softmax is below.
        let p = softmax_rows(&array![[0.3f32, 0.7, 0.4]]);
        assert!(close(&p.row(0).to_vec(), &[0.278, 0.415, 0.307], 1e-3), "{p}");
    }

    #[test]
    fn causal_mask_with_cache_offset_hides_only_future_keys() {
        let m = MaskSpec { causal: true, prefix_len: 3, padding: None };
        assert_eq!(m.bias(0, 3), 0.0);
        assert_eq!(m.bias(0, 4), f32::NEG_INFINITY);
        assert_eq!(m.bias(1, 4), 0.0);
    }

    #[test]
    fn padding_and_causal_together() {
        let pad = [0u8, 1, 1];
        let m = MaskSpec { causal: true, prefix_len: 0, padding: Some(&pad) };
        assert_eq!(m.bias(1, 0), PADDING_BIAS);
        assert_eq!(m.bias(0, 2), f32::NEG_INFINITY);
    }

    /// q [T, nH, d], K/V [S, nKV, d] filled with varied values.
    fn qkv(t: usize, s_len: usize, n_h: usize, n_kv: usize, d: usize) -> [Array3<f32>; 3] {
        let fill = |shape: (usize, usize, usize), seed: usize| Array3::from_shape_fn(shape, |(a, b, c)| (((a * 31 + b * 17 + c * 7 + seed) % 23) as f32 - 11.0) / 9.0);
        [fill((t, n_h, d), 1), fill((s_len, n_kv, d), 2), fill((s_len, n_kv, d), 3)]
    }

    /// The heads written in place ([nH, T, S] blocks) are each head's own tables and context, with a
    /// cache prefix, padding, GQA, and an empty input.
    #[test]
    fn naive_attention_is_its_heads() {
        let pad = [0u8, 1, 1, 1, 1, 1, 1];
        for (t, s_len, prefix) in [(5, 7, 2), (7, 7, 0), (0, 0, 0), (1, 3, 2)] {
            let [q, k, v] = qkv(t, s_len, 4, 2, 6);
            let mask = MaskSpec { causal: true, prefix_len: prefix, padding: (s_len == 7).then_some(&pad[..]) };
            let all = naive_attention(q.view(), k.view(), v.view(), &mask, 0.4);
            for h in 0..4 {
                let one = head(q.view(), k.view(), v.view(), h, 2, &mask, 0.4);
                assert_eq!(all.scores.index_axis(Axis(0), h), one.scores);
                assert_eq!(all.masked.index_axis(Axis(0), h), one.masked);
                assert_eq!(all.probs.index_axis(Axis(0), h), one.probs);
                assert_eq!(all.context.slice(s![.., h, ..]), one.context);
            }
        }
    }

    /// With `threads`, the heads run across a pool: the same bits as on one thread.
    #[cfg(feature = "threads")]
    #[test]
    fn threads_give_one_threads_bits() {
        let pool = |n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        let [q, k, v] = qkv(70, 70, 8, 4, 16);
        let mask = MaskSpec { causal: true, prefix_len: 0, padding: None };
        let run = |n| pool(n).install(|| naive_attention(q.view(), k.view(), v.view(), &mask, 0.25));
        let (one, three) = (run(1), run(3));
        let bits = |a: &Array3<f32>| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for (a, b) in [(&one.scores, &three.scores), (&one.masked, &three.masked), (&one.probs, &three.probs), (&one.context, &three.context)] {
            assert_eq!(bits(a), bits(b));
        }
    }

    #[test]
    fn fully_masked_row_is_zeros_not_nan() {
        let p = softmax_rows(&array![[f32::NEG_INFINITY, f32::NEG_INFINITY]]);
        assert_eq!(p.row(0).to_vec(), vec![0.0, 0.0]);
    }

    /// The fused row pass against the definition, in f64: scores, masked scores and probabilities of
    /// every head with a cache prefix and a padding key, and the causal future's weights exactly 0.
    #[test]
    fn fused_rows_match_the_definition() {
        let (t, p, n_h, n_kv, d) = (5, 2, 4, 2, 3);
        let f = |i: usize| ((i * 7919 % 97) as f32 / 97.0 - 0.5) * 3.0;
        let q = Array3::from_shape_fn((t, n_h, d), |(a, b, c)| f(a * 31 + b * 7 + c));
        let k = Array3::from_shape_fn((p + t, n_kv, d), |(a, b, c)| f(a * 13 + b * 5 + c + 400));
        let v = Array3::from_shape_fn((p + t, n_kv, d), |(a, b, c)| f(a * 11 + b * 3 + c + 900));
        let pad = [1u8, 0, 1, 1, 1, 1, 1];
        let mask = MaskSpec { causal: true, prefix_len: p, padding: Some(&pad) };
        let out = naive_attention(q.view(), k.view(), v.view(), &mask, 0.5);
        for h in 0..n_h {
            for i in 0..t {
                let raw: Vec<f64> = (0..p + t).map(|j| (0..d).map(|c| q[[i, h, c]] as f64 * k[[j, h / 2, c]] as f64).sum::<f64>() * 0.5).collect();
                let masked: Vec<f64> = raw.iter().enumerate().map(|(j, &x)| if j > p + i { f64::NEG_INFINITY } else if pad[j] == 0 { x - 1e9 } else { x }).collect();
                let top = masked.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let sum: f64 = masked.iter().map(|x| (x - top).exp()).sum();
                for j in 0..p + t {
                    assert!((out.scores[[h, i, j]] as f64 - raw[j]).abs() < 1e-5);
                    assert!(out.masked[[h, i, j]] as f64 == masked[j] || (out.masked[[h, i, j]] as f64 - masked[j]).abs() < 1e-5 * masked[j].abs().max(1.0));
                    let want = (masked[j] - top).exp() / sum;
                    assert!((out.probs[[h, i, j]] as f64 - want).abs() < 1e-6, "head {h} row {i} key {j}");
                    if j > p + i {
                        assert_eq!(out.probs[[h, i, j]], 0.0);
                    }
                }
            }
        }
    }

    /// The context reads only the keys each block of 32 query rows sees: it must still be the whole
    /// probs · V (in f64), with blocks that split the rows unevenly, a cached prefix, and without the
    /// causal mask (one block of every key).
    #[test]
    fn context_is_probs_times_v_over_the_keys_each_block_sees() {
        let f = |i: usize| ((i * 7919 % 101) as f32 / 101.0 - 0.5) * 2.0;
        for (t, s_len, causal) in [(70, 70, true), (40, 75, true), (33, 33, false)] {
            let (n_h, n_kv, d) = (2, 1, 5);
            let q = Array3::from_shape_fn((t, n_h, d), |(a, b, c)| f(a * 31 + b * 7 + c));
            let k = Array3::from_shape_fn((s_len, n_kv, d), |(a, b, c)| f(a * 13 + b * 5 + c + 400));
            let v = Array3::from_shape_fn((s_len, n_kv, d), |(a, b, c)| f(a * 11 + b * 3 + c + 900));
            let mask = MaskSpec { causal, prefix_len: s_len - t, padding: None };
            let out = naive_attention(q.view(), k.view(), v.view(), &mask, 0.4);
            for ((i, h, c), &got) in out.context.indexed_iter() {
                let want: f64 = (0..s_len).map(|j| out.probs[[h, i, j]] as f64 * v[[j, 0, c]] as f64).sum();
                assert!((got as f64 - want).abs() < 1e-5, "T={t} S={s_len} row {i} head {h}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn gqa_query_heads_share_their_kv_head() {
        assert_eq!((0..8).map(|h| kv_head(h, 2)).collect::<Vec<_>>(), vec![0, 0, 1, 1, 2, 2, 3, 3]);
    }
}

//! Splitting work across threads: a product's output rows (`for_row_chunks`) and independent items
//! such as attention's heads (`for_each`). With the `threads` feature the chunks run on
//! rayon's pool (in the page: Web Workers sharing the module's memory, started by `initThreadPool`;
//! natively rayon's own threads); without it, or on a pool of one thread, in turn on the caller's.
//!
//! Each output cell is computed by one thread exactly as the one-thread path computes it (same
//! blocks along k, same order of additions), so the numbers are bit for bit the same however many
//! threads there are (tests/e2e/wasm_builds.test.mjs checks that in Chromium).

use std::mem::MaybeUninit;

/// Threads the chunks can run on: rayon's pool size with `threads`, else 1.
pub fn threads() -> usize {
    #[cfg(feature = "threads")]
    let n = rayon::current_num_threads();
    #[cfg(not(feature = "threads"))]
    let n = 1;
    n
}

/// Products smaller than this many multiply-adds run on the caller's thread: waking the pool
/// costs more than splitting them saves (attention's per-head products at short lengths, whose
/// heads are split instead: `for_each`).
pub const MIN_SPLIT: usize = 1 << 22;

/// Runs `f(first_row, rows, cells)` over `[m, n]` row-major output cells `c` (a product with inner
/// dimension `k`), in chunks of whole rows, one chunk per thread: each chunk's row count a multiple
/// of `unit` (a kernel's register tile) but the last. One thread, no more rows than `unit`, or fewer
/// than `MIN_SPLIT` multiply-adds is one call over all of `c`.
pub fn for_row_chunks<F>(c: &mut [MaybeUninit<f32>], m: usize, n: usize, k: usize, unit: usize, f: F)
where
    F: Fn(usize, usize, &mut [MaybeUninit<f32>]) + Sync + Send,
{
    assert_eq!(c.len(), m * n, "[{m}, {n}] cells");
    let rows = chunk_rows(m, unit, threads());
    if rows >= m || n == 0 || m * n * k < MIN_SPLIT {
        return f(0, m, c);
    }
    #[cfg(feature = "threads")]
    {
        use rayon::prelude::*;
        c.par_chunks_mut(rows * n).enumerate().for_each(|(i, cells)| f(i * rows, cells.len() / n, cells));
    }
    #[cfg(not(feature = "threads"))]
    c.chunks_mut(rows * n).enumerate().for_each(|(i, cells)| f(i * rows, cells.len() / n, cells));
}

/// Runs `f(i, item)` for every item: across the pool with `threads` (each item on one thread, so
/// what it computes does not depend on the thread count), else in turn.
pub fn for_each<T: Send, F>(items: Vec<T>, f: F)
where
    F: Fn(usize, T) + Sync + Send,
{
    #[cfg(feature = "threads")]
    {
        use rayon::prelude::*;
        if threads() > 1 && items.len() > 1 {
            return items.into_par_iter().enumerate().for_each(|(i, item)| f(i, item));
        }
    }
    items.into_iter().enumerate().for_each(|(i, item)| f(i, item));
}

/// Rows per chunk: m shared among `threads`, rounded up to whole units.
fn chunk_rows(m: usize, unit: usize, threads: usize) -> usize {
    m.div_ceil(threads.max(1)).next_multiple_of(unit.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_whole_units_and_cover_every_row() {
        assert_eq!(chunk_rows(128, 4, 1), 128);
        assert_eq!(chunk_rows(128, 4, 2), 64);
        assert_eq!(chunk_rows(128, 6, 2), 66);
        assert_eq!(chunk_rows(13, 4, 8), 4);
        assert_eq!(chunk_rows(1, 6, 4), 6);
        for (m, n, unit) in [(1, 3, 4), (13, 5, 4), (128, 7, 6), (200, 1, 4), (5, 2, 6)] {
            let mut c = vec![MaybeUninit::<f32>::uninit(); m * n];
            let seen = std::sync::Mutex::new(vec![0u8; m]);
            for_row_chunks(&mut c, m, n, MIN_SPLIT, unit, |first, rows, cells| {
                assert_eq!(cells.len(), rows * n);
                assert!(first % unit == 0 && (rows % unit == 0 || first + rows == m));
                (first..first + rows).for_each(|r| seen.lock().unwrap()[r] += 1);
            });
            assert!(seen.into_inner().unwrap().iter().all(|&s| s == 1), "[{m}, {n}] by {unit}");
        }
    }
}

//! A weight `[n, k]` packed once, at load, into the column panels a micro-kernel reads: panel p
//! holds `W[p*NR + j, kk]` at `p*k*NR + kk*NR + j`, the last panel zero-padded to NR columns. The wasm
//! kernel reads 12-column panels (three v128), the native AVX-512 kernel 64-column ones (four zmm),
//! the AVX2 kernel 16-column ones (two ymm).
//! The numbers start on a 64-byte line, so that a zmm load of a panel row never straddles two.

use std::mem::MaybeUninit;

use ndarray::{Array2, ArrayView2};

use crate::model::{par, scratch};

/// 16 f32 on one cache line: the unit the panels' storage is allocated in.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f32; 16]);

#[derive(Clone)]
pub(super) struct Panels<const NR: usize> {
    pub(super) n: usize,
    pub(super) k: usize,
    lines: Vec<Line>,
}

impl<const NR: usize> std::fmt::Debug for Panels<NR> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Panels<{NR}> [{}, {}]", self.n, self.k)
    }
}

impl<const NR: usize> Panels<NR> {
    /// How many f32 the panels of an `[n, k]` matrix hold: n rounded up to whole panels, times k.
    pub(super) fn floats(n: u64, k: u64) -> u64 {
        n.div_ceil(NR as u64).saturating_mul(NR as u64).saturating_mul(k)
    }

    pub(super) fn new(w: ArrayView2<f32>) -> Self {
        let (n, k) = w.dim();
        Self::pack(n, k, w.outer_iter().map(|row| row.into_iter().copied()))
    }

    /// Panels of an `[n, k]` matrix given row by row.
    fn pack<R: Iterator<Item = f32>>(n: usize, k: usize, rows: impl Iterator<Item = R>) -> Self {
        let len = n.div_ceil(NR) * k * NR;
        let mut panels = Panels { n, k, lines: vec![Line([0.0; 16]); len.div_ceil(16)] };
        let data = panels.data_mut();
        for (j, row) in rows.enumerate() {
            let base = Self::at(k, j);
            for (kk, x) in row.enumerate() {
                data[base + kk * NR] = x;
            }
        }
        panels
    }

    /// Every panel, one after another: `n.div_ceil(NR) * k * NR` f32.
    pub(super) fn data(&self) -> &[f32] {
        let len = self.n.div_ceil(NR) * self.k * NR;
        // SAFETY: a Line is 16 f32 with no padding (repr(C), 64 bytes), so the lines are
        // 16 * lines.len() >= len f32 in a row, initialised and borrowed with self.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr() as *const f32, len) }
    }

    fn data_mut(&mut self) -> &mut [f32] {
        let len = self.n.div_ceil(NR) * self.k * NR;
        // SAFETY: as in `data`, borrowed mutably with self.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr() as *mut f32, len) }
    }

    /// Where `W[j, 0]` is in the data of an `[_, k]` matrix; `W[j, kk]` follows at every NR-th place.
    fn at(k: usize, j: usize) -> usize {
        (j / NR) * k * NR + j % NR
    }

    /// Row j, W[j, ..], read in place.
    fn row(&self, j: usize) -> impl Iterator<Item = f32> + '_ {
        assert!(j < self.n, "row {j} of a [{}, {}] weight", self.n, self.k);
        self.data()[Self::at(self.k, j)..].iter().step_by(NR).take(self.k).copied()
    }

    pub(super) fn rows(&self, ids: &[usize]) -> Array2<f32> {
        let mut out = Array2::zeros((ids.len(), self.k));
        for (mut out, &j) in out.outer_iter_mut().zip(ids) {
            out.iter_mut().zip(self.row(j)).for_each(|(o, x)| *o = x);
        }
        out
    }

    pub(super) fn to_array(&self) -> Array2<f32> {
        self.rows(&(0..self.n).collect::<Vec<_>>())
    }

    /// x: [M, k] -> [M, n] by a panel kernel: the shapes checked, an empty product zeros, else
    /// `rows_of(x, rows, self, c)` on x in standard layout over chunks of whole `unit`-row groups of
    /// an unwritten output (`par::for_row_chunks`): x and c from the chunk's first row. The output
    /// comes from `scratch::take` (natively, a block a finished layer handed back).
    ///
    /// # Safety
    /// `rows_of` must store every one of the `rows * n` cells it is given: the output is returned as
    /// they leave it.
    pub(super) unsafe fn product<F>(&self, x: ArrayView2<f32>, unit: usize, rows_of: F) -> Array2<f32>
    where
        F: Fn(&[f32], usize, &Self, &mut [MaybeUninit<f32>]) + Sync + Send,
    {
        let (m, k) = x.dim();
        assert_eq!(k, self.k, "linear of [{m}, {k}] by a weight [{}, {}]", self.n, self.k);
        if m == 0 || self.n == 0 || k == 0 {
            return Array2::zeros((m, self.n));
        }
        let x = x.as_standard_layout();
        let xs = x.as_slice().expect("standard layout");
        let mut c = Array2::from_shape_vec((m, self.n), scratch::take(m * self.n)).expect("[m, n] cells");
        let cs = c.as_slice_mut().expect("fresh array");
        par::for_row_chunks(cs, m, self.n, k, unit, |first, rows, cs| rows_of(&xs[first * k..], rows, self, cs));
        // SAFETY: the chunks cover every row of c, and `rows_of` stores every cell of its rows (the
        // caller's promise).
        unsafe { c.assume_init() }
    }

    /// The panels of W^T `[k, n]`, read from these: its row j is W's column j.
    pub(super) fn transposed(&self) -> Self {
        let data = self.data();
        Self::pack(self.k, self.n, (0..self.k).map(|j| (0..self.n).map(move |r| data[Self::at(self.k, r) + j * NR])))
    }
}

/// The length of the inner dimension's blocks: as few as hold at most `most` steps each, all of
/// equal length (2432 by 384 is 6 x 348 + 344, not 6 x 384 + 128: a short last block would load and
/// store c for few steps). Used by the x86-64 kernels.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn k_block(k: usize, most: usize) -> usize {
    k.div_ceil(k.div_ceil(most))
}

/// `m` rows in groups of `mr` as (first row, rows), the last two evened out where one or two rows
/// would be left over (with `mr` = 6, 128 = 20 x 6 + 2 x 4, not 21 x 6 + 2): a one- or two-row tile
/// runs too few FMA chains to keep the CPU's FMA units busy. Used by the x86-64 kernels.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) fn row_groups(m: usize, mr: usize) -> impl Iterator<Item = (usize, usize)> + Clone {
    let tail = if m > mr && m % mr != 0 && m % mr <= 2 { mr + m % mr } else { 0 };
    let whole = (0..m - tail).step_by(mr).map(move |g| (g, mr.min(m - g)));
    let g = m - tail;
    whole.chain((tail > 0).then_some([(g, tail / 2), (g + tail / 2, tail - tail / 2)]).into_iter().flatten())
}

/// One micro-kernel call of a panel kernel (`avx512.rs`, `wasm.rs`, whichever this build has): R
/// rows of x (from column k0, row stride k) times one panel slice, into R rows of c (from the
/// panel's first column, row stride n), `cols` of them real.
pub(super) struct Tile<'a> {
    pub(super) x: &'a [f32],
    pub(super) k: usize,
    pub(super) panel: &'a [f32],
    pub(super) kc: usize,
    pub(super) c: &'a mut [std::mem::MaybeUninit<f32>],
    pub(super) n: usize,
    pub(super) cols: usize,
    /// the first k block stores into c (uninitialised until then), later ones add to it
    pub(super) first: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(n: usize, k: usize) -> Array2<f32> {
        Array2::from_shape_fn((n, k), |(i, j)| (i * 31 + j * 7) as f32 * 0.25 - 3.0)
    }

    /// Every number where the micro-kernel reads it, zeros past the last real column, the start on a
    /// cache line, and the rows, the whole matrix and the transpose read back exactly, at sizes that
    /// fill panels partly, exactly and over several.
    fn layout_and_readers<const NR: usize>() {
        for (n, k) in [(1, 1), (7, 5), (8, 3), (13, 11), (17, 300), (32, 2), (33, 9), (64, 3), (65, 2), (70, 4), (128, 5)] {
            let w = filled(n, k);
            let p = Panels::<NR>::new(w.view());
            assert_eq!(p.data().len(), n.div_ceil(NR) * k * NR);
            assert_eq!(p.data().len() as u64, Panels::<NR>::floats(n as u64, k as u64));
            assert_eq!(p.data().as_ptr() as usize % 64, 0);
            assert_eq!(p.clone().data().as_ptr() as usize % 64, 0, "a clone starts on a line too");
            for (i, &x) in p.data().iter().enumerate() {
                let (panel, kk, col) = (i / (k * NR), i / NR % k, i % NR);
                let j = panel * NR + col;
                assert_eq!(x, if j < n { w[[j, kk]] } else { 0.0 }, "[{n}, {k}] panel {panel} row {kk} lane {col}");
            }
            assert_eq!(p.to_array(), w);
            assert_eq!(p.rows(&[n - 1, 0, n / 2]), w.select(ndarray::Axis(0), &[n - 1, 0, n / 2]));
            let t = p.transposed();
            assert_eq!((t.n, t.k), (k, n));
            assert_eq!(t.to_array(), w.t());
        }
    }

    /// The groups cover every row once, in order, none longer than asked, and with the kernels'
    /// six none of one or two rows where longer ones could be evened out; the blocks cover k and differ by at most one step.
    #[test]
    fn row_groups_and_k_blocks() {
        for mr in [4, 6] {
            for m in 1..60 {
                let groups: Vec<_> = row_groups(m, mr).collect();
                let mut next = 0;
                for &(g, rows) in &groups {
                    assert_eq!(g, next, "m = {m}: {groups:?}");
                    assert!((1..=mr).contains(&rows), "m = {m}: {groups:?}");
                    next += rows;
                }
                assert_eq!(next, m, "m = {m}: {groups:?}");
                if m > mr && mr == 6 {
                    assert!(groups.iter().all(|&(_, rows)| rows > 2), "m = {m}: {groups:?}");
                }
            }
        }
        assert_eq!(row_groups(128, 6).filter(|&(_, rows)| rows != 6).collect::<Vec<_>>(), [(120, 4), (124, 4)]);
        for (k, most) in [(1, 384), (384, 384), (385, 384), (768, 384), (2432, 384), (100, 7)] {
            let kb = k_block(k, most);
            assert!(kb <= most && kb > 0);
            let last = k - (k.div_ceil(kb) - 1) * kb;
            assert!(last > 0 && kb - last < k.div_ceil(kb), "k = {k}: blocks of {kb}, the last {last}");
        }
        assert_eq!(k_block(2432, 384), 348);
    }

    #[test]
    fn eight_column_panels() {
        layout_and_readers::<8>();
    }

    #[test]
    fn twelve_column_panels() {
        layout_and_readers::<12>();
    }

    #[test]
    fn sixteen_column_panels() {
        layout_and_readers::<16>();
    }

    #[test]
    fn sixty_four_column_panels() {
        layout_and_readers::<64>();
    }
}

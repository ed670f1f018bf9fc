//! Each kernel run once on host arrays: the GPU twins of the CPU functions tests/gpu.rs compares them
//! with (`linear`, `rms_norm`, `RopeTable::apply`, `naive_attention`, `flash_attention`, SwiGLU's
//! activation, the residual add), also usable by a lesson that runs one step on hand-set numbers.
//! Each call uploads its inputs, runs one `Program`, and reads its outputs back.

use ndarray::{Array2, Array3, ArrayView1, ArrayView2, ArrayView3};

use super::device::Gpu;
use super::kernels::{padding_flags, AttnDims, AttnRecord};
use super::program::Program;
use crate::model::attention::{MaskSpec, NaiveOut};
use crate::model::rope::RopeTable;
use crate::Error;

fn flat<D: ndarray::Dimension>(a: ndarray::ArrayView<'_, f32, D>) -> Vec<f32> {
    a.iter().copied().collect()
}

fn shape_err(what: &str) -> Error {
    Error::Input(format!("{what}: shapes do not fit"))
}

impl Gpu {
    /// y = x W^T: x [N, in], w [out, in] -> [N, out] (matmul.wgsl).
    pub async fn linear(&self, x: ArrayView2<'_, f32>, w: ArrayView2<'_, f32>) -> Result<Array2<f32>, Error> {
        let ((n, k), (m, k2)) = (x.dim(), w.dim());
        if k != k2 {
            return Err(shape_err("linear"));
        }
        let (xb, wb, yb) = (self.upload("x", &flat(x))?, self.upload("w", &flat(w))?, self.scratch("y", (n * m * 4) as u64)?);
        let mut prog = Program::new(self);
        prog.linear(&xb, 0, &wb, &yb, 0, n, m, k);
        prog.read(&yb, 0, n * m);
        let out = prog.run().await?.remove(0);
        Ok(Array2::from_shape_vec((n, m), out).expect("n * m values"))
    }

    /// RMSNorm of each row of x [N, D] times weight [D] (rms_norm.wgsl).
    pub async fn rms_norm(&self, x: ArrayView2<'_, f32>, weight: ArrayView1<'_, f32>, eps: f64) -> Result<Array2<f32>, Error> {
        let (n, dim) = x.dim();
        if weight.len() != dim {
            return Err(shape_err("rms_norm"));
        }
        let (xb, wb, ob) = (self.upload("x", &flat(x))?, self.upload("weight", &flat(weight))?, self.scratch("out", (n * dim * 4) as u64)?);
        let mut prog = Program::new(self);
        prog.rms_norm(&xb, &wb, &ob, n, dim, eps);
        prog.read(&ob, 0, n * dim);
        let out = prog.run().await?.remove(0);
        Ok(Array2::from_shape_vec((n, dim), out).expect("n * dim values"))
    }

    /// x [n, heads, d] rotated by `table`'s rows (rope.wgsl).
    pub async fn rope(&self, x: ArrayView3<'_, f32>, table: &RopeTable) -> Result<Array3<f32>, Error> {
        let (n, heads, d) = x.dim();
        if table.cos.dim() != (n, d) {
            return Err(shape_err("rope"));
        }
        let xb = self.upload("x", &flat(x))?;
        let (cos, sin) = (self.upload("cos", &flat(table.cos.view()))?, self.upload("sin", &flat(table.sin.view()))?);
        let ob = self.scratch("out", (n * heads * d * 4) as u64)?;
        let mut prog = Program::new(self);
        prog.rope(&xb, &cos, &sin, &ob, 0, n, heads, d);
        prog.read(&ob, 0, n * heads * d);
        let out = prog.run().await?.remove(0);
        Ok(Array3::from_shape_vec((n, heads, d), out).expect("n * heads * d values"))
    }

    /// The explicit path on q [T, nH, d], k and v [S, nKV, d]: scores, masked, probs [nH, T, S] and
    /// context [T, nH, d] (attention.wgsl, probs_v.wgsl), walking the query rows `chunk_rows` at a time
    /// as the model does for long sequences.
    pub async fn attention(&self, q: ArrayView3<'_, f32>, k: ArrayView3<'_, f32>, v: ArrayView3<'_, f32>, mask: &MaskSpec<'_>, scale: f32, chunk_rows: usize) -> Result<NaiveOut, Error> {
        let (dims, [qb, kb, vb, pad]) = self.attention_inputs(q, k, v, mask, scale)?;
        let (t, s, n_h, d) = (dims.t, dims.s, dims.n_heads, dims.d);
        let chunk_rows = chunk_rows.clamp(1, t);
        let bytes = (n_h * chunk_rows * s * 4) as u64;
        let scratch = [self.scratch("scores", bytes)?, self.scratch("masked", bytes)?, self.scratch("probs", bytes)?];
        let ctx = self.scratch("context", (t * n_h * d * 4) as u64)?;
        let mut prog = Program::new(self);
        let heads: Vec<usize> = (0..n_h).collect();
        let taps = [prog.tap(n_h * t * s), prog.tap(n_h * t * s), prog.tap(n_h * t * s)];
        let record = AttnRecord { heads: &heads, taps };
        let [s0, s1, s2] = &scratch;
        prog.explicit_attention(&dims, &qb, &kb, &vb, &pad, [s0, s1, s2], chunk_rows, &[(0, n_h)], Some(&ctx), Some(&record));
        prog.read(&ctx, 0, t * n_h * d);
        let mut out = prog.run().await?.into_iter();
        let mut next3 = || Array3::from_shape_vec((n_h, t, s), out.next().expect("tap")).expect("nH * T * S values");
        let (scores, masked, probs) = (next3(), next3(), next3());
        let context = Array3::from_shape_vec((t, n_h, d), out.next().expect("tap")).expect("T * nH * d values");
        Ok(NaiveOut { scores, masked, probs, context })
    }

    /// The flash path on the same inputs: context [T, nH, d] only (flash.wgsl).
    pub async fn flash_attention(&self, q: ArrayView3<'_, f32>, k: ArrayView3<'_, f32>, v: ArrayView3<'_, f32>, mask: &MaskSpec<'_>, scale: f32) -> Result<Array3<f32>, Error> {
        let (dims, [qb, kb, vb, pad]) = self.attention_inputs(q, k, v, mask, scale)?;
        let ctx = self.scratch("context", (dims.t * dims.n_heads * dims.d * 4) as u64)?;
        let mut prog = Program::new(self);
        prog.flash(&dims, &qb, &kb, &vb, &pad, &ctx);
        prog.read(&ctx, 0, dims.t * dims.n_heads * dims.d);
        let out = prog.run().await?.remove(0);
        Ok(Array3::from_shape_vec((dims.t, dims.n_heads, dims.d), out).expect("T * nH * d values"))
    }

    fn attention_inputs(&self, q: ArrayView3<'_, f32>, k: ArrayView3<'_, f32>, v: ArrayView3<'_, f32>, mask: &MaskSpec<'_>, scale: f32) -> Result<(AttnDims, [wgpu::Buffer; 4]), Error> {
        let ((t, n_heads, d), (s, n_kv, dk)) = (q.dim(), k.dim());
        let fits = dk == d && v.dim() == k.dim() && n_kv > 0 && n_heads % n_kv == 0 && mask.padding.is_none_or(|p| p.len() == s);
        if !fits || d > crate::model::config::MAX_HEAD_DIM {
            return Err(shape_err("attention"));
        }
        let dims = AttnDims { t, s, n_heads, n_kv, d, prefix_len: mask.prefix_len, causal: mask.causal, scale };
        let pad = self.upload("padding", &padding_flags(mask.padding, s))?;
        Ok((dims, [self.upload("q", &flat(q))?, self.upload("k", &flat(k))?, self.upload("v", &flat(v))?, pad]))
    }

    /// silu(gate) * up, elementwise (swiglu.wgsl).
    pub async fn swiglu(&self, gate: ArrayView2<'_, f32>, up: ArrayView2<'_, f32>) -> Result<Array2<f32>, Error> {
        if gate.dim() != up.dim() {
            return Err(shape_err("swiglu"));
        }
        let n = gate.len();
        let (gb, ub, ab) = (self.upload("gate", &flat(gate))?, self.upload("up", &flat(up))?, self.scratch("act", (n * 4) as u64)?);
        let mut prog = Program::new(self);
        prog.swiglu(&gb, &ub, &ab, n);
        prog.read(&ab, 0, n);
        let out = prog.run().await?.remove(0);
        Ok(Array2::from_shape_vec(gate.dim(), out).expect("same shape"))
    }

    /// x + y, elementwise (residual.wgsl, which adds in place).
    pub async fn residual(&self, x: ArrayView2<'_, f32>, y: ArrayView2<'_, f32>) -> Result<Array2<f32>, Error> {
        if x.dim() != y.dim() {
            return Err(shape_err("residual"));
        }
        let n = x.len();
        let (xb, yb) = (self.upload("x", &flat(x))?, self.upload("y", &flat(y))?);
        let mut prog = Program::new(self);
        prog.residual(&xb, &yb, n);
        prog.read(&xb, 0, n);
        let out = prog.run().await?.remove(0);
        Ok(Array2::from_shape_vec(x.dim(), out).expect("same shape"))
    }
}

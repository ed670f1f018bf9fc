//! The WGSL kernels (one `.wgsl` file each, header comment first) compiled once per device, and one
//! typed function per kernel that appends a dispatch to a `Program`, so the forward pass and the
//! one-shot kernel runs in `ops.rs` lay out parameters in exactly one place.

use super::device::Matmul;
use super::program::{Program, Tap, Word::*};

pub(crate) struct Kernels {
    matmul: wgpu::ComputePipeline,
    matmul_blocked: wgpu::ComputePipeline,
    rms_norm: wgpu::ComputePipeline,
    rope: wgpu::ComputePipeline,
    attention: wgpu::ComputePipeline,
    probs_v: wgpu::ComputePipeline,
    flash: wgpu::ComputePipeline,
    swiglu: wgpu::ComputePipeline,
    residual: wgpu::ComputePipeline,
    embed: wgpu::ComputePipeline,
}

impl Kernels {
    pub(crate) fn compile(device: &wgpu::Device) -> Kernels {
        let build = |name: &str, source: &str| {
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(name),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(name),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        Kernels {
            matmul: build("matmul", include_str!("matmul.wgsl")),
            matmul_blocked: build("matmul_blocked", include_str!("matmul_blocked.wgsl")),
            rms_norm: build("rms_norm", include_str!("rms_norm.wgsl")),
            rope: build("rope", include_str!("rope.wgsl")),
            attention: build("attention", include_str!("attention.wgsl")),
            probs_v: build("probs_v", include_str!("probs_v.wgsl")),
            flash: build("flash", include_str!("flash.wgsl")),
            swiglu: build("swiglu", include_str!("swiglu.wgsl")),
            residual: build("residual", include_str!("residual.wgsl")),
            embed: build("embed", include_str!("embed.wgsl")),
        }
    }
}

/// Element offsets and sizes reach the kernels as u32: every buffer a kernel binds is far below 2^32
/// elements (the binding limit is in bytes and at most 4 GiB).
fn u(x: usize) -> super::program::Word {
    U(x as u32)
}

/// Sizes of one attention call: T query rows after P cached positions, S = P + T keys.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AttnDims {
    pub t: usize,
    pub s: usize,
    pub n_heads: usize,
    pub n_kv: usize,
    pub d: usize,
    pub prefix_len: usize,
    pub causal: bool,
    pub scale: f32,
}

/// The padding mask as the attention kernels read it: u32 per key, 1 = real token. Without a mask every
/// key is real, and the kernels add exactly 0, as the CPU does.
pub(crate) fn padding_flags(mask: Option<&[u8]>, s: usize) -> Vec<u32> {
    match mask {
        Some(m) => m.iter().map(|&b| b as u32).collect(),
        None => vec![1; s],
    }
}

impl<'a> Program<'a> {
    /// y[y_offset + (n, m)] = x[x_offset + (n, :)] . w[m, :] for n < rows, m < w_rows: y = x W^T.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn linear(&mut self, x: &wgpu::Buffer, x_offset: usize, w: &wgpu::Buffer, y: &wgpu::Buffer, y_offset: usize, rows: usize, w_rows: usize, w_cols: usize) {
        let k = &self.gpu.kernels;
        // Both kernels read their block of y from a 2-D grid: x = column block, y = row block
        // (at most 262144 / 32 and 8192 / 64 blocks under the config limits).
        let (pipeline, cols, rows_per) = match self.gpu.matmul {
            Matmul::Tiled => (&k.matmul, 64, 64),
            Matmul::Blocked => (&k.matmul_blocked, 32, 64),
        };
        let grid = [w_rows.div_ceil(cols) as u32, rows.div_ceil(rows_per) as u32];
        self.dispatch_grid(pipeline, &[u(rows), u(w_rows), u(w_cols), u(x_offset), u(y_offset)], &[x, w, y], grid);
    }

    /// out[r] = weight * (x[r] / sqrt(mean(x[r]^2) + eps)) for each of `rows` rows of `dim`.
    pub(crate) fn rms_norm(&mut self, x: &wgpu::Buffer, weight: &wgpu::Buffer, out: &wgpu::Buffer, rows: usize, dim: usize, eps: f64) {
        let k = &self.gpu.kernels;
        self.dispatch(&k.rms_norm, &[u(rows), u(dim), F(eps as f32)], &[x, weight, out], rows as u64);
    }

    /// out[out_offset + ..] = x * cos + rotate_half(x) * sin over x [rows, heads, d].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rope(&mut self, x: &wgpu::Buffer, cos: &wgpu::Buffer, sin: &wgpu::Buffer, out: &wgpu::Buffer, out_offset: usize, rows: usize, heads: usize, d: usize) {
        let k = &self.gpu.kernels;
        let n = rows * heads * d;
        self.dispatch(&k.rope, &[u(rows), u(heads), u(d), u(out_offset)], &[x, cos, sin, out], n.div_ceil(256) as u64);
    }

    /// scores, masked, probs [n_block, rows, S] for heads head0.. and query rows row0.. (attention.wgsl).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn attention(&mut self, dims: &AttnDims, q: &wgpu::Buffer, k_cache: &wgpu::Buffer, pad: &wgpu::Buffer, out: [&wgpu::Buffer; 3], head0: usize, n_block: usize, row0: usize, rows: usize) {
        let k = &self.gpu.kernels;
        let params = [
            u(rows),
            u(row0),
            u(dims.s),
            u(dims.n_heads),
            u(dims.n_kv),
            u(dims.n_heads / dims.n_kv),
            u(dims.d),
            u(head0),
            u(n_block),
            u(dims.prefix_len),
            u(dims.causal as usize),
            F(dims.scale),
        ];
        self.dispatch(&k.attention, &params, &[q, k_cache, pad, out[0], out[1], out[2]], (n_block * rows) as u64);
    }

    /// context rows row0.. of heads head0.. = probs @ V (probs_v.wgsl).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn probs_v(&mut self, dims: &AttnDims, probs: &wgpu::Buffer, v_cache: &wgpu::Buffer, context: &wgpu::Buffer, head0: usize, n_block: usize, row0: usize, rows: usize) {
        let k = &self.gpu.kernels;
        let params = [u(rows), u(row0), u(dims.s), u(dims.n_heads), u(dims.n_kv), u(dims.n_heads / dims.n_kv), u(dims.d), u(head0), u(n_block)];
        self.dispatch(&k.probs_v, &params, &[probs, v_cache, context], (n_block * rows) as u64);
    }

    /// context [T, nH, d] by the online softmax over key tiles (flash.wgsl).
    pub(crate) fn flash(&mut self, dims: &AttnDims, q: &wgpu::Buffer, k_cache: &wgpu::Buffer, v_cache: &wgpu::Buffer, pad: &wgpu::Buffer, context: &wgpu::Buffer) {
        let k = &self.gpu.kernels;
        let params = [
            u(dims.t),
            u(dims.s),
            u(dims.n_heads),
            u(dims.n_kv),
            u(dims.n_heads / dims.n_kv),
            u(dims.d),
            u(dims.prefix_len),
            u(dims.causal as usize),
            F(dims.scale),
        ];
        let groups = dims.n_heads * dims.t.div_ceil(FLASH_ROWS);
        self.dispatch(&k.flash, &params, &[q, k_cache, v_cache, pad, context], groups as u64);
    }

    /// act = silu(gate) * up over n elements.
    pub(crate) fn swiglu(&mut self, gate: &wgpu::Buffer, up: &wgpu::Buffer, act: &wgpu::Buffer, n: usize) {
        let k = &self.gpu.kernels;
        self.dispatch(&k.swiglu, &[u(n)], &[gate, up, act], n.div_ceil(256) as u64);
    }

    /// x += y over n elements.
    pub(crate) fn residual(&mut self, x: &wgpu::Buffer, y: &wgpu::Buffer, n: usize) {
        let k = &self.gpu.kernels;
        self.dispatch(&k.residual, &[u(n)], &[x, y], n.div_ceil(256) as u64);
    }

    /// x[r] = table[ids[r]] for `rows` ids, rows of `dim`.
    pub(crate) fn embed(&mut self, ids: &wgpu::Buffer, table: &wgpu::Buffer, x: &wgpu::Buffer, rows: usize, dim: usize) {
        let k = &self.gpu.kernels;
        self.dispatch(&k.embed, &[u(rows), u(dim)], &[ids, table, x], (rows * dim).div_ceil(256) as u64);
    }
}

/// What the explicit path records: the trace's scores, masked_scores and probs regions, [heads.len(), T, S]
/// each, for these heads in this order.
pub(crate) struct AttnRecord<'r> {
    pub heads: &'r [usize],
    pub taps: [Tap; 3],
}

impl<'a> Program<'a> {
    /// The explicit path (attention.wgsl, then probs_v.wgsl when `context` is given) over query rows in
    /// chunks of `chunk_rows`, for each (head0, n_block) block of heads in turn: a long sequence needs
    /// `scratch` [n_block, chunk_rows, S] three times, never [nH, T, S]. Recorded heads are copied out
    /// of the scratch chunk by chunk.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn explicit_attention(
        &mut self,
        dims: &AttnDims,
        q: &wgpu::Buffer,
        k_cache: &wgpu::Buffer,
        v_cache: &wgpu::Buffer,
        pad: &wgpu::Buffer,
        scratch: [&wgpu::Buffer; 3],
        chunk_rows: usize,
        blocks: &[(usize, usize)],
        context: Option<&wgpu::Buffer>,
        record: Option<&AttnRecord>,
    ) {
        let (t, s) = (dims.t, dims.s);
        let chunk_rows = chunk_rows.clamp(1, t);
        for &(head0, n_block) in blocks {
            for row0 in (0..t).step_by(chunk_rows) {
                let rows = chunk_rows.min(t - row0);
                self.attention(dims, q, k_cache, pad, scratch, head0, n_block, row0, rows);
                if let Some(ctx) = context {
                    self.probs_v(dims, scratch[2], v_cache, ctx, head0, n_block, row0, rows);
                }
                let Some(rec) = record else { continue };
                for hb in 0..n_block {
                    for (slot, _) in rec.heads.iter().enumerate().filter(|(_, &h)| h == head0 + hb) {
                        for (buf, &tap) in scratch.iter().zip(&rec.taps) {
                            self.copy(buf, hb * rows * s, tap, (slot * t + row0) * s, rows * s);
                        }
                    }
                }
            }
        }
    }
}

/// Query rows per flash workgroup (R in flash.wgsl).
const FLASH_ROWS: usize = 4;

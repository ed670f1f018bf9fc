// RMSNorm as MiniMind writes it: out = weight * (x * (1 / sqrt(mean(x^2) + eps))), row by row.
// CPU twin: model::rms_norm::rms_norm. The same kernel serves input_layernorm, post_attention_layernorm
// and the final norm (rows = T, dim = H) and the per-head Q/K norm (rows = T * heads, dim = d): a
// [T, heads, d] tensor is [T * heads] rows of d.
//
// Layout: x and out [rows, dim], weight [dim]. One workgroup of 64 threads per row (rows past 65535
// spill into workgroup_id.y); each thread sums a strided slice of squares, then every thread adds the
// 64 partials in order (one barrier; a tree needs seven, and barriers are what CPU adapters pay for).
// The sum order therefore differs from the CPU's left-to-right sum; the difference is float rounding
// (< 1e-6 relative for dim <= 8192). 1 / sqrt is written out rather than inverseSqrt,
// whose accuracy WGSL leaves loose, to match the CPU's `1.0 / (mean_sq + eps).sqrt()`.
//
// Tried: a tree reduction (v1) and the in-order sum of partials (v2, this file): about 1 ms either way
// for 128 x 768 on lavapipe. A workgroup per row suits hidden rows (H = 768); for Q/K norm (d = 96)
// most of the 64 threads do one or two elements, cheap next to the matmuls around it.

struct Params {
    rows: u32,
    dim: u32,
    eps: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const WG: u32 = 64u;
var<workgroup> part: array<f32, 64>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x + wid.y * nwg.x;
    if (row >= p.rows) {
        return;
    }
    let base = row * p.dim;
    var s = 0.0;
    for (var i = lid.x; i < p.dim; i += WG) {
        let v = x[base + i];
        s += v * v;
    }
    part[lid.x] = s;
    workgroupBarrier();
    var total = 0.0;
    for (var u = 0u; u < WG; u++) {
        total += part[u];
    }
    let inv = 1.0 / sqrt(total / f32(p.dim) + p.eps);
    for (var i = lid.x; i < p.dim; i += WG) {
        out[base + i] = weight[i] * (x[base + i] * inv);
    }
}

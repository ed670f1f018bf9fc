// RoPE, "rotate half": out = x * cos + rotate_half(x) * sin, rotate_half(u) = [-u[d/2:], u[:d/2]].
// CPU twin: model::rope::RopeTable::apply. The cos and sin tables are not computed here: they are
// RopeTable's own [T, d] arrays uploaded from the CPU, so they are bit-identical (YaRN included) and
// the trace's rope.cos / rope.sin need no read-back.
//
// Layout: x [rows, heads, d]; cos, sin [rows, d]; out written from element out_offset, so k goes
// straight into the KV cache at row P. One thread per element, 256 per workgroup, groups past 65535
// spill into workgroup_id.y.
//
// Tried: this version only (v1); it is memory-bound and tiny next to the projections.

struct Params {
    rows: u32,
    heads: u32,
    dim: u32,
    out_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> cos_t: array<f32>;
@group(0) @binding(3) var<storage, read> sin_t: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let e = (wid.x + wid.y * nwg.x) * 256u + lid.x;
    if (e >= p.rows * p.heads * p.dim) {
        return;
    }
    let i = e % p.dim;
    let r = e / (p.heads * p.dim);
    let half = p.dim / 2u;
    var rot: f32;
    if (i < half) {
        rot = -x[e + half];
    } else {
        rot = x[e - half];
    }
    out[p.out_offset + e] = x[e] * cos_t[r * p.dim + i] + rot * sin_t[r * p.dim + i];
}

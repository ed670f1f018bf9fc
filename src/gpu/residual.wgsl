// The residual connection: x += y, in place (x = x + attn_out, then x = x + ffn_out).
// CPU twin: the `x + &attn_out` and `x + &ffn.out` in model::block::decoder_layer. Exact: one f32 add.
//
// Layout: x, y [n] (flat). One thread per element, 256 per workgroup.
// Tried: this version only (v1).

struct Params {
    n: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read> y: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let e = (wid.x + wid.y * nwg.x) * 256u + lid.x;
    if (e >= p.n) {
        return;
    }
    x[e] = x[e] + y[e];
}

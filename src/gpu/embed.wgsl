// Token embedding: x[r] = embed_tokens[ids[r]], a gather. CPU twin: the `embed_tokens.select` in
// model::forward::Model::forward. Exact (a copy). The ids are checked against the vocabulary on the CPU
// before anything runs (model::forward::check_input).
//
// Layout: ids [T] u32, table [V, H], x [T, H]. One thread per output element, 256 per workgroup.
// Tried: this version only (v1).

struct Params {
    rows: u32,
    dim: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ids: array<u32>;
@group(0) @binding(2) var<storage, read> table: array<f32>;
@group(0) @binding(3) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let e = (wid.x + wid.y * nwg.x) * 256u + lid.x;
    if (e >= p.rows * p.dim) {
        return;
    }
    let r = e / p.dim;
    let c = e % p.dim;
    x[e] = table[ids[r] * p.dim + c];
}

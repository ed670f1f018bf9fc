// The explicit path's last step: context[i, h] = sum_j probs[h, i, j] * V[j, h / n_rep].
// CPU twin: the `probs.dot(v)` in model::attention::head.
//
// Layout: probs [n_block, rows, S] as attention.wgsl leaves it (heads head0 .., query rows row0 ..);
// v [S, nKV, d] (the cache); context [T, nH, d], written at rows row0 .. row0 + rows.
// One workgroup of 64 threads per (head, row), each thread owning output dims c = lid, lid + 64, ...
// and summing over the keys in order: every thread reads the same probs[j] and neighbouring V entries.
// The CPU's matmul (model::linear) blocks the key sum differently: float rounding only.
//
// Tried: this version only (v1); like attention.wgsl it serves the short explicit path.

struct Params {
    rows: u32,
    row0: u32,
    s_len: u32,
    n_heads: u32,
    n_kv: u32,
    n_rep: u32,
    dim: u32,
    head0: u32,
    n_block: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> probs: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> context: array<f32>;

const WG: u32 = 64u;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= p.n_block * p.rows) {
        return;
    }
    let hb = g / p.rows;
    let r = g % p.rows;
    let h = p.head0 + hb;
    let kvh = h / p.n_rep;
    let base = g * p.s_len;
    let out = ((p.row0 + r) * p.n_heads + h) * p.dim;
    for (var c = lid.x; c < p.dim; c += WG) {
        var acc = 0.0;
        for (var j = 0u; j < p.s_len; j++) {
            acc += probs[base + j] * v[(j * p.n_kv + kvh) * p.dim + c];
        }
        context[out + c] = acc;
    }
}

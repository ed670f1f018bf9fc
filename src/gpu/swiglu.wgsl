// SwiGLU's activation: act = silu(gate) * up, silu(z) = z / (1 + exp(-z)).
// CPU twin: model::swiglu (the Zip over gate and up with `silu`). gate_proj, up_proj and down_proj
// themselves are matmul.wgsl.
//
// Layout: gate, up, act [n] (any shape, flat). One thread per element, 256 per workgroup.
// exp's argument is capped at 88 (exp(88) ~ 1.7e38, still finite): the CPU gets exp(-z) = inf and
// z / inf = -0 for z < -88.7, WGSL does not promise infinities, and with the cap the result is
// |z| / 1.7e38 instead of 0, far below any tolerance.
//
// Tried: this version only (v1). Fusing it into the down_proj matmul's loads would save one pass over
// [T, I], but the trace records ffn.act, so it is written anyway.

struct Params {
    n: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> gate: array<f32>;
@group(0) @binding(2) var<storage, read> up: array<f32>;
@group(0) @binding(3) var<storage, read_write> act: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let e = (wid.x + wid.y * nwg.x) * 256u + lid.x;
    if (e >= p.n) {
        return;
    }
    let z = gate[e];
    act[e] = z / (1.0 + exp(min(-z, 88.0))) * up[e];
}

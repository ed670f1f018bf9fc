// Matmul for CPU adapters (lavapipe, llvmpipe, SwiftShader): y = x W^T, W stored [out, in].
// CPU twin: model::linear::linear. Same parameters and result as matmul.wgsl, which GPUs run.
//
// A CPU adapter runs a workgroup as SIMD lanes (8 on AVX2) and emulates workgroup memory and
// barriers, so the tiled kernel pays for staging and synchronisation it cannot use. Here each
// invocation computes 8 rows x 4 columns of y straight from global memory: per k, the 8 x loads are
// the same address for every lane of a SIMD group (one broadcast each) and the 4 w loads feed 32
// multiply-adds held in eight vec4 accumulators (no private array, no dynamic indexing). Rows and
// columns past the edge are clamped for loading and skipped for storing. Each output sums k in order.
//
// Tried on lavapipe ([128, 768] x [2432, 768]^T, one call with upload and read-back):
//   4 x 4 per invocation: 57-183 ms; 8 x 4 (this file): 46-49 ms; 16 x 4: 53-85 ms.
//   Skipping naga's bounds checks and loop bounding (create_shader_module_trusted): no clear gain, not kept.

struct Params {
    n: u32,
    m: u32,
    k: u32,
    x_offset: u32,
    y_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let m0 = gid.x * 4u;
    let n0 = gid.y * 8u;
    if (m0 >= p.m || n0 >= p.n) {
        return;
    }
    let c = min(vec4<u32>(m0) + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(p.m - 1u)) * p.k;
    let r0 = min(n0 + 0u, p.n - 1u) * p.k + p.x_offset;
    let r1 = min(n0 + 1u, p.n - 1u) * p.k + p.x_offset;
    let r2 = min(n0 + 2u, p.n - 1u) * p.k + p.x_offset;
    let r3 = min(n0 + 3u, p.n - 1u) * p.k + p.x_offset;
    let r4 = min(n0 + 4u, p.n - 1u) * p.k + p.x_offset;
    let r5 = min(n0 + 5u, p.n - 1u) * p.k + p.x_offset;
    let r6 = min(n0 + 6u, p.n - 1u) * p.k + p.x_offset;
    let r7 = min(n0 + 7u, p.n - 1u) * p.k + p.x_offset;
    var a0 = vec4<f32>(0.0);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    var a4 = vec4<f32>(0.0);
    var a5 = vec4<f32>(0.0);
    var a6 = vec4<f32>(0.0);
    var a7 = vec4<f32>(0.0);
    for (var k = 0u; k < p.k; k++) {
        let wv = vec4<f32>(w[c.x + k], w[c.y + k], w[c.z + k], w[c.w + k]);
        a0 += x[r0 + k] * wv;
        a1 += x[r1 + k] * wv;
        a2 += x[r2 + k] * wv;
        a3 += x[r3 + k] * wv;
        a4 += x[r4 + k] * wv;
        a5 += x[r5 + k] * wv;
        a6 += x[r6 + k] * wv;
        a7 += x[r7 + k] * wv;
    }
    let acc = array<vec4<f32>, 8>(a0, a1, a2, a3, a4, a5, a6, a7);
    for (var i = 0u; i < 8u; i++) {
        let n = n0 + i;
        if (n < p.n) {
            for (var j = 0u; j < 4u; j++) {
                if (m0 + j < p.m) {
                    y[p.y_offset + n * p.m + m0 + j] = acc[i][j];
                }
            }
        }
    }
}

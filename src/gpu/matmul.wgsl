// Tiled matmul for nn.Linear without bias: y = x W^T, with W stored [out, in] as in the checkpoint.
// CPU twin: model::linear::linear. The kernel for real GPUs; matmul_blocked.wgsl serves CPU adapters.
//
// Layout: x [n, k] from element x_offset, w [m, k], y [n, m] from element y_offset (the offsets let
// v_proj write straight into the KV cache at row P and let lm_head run over row chunks).
// One workgroup computes a 64 x 64 block of y with 16 x 16 threads, each owning 4 x 4 outputs at a
// stride of 16 (rows ty + 16i, columns tx + 16j), so neighbouring threads read neighbouring words of
// workgroup memory and write neighbouring columns. Per step of 16 along k, the workgroup stages
// x[64 rows, 16] and w[64 rows, 16] in workgroup memory (read from global memory along k, coalesced
// in W's [out, in] layout), stored k-major so the inner loop reads a row of each. Out-of-range rows and
// columns load zeros, so no size has to divide the tile. Each output sums k in order 0, 1, 2, ...
// (the CPU's matmul in model::linear blocks k differently: float rounding, well inside 2e-4).
//
// Tried, timed on lavapipe ([128, 768] x [2432, 768]^T, one call with upload and read-back, on a busy
// 2-core machine; no discrete GPU was available to time):
//   v1  accumulators in a private array<f32, 16>:             450-650 ms
//   v2  accumulators as four vec4 (this file), k-step 16:      350-380 ms; k-step 32: 350 ms
//   v3  64 columns x 8 rows, w and x tiles, one column per thread: 490-570 ms
// Workgroup memory and barriers are emulated on a CPU, so matmul_blocked.wgsl (47 ms there) is what
// CPU adapters run; on a GPU this tiling is the standard way to reuse each loaded element 64 times.

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

const TILE: u32 = 64u;
const TK: u32 = 16u;

var<workgroup> xs: array<f32, TILE * TK>; // [TK][TILE]
var<workgroup> ws: array<f32, TILE * TK>; // [TK][TILE]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let m0 = wid.x * TILE;
    let n0 = wid.y * TILE;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    for (var k0 = 0u; k0 < p.k; k0 += TK) {
        for (var e = li; e < TILE * TK; e += 256u) {
            let r = e / TK;
            let c = e % TK;
            let kk = k0 + c;
            var xv = 0.0;
            if (n0 + r < p.n && kk < p.k) {
                xv = x[p.x_offset + (n0 + r) * p.k + kk];
            }
            xs[c * TILE + r] = xv;
            var wv = 0.0;
            if (m0 + r < p.m && kk < p.k) {
                wv = w[(m0 + r) * p.k + kk];
            }
            ws[c * TILE + r] = wv;
        }
        workgroupBarrier();
        for (var c = 0u; c < TK; c++) {
            let base = c * TILE;
            let b = vec4<f32>(ws[base + lid.x], ws[base + lid.x + 16u], ws[base + lid.x + 32u], ws[base + lid.x + 48u]);
            acc0 += xs[base + lid.y] * b;
            acc1 += xs[base + lid.y + 16u] * b;
            acc2 += xs[base + lid.y + 32u] * b;
            acc3 += xs[base + lid.y + 48u] * b;
        }
        workgroupBarrier();
    }
    let acc = array<vec4<f32>, 4>(acc0, acc1, acc2, acc3);
    for (var i = 0u; i < 4u; i++) {
        let n = n0 + lid.y + 16u * i;
        for (var j = 0u; j < 4u; j++) {
            let m = m0 + lid.x + 16u * j;
            if (n < p.n && m < p.m) {
                y[p.y_offset + n * p.m + m] = acc[i][j];
            }
        }
    }
}

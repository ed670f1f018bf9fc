// Tiled matmul for nn.Linear without bias: y = x W^T, with W stored [out, in] as in the checkpoint.
// CPU twin: model::linear::linear.
//
// Layout: x [n, k] from element x_offset, w [m, k], y [n, m] from element y_offset (the offsets let
// v_proj write straight into the KV cache at row P and let lm_head run over row chunks).
// One workgroup computes a 64 x 64 block of y with 16 x 16 threads, each owning 4 x 4 outputs at a
// stride of 16 (rows ty + 16i, columns tx + 16j), so neighbouring threads write neighbouring columns.
// Per step of 16 along k, the workgroup stages x[64 rows, 16] and w[64 rows, 16] in workgroup memory,
// stored k-major so the inner loop reads a row of each. Out-of-range rows and columns load zeros, so no
// size has to divide the tile. Each output sums k in order 0, 1, 2, ... (the CPU's matmul in
// model::linear blocks k differently: results agree to float rounding, well inside 2e-4 relative).
//
// Tried: this version only (v1), checked against the CPU on sizes that divide no tile (tests/gpu.rs) and
// timed in benches/gpu.rs. Not tried yet: a matrix-vector variant for decode (n = 1), where this kernel
// computes 63 of 64 tile rows for nothing; larger per-thread blocks (8 x 8); vec4 loads.

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

var<workgroup> xs: array<f32, 1024>; // [TK][TILE]
var<workgroup> ws: array<f32, 1024>; // [TK][TILE]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let m0 = wid.x * TILE;
    let n0 = wid.y * TILE;
    var acc: array<f32, 16>;
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
            var a: array<f32, 4>;
            var b: array<f32, 4>;
            for (var i = 0u; i < 4u; i++) {
                a[i] = xs[c * TILE + lid.y + 16u * i];
                b[i] = ws[c * TILE + lid.x + 16u * i];
            }
            for (var i = 0u; i < 4u; i++) {
                for (var j = 0u; j < 4u; j++) {
                    acc[i * 4u + j] += a[i] * b[j];
                }
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i++) {
        let n = n0 + lid.y + 16u * i;
        for (var j = 0u; j < 4u; j++) {
            let m = m0 + lid.x + 16u * j;
            if (n < p.n && m < p.m) {
                y[p.y_offset + n * p.m + m] = acc[i * 4u + j];
            }
        }
    }
}

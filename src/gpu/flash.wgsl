// The flash path: attention over key tiles with an online softmax, never forming [nH, T, S]. Per query
// row it keeps a running max m, denominator l and output o:
//   m' = max(m, max_j s_j); l' = l * exp(m - m') + sum_j exp(s_j - m'); o' = o * exp(m - m') + sum_j exp(s_j - m') v_j
// and writes o / l (0 for a row that sees no key). CPU twin: model::flash::flash_attention; both equal
// the explicit path (attention.wgsl + probs_v.wgsl) up to float rounding.
//
// Layout: q [T, nH, d], k and v [S, nKV, d] (the cache), pad [S] u32, context [T, nH, d].
// One workgroup of 64 threads per (head, block of R = 4 query rows); key tiles of 64 (one key per
// thread for the scores, whatever tile the CPU path was asked for: the tile only reorders sums).
// The output dims are walked in chunks of 64, one dim per thread, outermost: each chunk walks the key
// tiles again (d = 96 computes the scores twice), so that a thread's output is one vec4 (its dim, R
// rows) instead of a private array over all of d. Per tile: each thread computes its key's scores for
// the R rows (q from global memory, every thread reading the same address), threads 0..R-1 update the
// rows' running statistics, then each thread adds p @ V for its dim and the R rows, so every K and V
// element read serves R rows. With the causal mask, tiles that lie wholly after the block's last
// query are skipped: they would add exp(-inf) = 0, exactly nothing.
// Masked entries never compute with infinities (see attention.wgsl): they hold -f32::MAX and are
// skipped by comparison.
//
// Tried, timed on lavapipe (T = S = 128, 8 / 4 heads, d = 96, one call with upload and read-back):
//   v1  all of d at once, outputs in a private array<f32, 64> and scores in array<f32, 4>: 156-320 ms
//   v2  dims chunked outermost, vec4 accumulators (this file):                             47 ms
//   v2 with R = 8 rows per workgroup: 41 ms, not kept (twice the code, 8x waste for a decode row)
// Not tried: K / V tiles in workgroup memory (d-sized, so a per-model placeholder), which a GPU
// would likely reward and lavapipe would not (see matmul.wgsl).

struct Params {
    t_rows: u32,
    s_len: u32,
    n_heads: u32,
    n_kv: u32,
    n_rep: u32,
    dim: u32,
    prefix_len: u32,
    causal: u32,
    scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> pad: array<u32>;
@group(0) @binding(5) var<storage, read_write> context: array<f32>;

const R: u32 = 4u;
const BC: u32 = 64u;
const LOWEST: f32 = -0x1.fffffep+127f; // f32::MIN, exactly (Tint refuses the rounded decimal -3.40282347e+38)
const PADDING_BIAS: f32 = -1e9;

var<workgroup> sc: array<f32, 256>; // [R][BC]: this tile's scores, then its exp weights
var<workgroup> m_row: array<f32, 4>;
var<workgroup> l_row: array<f32, 4>;
var<workgroup> alpha_row: array<f32, 4>;

// Score of key j against query row i (T rows clamped: the caller ignores rows past T).
fn masked_score(dot: f32, i: u32, j: u32) -> f32 {
    if (j >= p.s_len || i >= p.t_rows || (p.causal != 0u && j > p.prefix_len + i)) {
        return LOWEST;
    }
    var s = dot * p.scale;
    if (pad[j] == 0u) {
        s = s + PADDING_BIAS;
    }
    return s;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let g = wid.x + wid.y * nwg.x;
    let blocks = (p.t_rows + R - 1u) / R;
    if (g >= p.n_heads * blocks) {
        return;
    }
    let h = g / blocks;
    let i0 = (g % blocks) * R;
    let kvh = h / p.n_rep;
    let t = lid.x;
    let i_last = min(i0 + R, p.t_rows) - 1u;
    var s_end = p.s_len;
    if (p.causal != 0u) {
        s_end = min(p.s_len, p.prefix_len + i_last + 1u);
    }
    // The block's query rows, clamped to T so every load is in range.
    let q0 = (min(i0, i_last) * p.n_heads + h) * p.dim;
    let q1 = (min(i0 + 1u, i_last) * p.n_heads + h) * p.dim;
    let q2 = (min(i0 + 2u, i_last) * p.n_heads + h) * p.dim;
    let q3 = (min(i0 + 3u, i_last) * p.n_heads + h) * p.dim;

    // Output dims in chunks of 64, one per thread; each chunk walks all key tiles again.
    for (var c0 = 0u; c0 < p.dim; c0 += BC) {
        let c = c0 + t;
        var o = vec4<f32>(0.0); // rows i0 .. i0 + 3 at dim c
        if (t < R) {
            m_row[t] = LOWEST;
            l_row[t] = 0.0;
        }
        for (var j0 = 0u; j0 < s_end; j0 += BC) {
            let j = j0 + t;
            var dot = vec4<f32>(0.0);
            if (j < p.s_len) {
                let k_base = (j * p.n_kv + kvh) * p.dim;
                for (var e = 0u; e < p.dim; e++) {
                    let kc = k[k_base + e];
                    dot += vec4<f32>(q[q0 + e], q[q1 + e], q[q2 + e], q[q3 + e]) * kc;
                }
            }
            sc[t] = masked_score(dot.x, i0, j);
            sc[BC + t] = masked_score(dot.y, i0 + 1u, j);
            sc[2u * BC + t] = masked_score(dot.z, i0 + 2u, j);
            sc[3u * BC + t] = masked_score(dot.w, i0 + 3u, j);
            workgroupBarrier();

            let n = min(BC, p.s_len - j0);
            if (t < R) {
                let m_old = m_row[t];
                var m_new = m_old;
                for (var u = 0u; u < n; u++) {
                    m_new = max(m_new, sc[t * BC + u]);
                }
                if (m_new == LOWEST) {
                    for (var u = 0u; u < n; u++) {
                        sc[t * BC + u] = 0.0;
                    }
                    alpha_row[t] = 1.0;
                } else {
                    var alpha = 0.0;
                    if (m_old != LOWEST) {
                        alpha = exp(m_old - m_new);
                    }
                    var sum = 0.0;
                    for (var u = 0u; u < n; u++) {
                        let s = sc[t * BC + u];
                        var e = 0.0;
                        if (s != LOWEST) {
                            e = exp(s - m_new);
                        }
                        sc[t * BC + u] = e;
                        sum += e;
                    }
                    l_row[t] = l_row[t] * alpha + sum;
                    m_row[t] = m_new;
                    alpha_row[t] = alpha;
                }
            }
            workgroupBarrier();

            if (c < p.dim) {
                var pv = vec4<f32>(0.0);
                for (var jj = 0u; jj < n; jj++) {
                    let vj = v[((j0 + jj) * p.n_kv + kvh) * p.dim + c];
                    pv += vec4<f32>(sc[jj], sc[BC + jj], sc[2u * BC + jj], sc[3u * BC + jj]) * vj;
                }
                o = o * vec4<f32>(alpha_row[0], alpha_row[1], alpha_row[2], alpha_row[3]) + pv;
            }
            workgroupBarrier();
        }
        if (c < p.dim) {
            let l = vec4<f32>(l_row[0], l_row[1], l_row[2], l_row[3]);
            let inv = select(vec4<f32>(0.0), vec4<f32>(1.0) / l, l > vec4<f32>(0.0));
            let out = o * inv;
            for (var r = 0u; r < R; r++) {
                if (i0 + r < p.t_rows) {
                    context[((i0 + r) * p.n_heads + h) * p.dim + c] = out[r];
                }
            }
        }
        workgroupBarrier();
    }
}

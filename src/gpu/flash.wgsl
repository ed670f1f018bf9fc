// The flash path: attention over key tiles with an online softmax, never forming [nH, T, S]. Per query
// row it keeps a running max m, denominator l and output o:
//   m' = max(m, max_j s_j); l' = l * exp(m - m') + sum_j exp(s_j - m'); o' = o * exp(m - m') + sum_j exp(s_j - m') v_j
// and writes o / l (0 for a row that sees no key). CPU twin: model::flash::flash_attention; both equal
// the explicit path (attention.wgsl + probs_v.wgsl) up to float rounding.
//
// Layout: q [T, nH, d], k and v [S, nKV, d] (the cache), pad [S] u32, context [T, nH, d].
// One workgroup of 64 threads per (head, block of R = 4 query rows); key tiles of 64 (one key per
// thread for the scores, whatever tile the CPU path was asked for: the tile only reorders sums).
// Per tile: each thread computes its key's scores for the R rows (q from global memory, every thread
// reading the same address), the R rows' running statistics are updated by threads 0..R-1, then each
// thread updates the output dims it owns (c = lid, lid + 64, ..., up to d = 1024, the config limit)
// for all R rows, so every K and V element read serves R rows. With the causal mask, tiles that lie
// wholly after the block's last query are skipped: they would add exp(-inf) = 0, exactly nothing.
// Masked entries never compute with infinities (see attention.wgsl): they hold -f32::MAX and are
// skipped by comparison.
//
// Tried: this version (v1, R = 4). Not tried yet: K / V tiles staged in workgroup memory (needs d-sized
// arrays, so a per-model placeholder), more rows per workgroup, parallel row statistics.

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
const MAXC: u32 = 16u; // ceil(1024 / 64): output dims per thread
const LOWEST: f32 = -3.40282347e+38;
const PADDING_BIAS: f32 = -1e9;

var<workgroup> sc: array<f32, 256>; // [R][BC]: this tile's scores, then its exp weights
var<workgroup> m_row: array<f32, 4>;
var<workgroup> l_row: array<f32, 4>;
var<workgroup> alpha_row: array<f32, 4>;

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
    if (t < R) {
        m_row[t] = LOWEST;
        l_row[t] = 0.0;
    }
    var o: array<f32, 64>; // [R][MAXC]

    for (var j0 = 0u; j0 < s_end; j0 += BC) {
        let j = j0 + t;
        var acc: array<f32, 4>;
        if (j < p.s_len) {
            let k_base = (j * p.n_kv + kvh) * p.dim;
            for (var c = 0u; c < p.dim; c++) {
                let kc = k[k_base + c];
                for (var r = 0u; r < R; r++) {
                    if (i0 + r < p.t_rows) {
                        acc[r] += q[((i0 + r) * p.n_heads + h) * p.dim + c] * kc;
                    }
                }
            }
        }
        for (var r = 0u; r < R; r++) {
            let i = i0 + r;
            var s = LOWEST;
            if (j < p.s_len && i < p.t_rows && !(p.causal != 0u && j > p.prefix_len + i)) {
                s = acc[r] * p.scale;
                if (pad[j] == 0u) {
                    s = s + PADDING_BIAS;
                }
            }
            sc[r * BC + t] = s;
        }
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

        for (var u = 0u; t + u * BC < p.dim; u++) {
            let c = t + u * BC;
            for (var r = 0u; r < R; r++) {
                var pv = 0.0;
                for (var jj = 0u; jj < n; jj++) {
                    pv += sc[r * BC + jj] * v[((j0 + jj) * p.n_kv + kvh) * p.dim + c];
                }
                o[r * MAXC + u] = o[r * MAXC + u] * alpha_row[r] + pv;
            }
        }
        workgroupBarrier();
    }

    for (var r = 0u; r < R; r++) {
        let i = i0 + r;
        if (i < p.t_rows) {
            let l = l_row[r];
            var inv = 0.0;
            if (l > 0.0) {
                inv = 1.0 / l;
            }
            for (var u = 0u; t + u * BC < p.dim; u++) {
                context[(i * p.n_heads + h) * p.dim + t + u * BC] = o[r * MAXC + u] * inv;
            }
        }
    }
}

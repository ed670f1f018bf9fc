// The explicit attention path, scores to probabilities, as MiniMind's manual branch:
//   scores = q . K / sqrt(d); masked = scores + causal (-inf on future keys) + padding ((1 - mask) * -1e9);
//   probs = softmax(masked) over the keys, in f32; a row with no visible key is all zeros, never NaN.
// CPU twin: model::attention::head (head_scores, mask_in_place, softmax_rows). probs @ V is probs_v.wgsl.
//
// Layout: q [T, nH, d]; k [S, nKV, d] (the cache); pad [S] u32 (1 = real token; all ones without a mask,
// which adds exactly 0 as the CPU does). Outputs scores, masked, probs are [n_block, rows, S] for heads
// head0 .. head0 + n_block and query rows row0 .. row0 + rows: the caller walks row chunks so that a long
// sequence never needs [nH, T, S] at once. GQA is repeat_kv by index: head h reads KV head h / n_rep.
// One workgroup of 64 threads per (head, row); q's row is staged in workgroup memory (d <= 1024,
// the config limit), each thread takes keys j = lid, lid + 64, ...
//
// Masking never computes with infinities (WGSL lets implementations assume there are none): a causally
// masked entry is stored as the bit pattern of -inf (masked is bound as u32) and skipped by flag, and
// the running max starts at -f32::MAX. Padding adds -1e9 in f32, the same rounding as the CPU.
// Sums (the dot over d, the softmax denominator over partials) are ordered differently from the CPU: float
// rounding only, well inside 2e-4.
//
// Tried, timed on lavapipe (T = S = 128, 8 / 4 heads, d = 96, with probs_v, upload and read-back):
//   v1  max and sum by tree reductions (twelve barriers): 85-124 ms
//   v2  each thread sums the 64 partials itself (this file): 33-48 ms (a busy machine; partly noise)
// It reads K once per (head, row), with no reuse across query rows: fine for the explicit path, which
// Auto uses below 1024 keys; long sequences take flash.wgsl, and this kernel then runs only for the
// heads a trace records.

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
    prefix_len: u32,
    causal: u32,
    scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> pad: array<u32>;
@group(0) @binding(4) var<storage, read_write> scores: array<f32>;
@group(0) @binding(5) var<storage, read_write> masked: array<u32>;
@group(0) @binding(6) var<storage, read_write> probs: array<f32>;

const WG: u32 = 64u;
const NEG_INF_BITS: u32 = 0xff800000u;
const LOWEST: f32 = -0x1.fffffep+127f; // f32::MIN, exactly (Tint refuses the rounded decimal -3.40282347e+38)
const PADDING_BIAS: f32 = -1e9;

var<workgroup> qs: array<f32, 1024>;
var<workgroup> part_max: array<f32, 64>;
var<workgroup> part_sum: array<f32, 64>;

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
    let i = p.row0 + r;
    let q_pos = p.prefix_len + i;
    let q_base = (i * p.n_heads + h) * p.dim;
    for (var c = lid.x; c < p.dim; c += WG) {
        qs[c] = q[q_base + c];
    }
    workgroupBarrier();

    let base = g * p.s_len;
    var m = LOWEST;
    for (var j = lid.x; j < p.s_len; j += WG) {
        let k_base = (j * p.n_kv + kvh) * p.dim;
        var dot = 0.0;
        for (var c = 0u; c < p.dim; c++) {
            dot += qs[c] * k[k_base + c];
        }
        let s = dot * p.scale;
        scores[base + j] = s;
        if (p.causal != 0u && j > q_pos) {
            masked[base + j] = NEG_INF_BITS;
        } else {
            var v = s;
            if (pad[j] == 0u) {
                v = s + PADDING_BIAS;
            }
            masked[base + j] = bitcast<u32>(v);
            m = max(m, v);
        }
    }
    // Every thread reduces the 64 partials itself, in the same order: two barriers in all, where a
    // tree would need twelve (each barrier is costly where workgroups are emulated, as on lavapipe).
    part_max[lid.x] = m;
    workgroupBarrier();
    var row_max = LOWEST;
    for (var u = 0u; u < WG; u++) {
        row_max = max(row_max, part_max[u]);
    }

    var sum = 0.0;
    for (var j = lid.x; j < p.s_len; j += WG) {
        let bits = masked[base + j];
        var e = 0.0;
        if (bits != NEG_INF_BITS) {
            e = exp(bitcast<f32>(bits) - row_max);
        }
        probs[base + j] = e;
        sum += e;
    }
    part_sum[lid.x] = sum;
    workgroupBarrier();
    var total = 0.0;
    for (var u = 0u; u < WG; u++) {
        total += part_sum[u];
    }
    for (var j = lid.x; j < p.s_len; j += WG) {
        if (total > 0.0) {
            probs[base + j] = probs[base + j] / total;
        }
    }
}

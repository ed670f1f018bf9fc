#!/usr/bin/env python3
"""One MiniMind-3 decoder layer in PyTorch on one CPU thread: the baseline of `cargo bench --bench layer`.

Same shapes as benches/layer.rs (hidden 768, 8 query / 4 KV heads, head_dim 96, FFN 2432, Q/K norm,
causal, batch 1, no cache, inference mode) at T = 128 and 1024, written the way MiniMind's
model/model_minimind.py runs it: nn.Linear products, RMSNorm, rotate-half RoPE, repeat_kv, then either
`F.scaled_dot_product_attention(is_causal=True)` (MiniMind's default, flash_attn = True: "sdpa") or its
explicit branch (scores, -inf triangle, softmax in f32, probs @ V: "manual"), then o_proj, the residual
and the SwiGLU FFN. The RoPE tables are built once outside the timing, as MiniMind precomputes them.
Weights, RMSNorm and RoPE come from tools/reference/make_fixtures.py, the script the fixtures were
made with, and before timing both paths are checked against its forward pass: this is the computation
tests/reference.rs holds the Rust core to.

Prints `torch-layer T=... attention=... median_ms=...` lines (the attention paths take turns in every
round; each figure is the median of the rounds), then `torch-matmul` lines for F.linear alone at the
layer's shapes. tools/bench/run.sh sets them against the Rust ones.

Run: python3 tools/bench/torch_layer.py
"""

import math
import os
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
from make_fixtures import BASE, forward, make_weights, rms_norm, rope_tables, rotate_half  # noqa: E402

# MiniMind-3 (docs/minimind-semantics.md, "Configuration"), one layer.
CONFIG = dict(BASE, hidden_size=768, num_hidden_layers=1, num_attention_heads=8, num_key_value_heads=4,
              intermediate_size=2432, vocab_size=6400)


def repeat_kv(x, n_rep):
    """MiniMind's repeat_kv: (B, S, nKV, d) -> (B, S, nKV * n_rep, d), KV head j serving n_rep query heads."""
    b, s, n_kv, d = x.shape
    return x[:, :, :, None, :].expand(b, s, n_kv, n_rep, d).reshape(b, s, n_kv * n_rep, d)


def decoder_layer(w, x, cos, sin, sdpa):
    """x: (1, T, H) -> (1, T, H), MiniMindBlock.forward without a cache."""
    eps = CONFIG["rms_norm_eps"]
    n_h, n_kv = CONFIG["num_attention_heads"], CONFIG["num_key_value_heads"]
    d = CONFIG["hidden_size"] // n_h
    b, t, _ = x.shape
    p = "model.layers.0."
    h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
    q = F.linear(h, w[p + "self_attn.q_proj.weight"]).view(b, t, n_h, d)  # (B, T, nH, d)
    k = F.linear(h, w[p + "self_attn.k_proj.weight"]).view(b, t, n_kv, d)  # (B, T, nKV, d)
    v = F.linear(h, w[p + "self_attn.v_proj.weight"]).view(b, t, n_kv, d)  # (B, T, nKV, d)
    q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
    k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
    q = q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]
    k = k * cos[:, None, :] + rotate_half(k) * sin[:, None, :]
    q = q.transpose(1, 2)  # (B, nH, T, d)
    k = repeat_kv(k, n_h // n_kv).transpose(1, 2)  # (B, nH, S, d)
    v = repeat_kv(v, n_h // n_kv).transpose(1, 2)  # (B, nH, S, d)
    if sdpa:
        ctx = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, is_causal=True)
    else:
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d)  # (B, nH, T, S)
        scores[:, :, :, -t:] += torch.full((t, t), float("-inf")).triu(1)
        ctx = F.softmax(scores.float(), dim=-1).type_as(q) @ v  # (B, nH, T, d)
    ctx = ctx.transpose(1, 2).reshape(b, t, n_h * d)  # (B, T, nH*d)
    x = x + F.linear(ctx, w[p + "self_attn.o_proj.weight"])
    g = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
    ffn = F.linear(F.silu(F.linear(g, w[p + "mlp.gate_proj.weight"])) * F.linear(g, w[p + "mlp.up_proj.weight"]),
                   w[p + "mlp.down_proj.weight"])
    return x + ffn


def check_against_reference(w):
    """Both paths equal layer 0 of the fixtures' forward (the one tests/reference.rs trusts) on 16 tokens."""
    ids = torch.randint(0, CONFIG["vocab_size"], (16,))
    want = forward(w, CONFIG, ids, None, None)[0]["layers.0.out"]
    x = w["model.embed_tokens.weight"][ids][None]
    cos, sin = rope_tables(CONFIG, 0, len(ids))
    for sdpa in (True, False):
        got = decoder_layer(w, x, cos, sin, sdpa)[0]
        rel = ((got - want).abs().max() / want.abs().max()).item()
        assert rel < 1e-5, f"decoder_layer(sdpa={sdpa}) differs from make_fixtures.forward by {rel:.1e}"


def interleaved(rounds, fns):
    """Median seconds per call of each function; they take turns in every round (see benches/layer.rs)."""
    reps = []
    for f in fns:
        start = time.perf_counter()
        f()  # warm-up, and how many calls make a 20 ms sample
        reps.append(max(1, math.ceil(0.02 / (time.perf_counter() - start))))
    samples = [[] for _ in fns]
    for _ in range(rounds):
        for f, n, s in zip(fns, reps, samples):
            start = time.perf_counter()
            for _ in range(n):
                f()
            s.append((time.perf_counter() - start) / n)
    return [sorted(s)[len(s) // 2] for s in samples]


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print(f"torch-machine torch={torch.__version__} threads={torch.get_num_threads()} mkl={torch.backends.mkl.is_available()}"
          f" aten_isa={torch.backends.cpu.get_cpu_capability()} mkl_isa={os.environ.get('MKL_ENABLE_INSTRUCTIONS', 'cpu')}")
    w = make_weights(CONFIG, seed=1)
    with torch.inference_mode():
        check_against_reference(w)
        for t in (128, 1024):
            x = torch.randn(1, t, CONFIG["hidden_size"])
            cos, sin = rope_tables(CONFIG, 0, t)
            paths = ("sdpa", "manual")
            fns = [lambda sdpa=(name == "sdpa"): decoder_layer(w, x, cos, sin, sdpa) for name in paths]
            for name, secs in zip(paths, interleaved(15 if t <= 128 else 7, fns)):
                print(f"torch-layer T={t} attention={name} median_ms={secs * 1e3:.2f}")
        # The layer's products alone (q_proj, gate_proj / up_proj, down_proj) and the output head's, to set against
        # `cargo bench --bench layer -- matmul`.
        for t in (128, 1024):
            for k, out in ((768, 768), (768, 2432), (2432, 768), (768, 6400)):  # benches/kernels SHAPES
                x, weight = torch.randn(t, k), torch.randn(out, k)
                (secs,) = interleaved(11, [lambda: F.linear(x, weight)])
                print(f"torch-matmul T={t} in={k} out={out} median_ms={secs * 1e3:.3f} gflops={2 * t * k * out / secs / 1e9:.1f}")


if __name__ == "__main__":
    main()

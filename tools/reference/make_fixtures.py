#!/usr/bin/env python3
"""PyTorch reference for attnscope's trace: writes the small fixtures under tests/fixtures/.

The forward pass below is written from shared/docs/minimind-semantics.md and checked, line for line,
against MiniMind's own model (jingyaogong/minimind, model/model_minimind.py, the Qwen3 layout):
RMSNorm with the weight applied after normalising, Q/K RMSNorm per head, rotate-half RoPE with
MiniMind's YaRN, repeat_kv, the causal -inf triangle on the last T key columns, the padding mask
(1 - mask) * -1e9, softmax in f32 and the SwiGLU FFN, or, with use_moe, MiniMind's MOEFeedForward
(router softmax, torch.topk, optional renormalisation, the experts' weighted sum by index_add_). Where the doc and the real model differ the
real model wins; tools/reference/README.md lists what was found.

It does not import transformers: every step is spelled out so that each tensor of the trace
contract (shared/docs/trace-contract.md) can be recorded under its contract name, batch dim dropped.
Each case writes tests/fixtures/<case>/{config.json, model.safetensors, input.json, trace.safetensors}
and is then self-checked (finite values, softmax rows, causal pattern, cache == no cache).

The interpretability cases (INTERP_CASES) also write run.json, what the run asks for beyond the input:
heads knocked out (`ablate`, their attn.context zeroed before o_proj), the logit lens
(`layers.{l}.logit_lens` = lm_head(norm(layers.{l}.out))) and direct logit attribution per head
(`layers.{l}.attn.head_logit`, each head's output pushed through o_proj, the final norm at its value in
the real run and lm_head's row of the target token), computed here head by head, as the definition reads.

Run: python3 tools/reference/make_fixtures.py [CASE ...]   (CPU, one thread, deterministic seeds; every
case when none is named)
"""

import json
import math
import shutil
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"

# MiniMind's fixed YaRN constants (MiniMindConfig.rope_scaling); the file's values are never read.
YARN = dict(factor=16, original_max_position_embeddings=2048, beta_fast=32.0, beta_slow=1.0, attention_factor=1.0)

BASE = dict(
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=64,
    vocab_size=256,
    rms_norm_eps=1e-6,
    rope_theta=1e6,
    max_position_embeddings=32768,
    tie_word_embeddings=True,
    inference_rope_scaling=False,
)
GQA = dict(BASE, hidden_size=64, num_attention_heads=8, num_key_value_heads=4, intermediate_size=64)

# name: (config overrides, sequence length S, attention mask or None, prefix_len P, weight dtype, seed)
CASES = {
    "gqa": (GQA, 9, None, 0, torch.float32, 1),
    "mha": (dict(BASE, num_key_value_heads=4), 10, None, 0, torch.float32, 2),
    "mqa": (dict(BASE, num_key_value_heads=1), 11, None, 0, torch.float32, 3),
    "head_dim_explicit": (dict(BASE, hidden_size=48, head_dim=16), 10, None, 0, torch.float32, 4),
    "left_padding": (BASE, 10, [0, 0, 0, 1, 1, 1, 1, 1, 1, 1], 0, torch.float32, 5),
    "inner_padding": (BASE, 10, [1, 1, 1, 1, 0, 1, 1, 1, 1, 1], 0, torch.float32, 6),
    "kv_cache": (BASE, 8, None, 7, torch.float32, 7),
    "kv_cache_prefill_chunk": (BASE, 9, None, 5, torch.float32, 8),
    # head_dim 32 at theta 1e6 spreads the 16 frequencies so that YaRN's ramp (i = 2..7) and its
    # 1/16 band (i >= 7) both move angles visibly at positions 120..123.
    "yarn": (dict(BASE, num_attention_heads=2, num_key_value_heads=1, head_dim=32, inference_rope_scaling=True),
             124, None, 120, torch.float32, 9),
    "theta_10k": (dict(BASE, num_attention_heads=2, num_key_value_heads=2, rope_theta=10000.0), 12, None, 0,
                  torch.float32, 10),
    "untied": (dict(BASE, vocab_size=320, tie_word_embeddings=False), 10, None, 0, torch.float32, 11),
    "odd_length": (dict(BASE, vocab_size=300), 13, None, 0, torch.float32, 12),
    "bf16": (GQA, 9, None, 0, torch.bfloat16, 1),
    "f16": (GQA, 9, None, 0, torch.float16, 1),
    # MiniMind's MoE: its defaults (4 experts, top-1, norm_topk_prob), then top-2, then top-2 of 3
    # experts without renormalisation, with experts narrower than intermediate_size, after a cache.
    "moe_top1": (dict(BASE, use_moe=True, num_experts=4, num_experts_per_tok=1, norm_topk_prob=True), 11, None, 0,
                 torch.float32, 20),
    "moe_top2": (dict(BASE, use_moe=True, num_experts=4, num_experts_per_tok=2, norm_topk_prob=True), 12, None, 0,
                 torch.float32, 21),
    "moe_top2_unnormed": (dict(BASE, use_moe=True, num_experts=3, num_experts_per_tok=2, norm_topk_prob=False,
                               moe_intermediate_size=48), 10, [0, 1, 1, 1, 1, 1, 1, 1, 1, 1], 4, torch.float32, 22),
}

# name: (config overrides, S, prefix_len P, seed, run options); the options are written to run.json.
INTERP_CASES = {
    # Two heads in different layers knocked out; lens and attribution toward each position's top-1.
    "ablate_lens": (dict(BASE, num_hidden_layers=3), 10, 0, 13,
                    dict(ablate=[[0, 1], [2, 3]], logit_lens=True, head_logit=True, target_token=None)),
    # One fixed target token at every position, after a cached prefix, nothing knocked out.
    "head_logit_target": (GQA, 9, 4, 14, dict(ablate=[], logit_lens=True, head_logit=True, target_token=17)),
}

DTYPE_NAMES = {torch.float32: "float32", torch.bfloat16: "bfloat16", torch.float16: "float16"}


def head_dim(cfg):
    return cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])


def make_weights(cfg, seed):
    """Random weights under MiniMind/HF names: linears std 0.02, norm weights 1 + 0.1 * randn."""
    g = torch.Generator().manual_seed(seed)
    H, I, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    nH, nKV, d = cfg["num_attention_heads"], cfg["num_key_value_heads"], head_dim(cfg)

    def linear(out_f, in_f):  # nn.Linear layout [out, in]
        return torch.randn(out_f, in_f, generator=g) * 0.02

    def norm(n):
        return 1.0 + 0.1 * torch.randn(n, generator=g)

    w = {"model.embed_tokens.weight": linear(V, H)}
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = norm(H)
        w[p + "self_attn.q_proj.weight"] = linear(nH * d, H)
        w[p + "self_attn.k_proj.weight"] = linear(nKV * d, H)
        w[p + "self_attn.v_proj.weight"] = linear(nKV * d, H)
        w[p + "self_attn.o_proj.weight"] = linear(H, nH * d)
        if cfg.get("qk_norm", True):  # Llama-style checkpoints have no Q/K norm
            w[p + "self_attn.q_norm.weight"] = norm(d)
            w[p + "self_attn.k_norm.weight"] = norm(d)
        w[p + "post_attention_layernorm.weight"] = norm(H)
        if cfg.get("use_moe", False):
            E, Im = cfg["num_experts"], cfg.get("moe_intermediate_size", I)
            # A router at std 0.02 would give near-uniform probabilities whose top-k order hangs on
            # rounding; at std 1/sqrt(H) the logits are O(1) and the choice is clear (checked below).
            w[p + "mlp.gate.weight"] = torch.randn(E, H, generator=g) / math.sqrt(H)
            for e in range(E):
                w[p + f"mlp.experts.{e}.gate_proj.weight"] = linear(Im, H)
                w[p + f"mlp.experts.{e}.up_proj.weight"] = linear(Im, H)
                w[p + f"mlp.experts.{e}.down_proj.weight"] = linear(H, Im)
        else:
            w[p + "mlp.gate_proj.weight"] = linear(I, H)
            w[p + "mlp.up_proj.weight"] = linear(I, H)
            w[p + "mlp.down_proj.weight"] = linear(H, I)
    w["model.norm.weight"] = norm(H)
    if not cfg["tie_word_embeddings"]:
        w["lm_head.weight"] = linear(V, H)
    return w


def rms_norm(x, weight, eps):
    return weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def inv_freq(cfg):
    """RoPE frequencies in f32 exactly as MiniMind's precompute_freqs_cis builds them."""
    d, theta = head_dim(cfg), cfg["rope_theta"]
    freqs = 1.0 / (theta ** (torch.arange(0, d, 2)[: d // 2].float() / d))
    # MiniMind tests max_position_embeddings (its table length), not the sequence: YaRN rescales
    # inv_freq for every position once the config allows more than 2048 positions.
    if cfg["inference_rope_scaling"] and cfg["max_position_embeddings"] / YARN["original_max_position_embeddings"] > 1.0:
        orig_max = YARN["original_max_position_embeddings"]

        def inv_dim(b):
            return d * math.log(orig_max / (b * 2 * math.pi)) / (2 * math.log(theta))

        low = max(math.floor(inv_dim(YARN["beta_fast"])), 0)
        high = min(math.ceil(inv_dim(YARN["beta_slow"])), d // 2 - 1)
        ramp = torch.clamp((torch.arange(d // 2).float() - low) / max(high - low, 0.001), 0, 1)
        freqs = freqs * (1 - ramp + ramp / YARN["factor"])
    return freqs


def rope_tables(cfg, start, n):
    """cos/sin [n, d] for positions start..start+n-1; halves repeated (rotate-half layout)."""
    attn_factor = YARN["attention_factor"] if cfg["inference_rope_scaling"] else 1.0
    angles = torch.outer(torch.arange(start, start + n), inv_freq(cfg)).float()  # (n, d/2), f32 like MiniMind
    cos = torch.cat([angles.cos(), angles.cos()], dim=-1) * attn_factor
    sin = torch.cat([angles.sin(), angles.sin()], dim=-1) * attn_factor
    return cos, sin


def rotate_half(u):
    half = u.shape[-1] // 2
    return torch.cat((-u[..., half:], u[..., :half]), dim=-1)


def feed_forward(x, w, prefix):
    """MiniMind's FeedForward: down_proj(silu(gate_proj(x)) * up_proj(x)); returns gate, up, act, out."""
    gate = x @ w[prefix + "gate_proj.weight"].T  # (T, I)
    up = x @ w[prefix + "up_proj.weight"].T  # (T, I)
    act = F.silu(gate) * up
    return gate, up, act, act @ w[prefix + "down_proj.weight"].T  # (T, H)


def moe_feed_forward(x, w, p, cfg, tr, n):
    """MiniMind's MOEFeedForward.forward at inference (model/model_minimind.py), statement by statement;
    the trace's expert_index / expert_weight / expert_out are its top-k sorted most probable first
    (torch.topk(sorted=False) leaves the order open). The aux loss is training only."""
    k = cfg["num_experts_per_tok"]
    logits = x @ w[p + "mlp.gate.weight"].T  # (T, E)
    scores = F.softmax(logits, dim=-1)
    topk_weight, topk_idx = torch.topk(scores, k=k, dim=-1, sorted=False)
    if cfg["norm_topk_prob"]:
        topk_weight = topk_weight / (topk_weight.sum(dim=-1, keepdim=True) + 1e-20)
    y = torch.zeros_like(x)
    outs = {}
    for i in range(cfg["num_experts"]):
        mask = topk_idx == i
        if mask.any():
            token_idx = mask.any(dim=-1).nonzero().flatten()
            weight = topk_weight[mask].view(-1, 1)
            out = feed_forward(x[token_idx], w, p + f"mlp.experts.{i}.")[3]
            outs[i] = dict(zip(token_idx.tolist(), out))
            y.index_add_(0, token_idx, (out * weight).to(y.dtype))
    order = torch.argsort(topk_weight, dim=-1, descending=True, stable=True)
    idx, weight = topk_idx.gather(-1, order), topk_weight.gather(-1, order)  # (T, k)
    tr[n + "ffn.router_logits"], tr[n + "ffn.router_probs"] = logits, scores
    tr[n + "ffn.expert_index"], tr[n + "ffn.expert_weight"] = idx.float(), weight
    tr[n + "ffn.expert_out"] = torch.stack([torch.stack([outs[e][t] for e in row]) for t, row in enumerate(idx.tolist())])
    return y


def forward(w, cfg, ids, mask, past, run=None):
    """One MiniMind call over `ids` after the cached `past` (list of (K, V) per layer, or None).

    Returns (trace dict, new cache). `mask` is the 0/1 attention mask over all S = P + T positions.
    `run` (an INTERP_CASES options dict) knocks out heads and adds the logit lens and head attribution;
    make_patch_fixtures.py adds `set_context` / `set_out`, lists of (layer, head or position, value):
    that slice of `attn.context` ([:, head, :], before o_proj) or row of `layers.{l}.out` is replaced.
    """
    run = run or dict(ablate=[], logit_lens=False, head_logit=False, target_token=None)
    eps = cfg["rms_norm_eps"]
    nH, nKV, d = cfg["num_attention_heads"], cfg["num_key_value_heads"], head_dim(cfg)
    n_rep = nH // nKV
    T = ids.shape[0]
    P = past[0][0].shape[0] if past else 0
    tr = {}

    x = w["model.embed_tokens.weight"][ids]  # (T, H)
    tr["embed"] = x
    cos, sin = rope_tables(cfg, P, T)  # (T, d)
    tr["rope.cos"], tr["rope.sin"] = cos, sin
    cache = []
    for l in range(cfg["num_hidden_layers"]):
        p, n = f"model.layers.{l}.", f"layers.{l}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        tr[n + "input_norm"] = h
        q = (h @ w[p + "self_attn.q_proj.weight"].T).view(T, nH, d)  # (T, nH, d)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).view(T, nKV, d)  # (T, nKV, d)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).view(T, nKV, d)  # (T, nKV, d)
        tr[n + "attn.q"], tr[n + "attn.k"], tr[n + "attn.v"] = q, k, v
        if p + "self_attn.q_norm.weight" in w:
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
            tr[n + "attn.q_norm"], tr[n + "attn.k_norm"] = q, k
        q = q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]
        k = k * cos[:, None, :] + rotate_half(k) * sin[:, None, :]
        tr[n + "attn.q_rope"], tr[n + "attn.k_rope"] = q, k
        K = torch.cat([past[l][0], k]) if past else k  # (S, nKV, d): rotated keys
        Vc = torch.cat([past[l][1], v]) if past else v  # (S, nKV, d): un-rotated values
        tr[n + "attn.k_cache"], tr[n + "attn.v_cache"] = K, Vc
        cache.append((K, Vc))
        S = K.shape[0]
        # repeat_kv: KV head j serves query heads j*n_rep .. j*n_rep + n_rep - 1.
        Kr = K[:, :, None, :].expand(S, nKV, n_rep, d).reshape(S, nH, d)  # (S, nH, d)
        Vr = Vc[:, :, None, :].expand(S, nKV, n_rep, d).reshape(S, nH, d)  # (S, nH, d)
        scores = (q.transpose(0, 1) @ Kr.permute(1, 2, 0)) / math.sqrt(d)  # (nH, T, S)
        tr[n + "attn.scores"] = scores
        masked = scores.clone()
        masked[:, :, -T:] += torch.full((T, T), float("-inf")).triu(1)
        if mask is not None:
            masked = masked + (1.0 - mask) * -1e9  # mask (S,) int64 -> f32, as in MiniMind
        tr[n + "attn.masked_scores"] = masked
        probs = F.softmax(masked.float(), dim=-1)  # (nH, T, S)
        tr[n + "attn.probs"] = probs
        ctx = (probs @ Vr.transpose(0, 1)).transpose(0, 1)  # (nH, T, d) -> (T, nH, d)
        for al, ah in run["ablate"]:
            if al == l:
                ctx = ctx.clone()
                ctx[:, ah, :] = 0.0
        for pl, ph, value in run.get("set_context", ()):  # activation patching (make_patch_fixtures.py)
            if pl == l:
                ctx = ctx.clone()
                ctx[:, ph, :] = value
        tr[n + "attn.context"] = ctx
        out = ctx.reshape(T, nH * d) @ w[p + "self_attn.o_proj.weight"].T  # (T, H)
        tr[n + "attn.out"] = out
        x = out + x
        tr[n + "attn.residual"] = x
        g = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        tr[n + "post_norm"] = g
        if cfg.get("use_moe", False):
            ffn = moe_feed_forward(g, w, p, cfg, tr, n)
        else:
            gate, up, act, ffn = feed_forward(g, w, p + "mlp.")
            tr[n + "ffn.gate"], tr[n + "ffn.up"], tr[n + "ffn.act"] = gate, up, act
        tr[n + "ffn.out"] = ffn
        x = x + ffn
        for pl, pp, value in run.get("set_out", ()):  # activation patching: the residual after this layer
            if pl == l:
                x = x.clone()
                x[pp] = value
        tr[n + "out"] = x
        if run["logit_lens"]:
            tr[n + "logit_lens"] = rms_norm(x, w["model.norm.weight"], eps) @ lm_head(w).T  # (T, V)
    resid = x
    x = rms_norm(x, w["model.norm.weight"], eps)
    tr["final_norm"] = x
    tr["logits"] = x @ lm_head(w).T  # (T, V)
    if run["head_logit"]:
        target = tr["logits"].argmax(-1) if run["target_token"] is None else torch.full((T,), run["target_token"])
        inv_rms = torch.rsqrt(resid.pow(2).mean(-1, keepdim=True) + eps)  # (T, 1): the real run's final norm
        direction = lm_head(w)[target] * w["model.norm.weight"] * inv_rms  # (T, H)
        for l in range(cfg["num_hidden_layers"]):
            n, o_proj = f"layers.{l}.", w[f"model.layers.{l}.self_attn.o_proj.weight"]  # (H, nH*d)
            ctx = tr[n + "attn.context"]  # (T, nH, d)
            # Each head's own output in the hidden size: its context slice through its o_proj columns.
            head_out = torch.stack([ctx[:, h, :] @ o_proj[:, h * d:(h + 1) * d].T for h in range(nH)], 1)  # (T, nH, H)
            tr[n + "attn.head_logit"] = (head_out * direction[:, None, :]).sum(-1)  # (T, nH)
    return tr, cache


def lm_head(w):
    return w.get("lm_head.weight", w["model.embed_tokens.weight"])


def run_case(w, cfg, ids, mask, P, run=None):
    """The contract's call: with P > 0, ids[:P] fill the cache first (mask[:P], as MiniMind's
    generate passes the mask of the tokens it has so far); the traced call gets the full mask.
    Knocked-out heads are knocked out in the prefix call too: the whole run is the ablated model's."""
    past = None
    if P > 0:
        prefix_run = None if run is None else dict(run, logit_lens=False, head_logit=False)
        _, past = forward(w, cfg, ids[:P], None if mask is None else mask[:P], None, prefix_run)
    trace, _ = forward(w, cfg, ids[P:], mask, past, run)
    return trace


def row_slices(trace, P):
    """The rows P.. of a no-cache trace, i.e. what the cached call must reproduce."""
    out = {}
    for name, t in trace.items():
        if name.endswith(("k_cache", "v_cache")):
            out[name] = t
        elif name.endswith(("attn.scores", "attn.masked_scores", "attn.probs")):
            out[name] = t[:, P:, :]
        else:
            out[name] = t[P:]
    return out


def max_diff(a, b):
    """Max |a - b| over entries finite in both; the -inf patterns must match exactly."""
    assert torch.equal(torch.isinf(a), torch.isinf(b)), "-inf pattern differs"
    fin = torch.isfinite(a)
    return (a[fin] - b[fin]).abs().max().item() if fin.any() else 0.0


def check(name, cfg, trace, ids, mask, P, w, run=None):
    S, T = ids.shape[0], ids.shape[0] - P
    notes = []
    for tname, t in trace.items():
        assert t.dtype == torch.float32, f"{name}/{tname}: {t.dtype}"
        assert not torch.isnan(t).any(), f"{name}/{tname}: NaN"
        if tname.endswith("masked_scores"):
            assert not (t == float("inf")).any(), f"{name}/{tname}: +inf"
            # -inf exactly where key j is after query P + i.
            causal = torch.arange(S)[None, :] > (P + torch.arange(T))[:, None]
            assert torch.equal(torch.isinf(t), causal.expand_as(t)), f"{name}/{tname}: causal pattern"
        else:
            assert torch.isfinite(t).all(), f"{name}/{tname}: non-finite"
        if tname.endswith("attn.probs"):
            rows = t.sum(-1)  # (nH, T)
            real = torch.ones(T, dtype=torch.bool) if mask is None else mask[P:].bool()
            err = (rows[:, real] - 1).abs().max().item()
            assert err < 1e-5, f"{name}/{tname}: unmasked rows sum to 1 +- {err}"
            assert (rows - 1).abs().max().item() < 1e-5, f"{name}/{tname}: padded rows do not sum to 1"
            if mask is not None:
                assert (t[:, real][..., mask == 0] == 0).all(), f"{name}/{tname}: weight on padding"
    if P > 0:
        full, _ = forward(w, cfg, ids, mask, None, run)
        ref = row_slices(full, P)
        diff = max(max_diff(trace[k], ref[k]) for k in trace)
        assert diff < 1e-5, f"{name}: cached call differs from the full run by {diff}"
        notes.append(f"cache==full {diff:.1e}")
    if cfg.get("use_moe", False):
        k = cfg["num_experts_per_tok"]
        for l in range(cfg["num_hidden_layers"]):
            probs = trace[f"layers.{l}.ffn.router_probs"].sort(dim=-1, descending=True).values
            # The k-th and (k+1)-th probabilities must be far apart, or float rounding could pick another expert.
            margin = (probs[:, k - 1] - probs[:, k]).min().item() if k < cfg["num_experts"] else 1.0
            assert margin > 1e-3, f"{name}: layer {l}'s top-{k} choice hangs on {margin:.1e}"
            used = trace[f"layers.{l}.ffn.expert_index"].unique().numel()
            notes.append(f"L{l}: {used} experts used, top-k margin {margin:.1e}")
    if cfg["inference_rope_scaling"]:
        plain_cos, plain_sin = rope_tables(dict(cfg, inference_rope_scaling=False), P, T)
        moved = max((trace["rope.cos"] - plain_cos).abs().max().item(), (trace["rope.sin"] - plain_sin).abs().max().item())
        assert moved > 0.05, f"{name}: YaRN barely changes the RoPE tables ({moved})"
        notes.append(f"yarn moves cos/sin {moved:.2f}")
    if run is not None:
        notes += check_interp(name, cfg, trace, run, w, ids, mask, P)
    return notes


def check_interp(name, cfg, trace, run, w, ids, mask, P):
    """The interpretability tensors against what they must be, computed another way."""
    L, notes = cfg["num_hidden_layers"], []
    logits = trace["logits"]
    for l, h in run["ablate"]:
        assert (trace[f"layers.{l}.attn.context"][:, h, :] == 0).all(), f"{name}: head {l}:{h} not knocked out"
        assert (trace[f"layers.{l}.attn.head_logit"][:, h] == 0).all(), f"{name}: knocked-out head {l}:{h} pushes"
    if run["ablate"]:
        # Knocking the heads out must change the prediction measurably, or the case tests nothing.
        unablated = run_case(w, cfg, ids, mask, P)["logits"]
        change = (unablated - logits).abs().max().item()
        assert change > 1e-3, f"{name}: knocking out {run['ablate']} moves the logits by only {change}"
        notes.append(f"ablation moves logits {change:.1e}")
    if run["logit_lens"]:
        last = (trace[f"layers.{L - 1}.logit_lens"] - logits).abs().max().item()
        assert last < 1e-6, f"{name}: the last layer's logit lens is not the logits ({last})"
    if run["head_logit"]:
        # Top-1 targets must not be near-ties, or a rounding difference could pick another token.
        top2 = logits.topk(2, -1).values
        gap = (top2[:, 0] - top2[:, 1]).min().item()
        if run["target_token"] is None:
            assert gap > 1e-4 * logits.abs().max().item(), f"{name}: top-1 near a tie ({gap})"
            notes.append(f"top-1 gap {gap:.1e}")
        # The decomposition: with the final norm frozen at the real run's scale the logit is linear in
        # the residual stream = embed + every layer's heads (attn.out = sum of heads) + every FFN output.
        T = logits.shape[0]
        target = logits.argmax(-1) if run["target_token"] is None else torch.full((T,), run["target_token"])
        heads = sum(trace[f"layers.{l}.attn.head_logit"].sum(-1) for l in range(L))  # (T,)
        resid = trace[f"layers.{L - 1}.out"]
        inv_rms = torch.rsqrt(resid.pow(2).mean(-1, keepdim=True) + cfg["rms_norm_eps"])
        direction = lm_head(w)[target] * w["model.norm.weight"] * inv_rms  # (T, H)
        rest = trace["embed"] + sum(trace[f"layers.{l}.ffn.out"] for l in range(L))  # (T, H)
        total = heads + (rest * direction).sum(-1)
        want = logits.gather(1, target[:, None])[:, 0]
        err = (total - want).abs().max().item()
        assert err < 1e-4 * want.abs().max().item() + 1e-6, f"{name}: heads + embed + FFNs = {total} but logits {want}"
        notes.append(f"heads+rest=logit {err:.1e}")
    return notes


def write_case(name, overrides, S, mask_list, P, dtype, seed, run=None):
    cfg = dict(overrides)
    d = head_dim(cfg)
    w = make_weights(cfg, seed)
    stored = {k: v.to(dtype).contiguous() for k, v in w.items()}
    w = {k: v.float() for k, v in stored.items()}  # compute in f32 from the stored (rounded) weights

    ids = torch.randint(0, cfg["vocab_size"], (S,), generator=torch.Generator().manual_seed(1000 + seed))
    mask = None if mask_list is None else torch.tensor(mask_list, dtype=torch.int64)
    assert mask is None or mask.shape[0] == S
    trace = run_case(w, cfg, ids, mask, P, run)
    notes = check(name, cfg, trace, ids, mask, P, w, run)
    if dtype != torch.float32:
        gqa_trace = run_case({k: v.float() for k, v in make_weights(cfg, seed).items()}, cfg, ids, mask, P)
        notes.append(f"logits vs f32 weights {max_diff(trace['logits'], gqa_trace['logits']):.1e}")

    out = FIXTURES / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    config = dict({"use_moe": False}, **cfg, model_type="minimind", hidden_act="silu", torch_dtype=DTYPE_NAMES[dtype])
    if cfg["inference_rope_scaling"]:
        config["rope_scaling"] = dict(YARN, type="yarn")  # what MiniMind's save_pretrained writes
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file(stored, str(out / "model.safetensors"), metadata={"format": "pt"})
    inp = {"ids": ids.tolist(), "attention_mask": mask_list, "prefix_len": P}
    (out / "input.json").write_text(json.dumps(inp) + "\n")
    if run is not None:
        (out / "run.json").write_text(json.dumps(run) + "\n")
    save_file({k: v.float().contiguous().clone() for k, v in trace.items()}, str(out / "trace.safetensors"),
              metadata={"format": "pt"})

    size = sum(f.stat().st_size for f in out.iterdir())
    row = (name, cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["num_key_value_heads"],
           d, cfg["intermediate_size"], cfg["vocab_size"], f"{cfg['rope_theta']:g}", S, P, S - P,
           "-" if mask_list is None else "".join(map(str, mask_list)), DTYPE_NAMES[dtype], len(trace),
           f"{size / 1024:.0f}K", "; ".join(notes))
    return row, size


def main(names):
    """Writes the cases named (every case when none is)."""
    torch.set_num_threads(1)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    header = ("case", "H", "L", "nH", "nKV", "d", "I", "V", "theta", "S", "P", "T", "mask", "weights", "tensors",
              "size", "checks")
    rows, total = [], 0
    specs = {**CASES, **{n: (cfg, S, None, P, torch.float32, seed, run) for n, (cfg, S, P, seed, run) in INTERP_CASES.items()}}
    unknown = [n for n in names if n not in specs]
    assert not unknown, f"no case named {unknown}; the cases: {', '.join(specs)}"
    for name, spec in specs.items():
        if names and name not in names:
            continue
        row, size = write_case(name, *spec)
        rows.append(row)
        total += size
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(str(c).ljust(wd) for c, wd in zip(r, widths)))
    print(f"all checks passed; {len(rows)} cases, {total / 1024:.0f} KiB in {FIXTURES.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])

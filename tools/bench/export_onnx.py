#!/usr/bin/env python3
"""The model of the onnxruntime-web comparison (tools/bench/ort.mjs): one MiniMind-3-shape layer
(hidden 768, 8 query / 4 KV heads, head_dim 96, FFN 2432, vocab 6400, Q/K norm, tied lm_head) with
random weights, written three ways into artifacts/bench-ort/:

  config.json + model.safetensors   what attnscope's Session loads;
  model.onnx                        the same weights as an ONNX graph (token ids [T] -> logits [T, V]),
                                    written with the `onnx` helper API, op for op the forward pass of
                                    tools/reference/make_fixtures.py (RMSNorm, Q/K norm, rotate-half
                                    RoPE, repeat_kv, causal softmax, SwiGLU);
  reference.json                    PyTorch's logits (make_fixtures.forward) for the bench's ids, which
                                    ort.mjs checks both engines against.

A tool, never CI. Run: /work/pyenv/bin/python tools/bench/export_onnx.py
"""

import json
import math
import sys
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from safetensors.torch import save_file

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "reference"))
import make_fixtures as ref  # noqa: E402  (the PyTorch reference forward)

OUT = ROOT / "artifacts" / "bench-ort"
CFG = dict(
    hidden_size=768, num_hidden_layers=1, num_attention_heads=8, num_key_value_heads=4, head_dim=96,
    intermediate_size=2432, vocab_size=6400, rms_norm_eps=1e-6, rope_theta=1e6,
    max_position_embeddings=32768, tie_word_embeddings=True, inference_rope_scaling=False,
)
MAX_T = 512  # the longest input the bench runs; RoPE tables and the causal mask are cut from this
SEED = 11


def bench_ids(t):
    """The ids ort.mjs sends at length t (the same formula there)."""
    return [(i * 37 + 11) % CFG["vocab_size"] for i in range(t)]


def graph(w):
    H, nH, nKV, d = CFG["hidden_size"], CFG["num_attention_heads"], CFG["num_key_value_heads"], CFG["head_dim"]
    eps, n_rep = CFG["rms_norm_eps"], nH // nKV
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op, inputs, **attrs):
        out = f"{op.lower()}_{len(nodes)}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def f32(t):
        return t.detach().float().numpy()

    def rms(x, weight):
        ms = node("ReduceMean", [node("Mul", [x, x])], axes=[-1], keepdims=1)
        inv = node("Reciprocal", [node("Sqrt", [node("Add", [ms, const(f"eps_{len(nodes)}", np.array(eps, np.float32))])])])
        return node("Mul", [node("Mul", [x, inv]), weight])

    def linear(x, name):  # x @ W^T, W^T stored [in, out] as exporters do
        return node("MatMul", [x, const(name + ".T", f32(w[name]).T)])

    p = "model.layers.0."
    emb = const("embed", f32(w["model.embed_tokens.weight"]))
    x = node("Gather", [emb, "ids"], axis=0)  # (T, H)
    t_shape = node("Shape", ["ids"])  # [T]
    cos_t, sin_t = ref.rope_tables(CFG, 0, MAX_T)
    zero = const("zero", np.array([0], np.int64))
    cos = node("Unsqueeze", [node("Slice", [const("cos", f32(cos_t)), zero, t_shape, zero]), const("ax1", np.array([1], np.int64))])
    sin = node("Unsqueeze", [node("Slice", [const("sin", f32(sin_t)), zero, t_shape, zero]), "ax1"])  # (T, 1, d)
    causal = np.triu(np.full((MAX_T, MAX_T), -np.inf, np.float32), 1)
    mask = node("Slice", [const("causal", causal), const("zero2", np.array([0, 0], np.int64)), node("Concat", [t_shape, t_shape], axis=0)])

    def rope(u):  # u * cos + rotate_half(u) * sin, u (T, heads, d)
        lo = node("Slice", [u, const(f"s0_{len(nodes)}", np.array([0], np.int64)), const(f"s1_{len(nodes)}", np.array([d // 2], np.int64)), const(f"a_{len(nodes)}", np.array([-1], np.int64))])
        hi = node("Slice", [u, const(f"s2_{len(nodes)}", np.array([d // 2], np.int64)), const(f"s3_{len(nodes)}", np.array([d], np.int64)), const(f"a2_{len(nodes)}", np.array([-1], np.int64))])
        rot = node("Concat", [node("Neg", [hi]), lo], axis=-1)
        return node("Add", [node("Mul", [u, cos]), node("Mul", [rot, sin])])

    def heads(u, n):
        return node("Reshape", [u, const(f"shape_{len(nodes)}", np.array([-1, n, d], np.int64))])

    h = rms(x, const("in_norm", f32(w[p + "input_layernorm.weight"])))
    q = rope(rms(heads(linear(h, p + "self_attn.q_proj.weight"), nH), const("q_norm", f32(w[p + "self_attn.q_norm.weight"]))))
    k = rope(rms(heads(linear(h, p + "self_attn.k_proj.weight"), nKV), const("k_norm", f32(w[p + "self_attn.k_norm.weight"]))))
    v = heads(linear(h, p + "self_attn.v_proj.weight"), nKV)

    def repeat_kv(u):  # (T, nKV, d) -> (T, nH, d), KV head j serving query heads j*n_rep ..
        un = node("Unsqueeze", [u, const(f"ax2_{len(nodes)}", np.array([2], np.int64))])
        return heads(node("Concat", [un] * n_rep, axis=2), nH)

    qt = node("Transpose", [q], perm=[1, 0, 2])  # (nH, T, d)
    kt = node("Transpose", [repeat_kv(k)], perm=[1, 2, 0])  # (nH, d, T)
    vt = node("Transpose", [repeat_kv(v)], perm=[1, 0, 2])  # (nH, T, d)
    scores = node("Add", [node("Mul", [node("MatMul", [qt, kt]), const("scale", np.array(1 / math.sqrt(d), np.float32))]), mask])
    ctx = node("MatMul", [node("Softmax", [scores], axis=-1), vt])  # (nH, T, d)
    ctx = node("Reshape", [node("Transpose", [ctx], perm=[1, 0, 2]), const("flat", np.array([-1, nH * d], np.int64))])
    x = node("Add", [x, linear(ctx, p + "self_attn.o_proj.weight")])
    g = rms(x, const("post_norm", f32(w[p + "post_attention_layernorm.weight"])))
    gate = linear(g, p + "mlp.gate_proj.weight")
    act = node("Mul", [node("Mul", [gate, node("Sigmoid", [gate])]), linear(g, p + "mlp.up_proj.weight")])
    x = node("Add", [x, linear(act, p + "mlp.down_proj.weight")])
    x = rms(x, const("final_norm", f32(w["model.norm.weight"])))
    logits = node("MatMul", [x, const("lm_head.T", f32(w["model.embed_tokens.weight"]).T)])
    nodes.append(helper.make_node("Identity", [logits], ["logits"]))
    g = helper.make_graph(
        nodes, "minimind3_layer",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["T"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["T", CFG["vocab_size"]])],
        inits,
    )
    # IR version 8 (the one opset 17 came with): onnxruntime-web 1.23 refuses newer IR versions.
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    return model


def main():
    torch.manual_seed(0)
    OUT.mkdir(parents=True, exist_ok=True)
    w = ref.make_weights(CFG, SEED)
    save_file({k: v.contiguous() for k, v in w.items()}, OUT / "model.safetensors", metadata={"format": "pt"})
    config = {k: v for k, v in CFG.items() if k != "inference_rope_scaling"}
    (OUT / "config.json").write_text(json.dumps(dict(config, model_type="minimind", qk_norm=True), indent=2))
    onnx.save(graph(w), OUT / "model.onnx")
    reference = {}
    for t in (128, 512):
        tr, _ = ref.forward(w, CFG, torch.tensor(bench_ids(t)), None, None)
        reference[str(t)] = tr["logits"].flatten().tolist()
    (OUT / "reference.json").write_text(json.dumps(reference))
    print(f"wrote {OUT}/config.json, model.safetensors, model.onnx ({(OUT / 'model.onnx').stat().st_size / 1e6:.1f} MB), reference.json")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""GGUF reference fixtures: tiny GGUF models with traces, raw K-quant blocks, and SmolLM2-135M numbers.

Writes, under tests/fixtures/ (see tests/fixtures/README.md, "GGUF fixtures"):

1. gguf/<case>/ for every case of CASES: `model.gguf` (written with gguf-py's GGUFWriter, llama.cpp's
   tensor names and metadata keys; llama's attn_q / attn_k permuted as convert_hf_to_gguf.py does),
   `input.json`, `weights.safetensors` (every tensor of the file dequantized by gguf-py, under its GGUF
   name, as stored) and `trace.safetensors` (transformers' own GGUF loader, eager attention, f32), each
   trace checked here against a short forward of our own over the gguf-py-dequantized weights.
2. gguf/kquants/: `model.gguf` holding random Q2_K..Q6_K super-blocks with sane f16 scales, and
   `expected.safetensors`, gguf-py's dequantization of each.
3. smollm2/: `reference.json` (tokenizer ids, top-10 next tokens, greedy continuations, the file's
   special ids, an induction probe) and `logits.safetensors`, from transformers over the real
   SmolLM2-135M-Instruct Q4_1 GGUF (not committed; path below or $SMOLLM2_GGUF).

Run: python tools/reference/make_gguf_fixtures.py [tiny] [kquants] [smollm2]   (all three when none is
named; CPU, two threads, fixed seeds, about a minute).
"""

import json
import os
import sys
from pathlib import Path

import numpy as np
import torch
import gguf
from gguf import GGMLQuantizationType as Q, GGUFReader, GGUFValueType, GGUFWriter
from safetensors.numpy import save_file as _save_file

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
GGUF_DIR = FIXTURES / "gguf"
SMOL_DIR = FIXTURES / "smollm2"
SMOLLM2 = Path(os.environ.get("SMOLLM2_GGUF", ROOT / "www/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))

torch.set_num_threads(2)


def save_file(tensors, path):
    _save_file(tensors, path)
    os.chmod(path, 0o644)  # safetensors creates the file 0600

# ---------------------------------------------------------------------------------------------------
# 1. Tiny models
# ---------------------------------------------------------------------------------------------------

CFG = dict(hidden=64, layers=2, heads=4, kv_heads=2, head_dim=16, ffn=128, vocab=256, eps=1e-5, ctx=2048)

# case: (architecture, ggml type of the matrices, untied output.weight, weight seed)
CASES = {
    "llama_f32": ("llama", Q.F32, False, 1),
    "llama_f16": ("llama", Q.F16, False, 1),
    "llama_bf16": ("llama", Q.BF16, False, 1),
    "llama_q8_0": ("llama", Q.Q8_0, False, 1),
    "llama_q4_0": ("llama", Q.Q4_0, False, 1),
    "llama_q4_1": ("llama", Q.Q4_1, False, 1),
    "llama_q5_0": ("llama", Q.Q5_0, False, 1),
    "llama_q5_1": ("llama", Q.Q5_1, False, 1),
    "llama_untied_q8_0": ("llama", Q.Q8_0, True, 1),
    "qwen3_f32": ("qwen3", Q.F32, False, 2),
    "qwen2_f32": ("qwen2", Q.F32, False, 3),
}
THETA = {"llama": 10000.0, "qwen2": 1e6, "qwen3": 1e6}
INPUT_SEED = 7  # the same 10 ids for every case
# llama.cpp's general.file_type for a file whose matrices are all of one type
FILE_TYPE = {Q.F32: 0, Q.F16: 1, Q.Q4_0: 2, Q.Q4_1: 3, Q.Q8_0: 7, Q.Q5_0: 8, Q.Q5_1: 9, Q.BF16: 32}


def bytes_to_unicode():
    """GPT-2's byte -> printable character table (the byte-level BPE alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def hf_weights(arch, untied, seed):
    """Random weights under Hugging Face names, [out, in]: matrices std 0.02, norms 1 + 0.1*randn."""
    rng = np.random.default_rng(seed)
    H, I, V, nH, nKV, d = (CFG[k] for k in ("hidden", "ffn", "vocab", "heads", "kv_heads", "head_dim"))

    def mat(o, i):
        return (rng.standard_normal((o, i)) * 0.02).astype(np.float32)

    def norm(n):
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    def bias(n):
        return (0.1 * rng.standard_normal(n)).astype(np.float32)

    w = {"model.embed_tokens.weight": mat(V, H)}
    for l in range(CFG["layers"]):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = norm(H)
        w[p + "self_attn.q_proj.weight"] = mat(nH * d, H)
        w[p + "self_attn.k_proj.weight"] = mat(nKV * d, H)
        w[p + "self_attn.v_proj.weight"] = mat(nKV * d, H)
        if arch == "qwen2":
            w[p + "self_attn.q_proj.bias"] = bias(nH * d)
            w[p + "self_attn.k_proj.bias"] = bias(nKV * d)
            w[p + "self_attn.v_proj.bias"] = bias(nKV * d)
        w[p + "self_attn.o_proj.weight"] = mat(H, nH * d)
        if arch == "qwen3":
            w[p + "self_attn.q_norm.weight"] = norm(d)
            w[p + "self_attn.k_norm.weight"] = norm(d)
        w[p + "post_attention_layernorm.weight"] = norm(H)
        w[p + "mlp.gate_proj.weight"] = mat(I, H)
        w[p + "mlp.up_proj.weight"] = mat(I, H)
        w[p + "mlp.down_proj.weight"] = mat(H, I)
    w["model.norm.weight"] = norm(H)
    if untied:  # drawn last, so every other tensor equals the tied case's
        w["lm_head.weight"] = mat(V, H)
    return w


def permute(w, n_head):
    """convert_hf_to_gguf.py LlamaModel.permute: HF's rotate-half rows -> llama.cpp's interleaved pairs."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def unpermute(w, n_head):
    """The inverse of permute (transformers' reverse_permute_weights)."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


GGUF_NAMES = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}


def gguf_tensors(arch, w):
    """HF names -> llama.cpp names, in llama.cpp's order; llama's q/k permuted like the converter."""
    out = {"token_embd.weight": w["model.embed_tokens.weight"]}
    for l in range(CFG["layers"]):
        for hf, gg in GGUF_NAMES.items():
            t = w.get(f"model.layers.{l}.{hf}")
            if t is None:
                continue
            if arch == "llama" and hf == "self_attn.q_proj.weight":
                t = permute(t, CFG["heads"])
            elif arch == "llama" and hf == "self_attn.k_proj.weight":
                t = permute(t, CFG["kv_heads"])
            out[f"blk.{l}.{gg}"] = t
    out["output_norm.weight"] = w["model.norm.weight"]
    if "lm_head.weight" in w:
        out["output.weight"] = w["lm_head.weight"]
    return out


class Writer(GGUFWriter):
    """GGUFWriter that can write an empty array (it refuses one; llama.cpp reads it, and requires
    tokenizer.ggml.merges to be present for a gpt2 vocabulary)."""

    def _pack_val(self, val, vtype, add_vtype, sub_type=None):
        if vtype == GGUFValueType.ARRAY and len(val) == 0:
            out = bytearray()
            if add_vtype:
                out += self._pack("I", vtype)
            out += self._pack("I", sub_type)
            out += self._pack("Q", 0)
            return bytes(out)
        return super()._pack_val(val, vtype, add_vtype, sub_type)


def write_model_gguf(path, case, arch, qtype, tensors):
    H, nH, nKV, d = CFG["hidden"], CFG["heads"], CFG["kv_heads"], CFG["head_dim"]
    wr = Writer(str(path), arch)
    wr.add_name(case)
    wr.add_file_type(FILE_TYPE[qtype])
    wr.add_context_length(CFG["ctx"])
    wr.add_embedding_length(H)
    wr.add_block_count(CFG["layers"])
    wr.add_feed_forward_length(CFG["ffn"])
    wr.add_head_count(nH)
    wr.add_head_count_kv(nKV)
    wr.add_layer_norm_rms_eps(CFG["eps"])
    wr.add_rope_freq_base(THETA[arch])
    wr.add_rope_dimension_count(d)
    if arch == "qwen3":
        wr.add_key_length(d)
        wr.add_value_length(d)
    wr.add_tokenizer_model("gpt2")
    wr.add_tokenizer_pre("default")
    b2u = bytes_to_unicode()
    wr.add_token_list([b2u[i] for i in range(256)])
    wr.add_token_types([1] * 256)
    wr.add_key_value("tokenizer.ggml.merges", [], GGUFValueType.ARRAY, sub_type=GGUFValueType.STRING)
    wr.add_bos_token_id(0)
    wr.add_eos_token_id(0)
    for name, t in tensors.items():
        if t.ndim == 1 or qtype == Q.F32:  # norms and biases stay F32, as llama.cpp keeps them
            wr.add_tensor(name, t.astype(np.float32))
        elif qtype == Q.F16:
            wr.add_tensor(name, t.astype(np.float16))
        else:
            wr.add_tensor(name, gguf.quants.quantize(t, qtype), raw_dtype=qtype)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()


def read_dequantized(path):
    """Every tensor of a GGUF, dequantized by gguf-py, float32, shape as GGUFReader gives it."""
    r = GGUFReader(str(path))
    out, types = {}, {}
    for t in r.tensors:
        a = gguf.quants.dequantize(t.data, t.tensor_type)
        out[t.name] = np.ascontiguousarray(a, dtype=np.float32)
        types[t.name] = t.tensor_type.name
    return out, types


def rms_norm(x, w, eps):
    x32 = x.float()
    return w * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(u):
    a, b = u.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


def own_forward(arch, wq, ids, eps, theta):
    """A short f32 forward over gguf-py-dequantized weights (GGUF names), HF's rotate-half RoPE after
    undoing llama's q/k permutation. Returns the same tensors as the transformers trace."""
    W = {k: torch.from_numpy(v.copy()) for k, v in wq.items()}
    H, nH, nKV, d, L = CFG["hidden"], CFG["heads"], CFG["kv_heads"], CFG["head_dim"], CFG["layers"]
    T = len(ids)
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    ang = torch.outer(torch.arange(T).float(), inv)
    emb = torch.cat((ang, ang), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    x = W["token_embd.weight"][torch.tensor(ids)]
    tr = {"embed": x.clone()}
    causal = torch.full((T, T), float("-inf")).triu(1)
    for l in range(L):
        p = f"blk.{l}."
        wqm, wkm = W[p + "attn_q.weight"], W[p + "attn_k.weight"]
        if arch == "llama":
            wqm, wkm = torch.from_numpy(unpermute(wqm.numpy(), nH)), torch.from_numpy(unpermute(wkm.numpy(), nKV))
        h = rms_norm(x, W[p + "attn_norm.weight"], eps)
        q, k, v = h @ wqm.T, h @ wkm.T, h @ W[p + "attn_v.weight"].T
        if arch == "qwen2":
            q, k, v = q + W[p + "attn_q.bias"], k + W[p + "attn_k.bias"], v + W[p + "attn_v.bias"]
        q, k, v = q.view(T, nH, d).transpose(0, 1), k.view(T, nKV, d).transpose(0, 1), v.view(T, nKV, d).transpose(0, 1)
        if arch == "qwen3":
            q, k = rms_norm(q, W[p + "attn_q_norm.weight"], eps), rms_norm(k, W[p + "attn_k_norm.weight"], eps)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = nH // nKV
        k, v = k.repeat_interleave(rep, dim=0), v.repeat_interleave(rep, dim=0)
        s = q @ k.transpose(-1, -2) * d ** -0.5 + causal
        pr = torch.softmax(s, dim=-1, dtype=torch.float32)
        ctx = (pr @ v).transpose(0, 1).reshape(T, nH * d)
        x = x + ctx @ W[p + "attn_output.weight"].T
        h = rms_norm(x, W[p + "ffn_norm.weight"], eps)
        g, u = h @ W[p + "ffn_gate.weight"].T, h @ W[p + "ffn_up.weight"].T
        x = x + (torch.nn.functional.silu(g) * u) @ W[p + "ffn_down.weight"].T
        tr[f"layers.{l}.attn.probs"] = pr
        tr[f"layers.{l}.out"] = x.clone()
    fn = rms_norm(x, W["output_norm.weight"], eps)
    tr["final_norm"] = fn
    tr["logits"] = fn @ W.get("output.weight", W["token_embd.weight"]).T
    return tr


def hf_trace(model, ids):
    """Run a transformers model once over ids (no batch dim kept): logits, embed, every layer's output
    (a forward hook on each decoder layer), attention probabilities, and the final norm."""
    outs = {}

    def hook(l):
        def f(_m, _inp, out):
            outs[l] = (out[0] if isinstance(out, tuple) else out).detach()
        return f

    layers = model.model.layers
    hs = [layers[l].register_forward_hook(hook(l)) for l in range(len(layers))]
    try:
        with torch.no_grad():
            o = model(torch.tensor([ids]), output_hidden_states=True, output_attentions=True, use_cache=False)
    finally:
        for h in hs:
            h.remove()
    L = len(layers)
    tr = {"embed": o.hidden_states[0][0], "logits": o.logits[0], "final_norm": o.hidden_states[-1][0]}
    for l in range(L):
        tr[f"layers.{l}.out"] = outs[l][0]
        tr[f"layers.{l}.attn.probs"] = o.attentions[l][0]
        if l < L - 1:  # hidden_states[l+1] is layer l's output except for the last (normed there)
            assert torch.equal(o.hidden_states[l + 1][0], outs[l][0]), l
    return tr


def to_np(tr):
    return {k: np.ascontiguousarray(v.detach().float().numpy(), dtype=np.float32) for k, v in tr.items()}


def max_rel(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))


def make_tiny(summary):
    from transformers import AutoModelForCausalLM

    ids = np.random.default_rng(INPUT_SEED).integers(0, 256, size=10).tolist()
    for case, (arch, qtype, untied, seed) in CASES.items():
        d = GGUF_DIR / case
        d.mkdir(parents=True, exist_ok=True)
        tensors = gguf_tensors(arch, hf_weights(arch, untied, seed))
        write_model_gguf(d / "model.gguf", case, arch, qtype, tensors)
        deq, types = read_dequantized(d / "model.gguf")
        assert list(deq) == list(tensors), "tensor order"
        for name, t in tensors.items():  # quantization error is small, and F32 exact
            assert deq[name].shape == t.shape, name
            if types[name] == "F32":
                assert np.array_equal(deq[name], t), name
            else:
                assert np.abs(deq[name] - t).max() < 0.2 * np.abs(t).max(), name
        save_file(deq, str(d / "weights.safetensors"))
        (d / "input.json").write_text(json.dumps({"ids": ids, "attention_mask": None, "prefix_len": 0}) + "\n")

        own = to_np(own_forward(arch, deq, ids, CFG["eps"], THETA[arch]))
        source, note = "transformers", ""
        try:
            kw = dict(gguf_file="model.gguf", dtype=torch.float32, attn_implementation="eager")
            try:
                model = AutoModelForCausalLM.from_pretrained(str(d), **kw).eval()
            except RuntimeError as e:
                if arch != "qwen3":
                    raise
                # transformers' GGUF config mapping does not read qwen3.attention.key_length, so Qwen3Config's
                # default head_dim (128) stands and every attention weight mismatches; say it ourselves.
                model = AutoModelForCausalLM.from_pretrained(str(d), head_dim=CFG["head_dim"], **kw).eval()
                note = f"transformers needed head_dim={CFG['head_dim']} passed (ignores key_length)"
            assert model.config._attn_implementation == "eager"
            tr = to_np(hf_trace(model, ids))
            diff = max(max_rel(own[k], tr[k]) for k in tr)
            if diff > 1e-4:
                raise RuntimeError(f"transformers differs from the own forward by {diff:.2e} (relative)")
        except Exception as e:  # write the file anyway, with our own forward's trace
            source, note, tr, diff = "own", f"{type(e).__name__}: {e}"[:120], own, 0.0
            print(f"  {case}: transformers refused or disagreed ({note}); trace from own forward")
        save_file(tr, str(d / "trace.safetensors"))
        pr = tr["layers.0.attn.probs"]
        assert np.allclose(pr.sum(-1), 1, atol=1e-5) and np.all(np.triu(pr, 1) == 0)
        summary.append((case, arch, qtype.name, "untied" if untied else "tied", source, f"{diff:.1e}",
                        f"{(d / 'model.gguf').stat().st_size}", note))


# ---------------------------------------------------------------------------------------------------
# 2. K-quant blocks
# ---------------------------------------------------------------------------------------------------

# name: (type, block bytes, offsets of the f16 d field, of the f16 dmin field or None)
KQUANTS = {
    "q2_k": (Q.Q2_K, 84, 80, 82),
    "q3_k": (Q.Q3_K, 110, 108, None),
    "q4_k": (Q.Q4_K, 144, 0, 2),
    "q5_k": (Q.Q5_K, 176, 0, 2),
    "q6_k": (Q.Q6_K, 210, 208, None),
}
KQ_SHAPE = (2, 512)  # 4 super-blocks of 256


def make_kquants(summary):
    d = GGUF_DIR / "kquants"
    d.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(42)
    wr = GGUFWriter(str(d / "model.gguf"), "llama")  # a tensor container: no hyperparameters
    wr.add_name("kquants")
    raw = {}
    for name, (qt, nbytes, off_d, off_m) in KQUANTS.items():
        assert gguf.GGML_QUANT_SIZES[qt] == (256, nbytes)
        nblk = KQ_SHAPE[0] * KQ_SHAPE[1] // 256
        b = rng.integers(0, 256, size=(nblk, nbytes), dtype=np.uint8)
        for off in (off_d, off_m):
            if off is not None:
                b[:, off:off + 2] = rng.uniform(1e-3, 1e-2, size=nblk).astype(np.float16).view(np.uint8).reshape(nblk, 2)
        b = b.reshape(KQ_SHAPE[0], -1)
        raw[name] = b
        wr.add_tensor(name, b, raw_dtype=qt)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()
    exp, types = read_dequantized(d / "model.gguf")
    r = GGUFReader(str(d / "model.gguf"))
    for t in r.tensors:
        assert np.array_equal(np.asarray(t.data).reshape(-1), raw[t.name].reshape(-1)), t.name
        assert exp[t.name].shape == KQ_SHAPE and np.isfinite(exp[t.name]).all()
        summary.append((f"kquants/{t.name}", "-", types[t.name], "-", "gguf-py", "-",
                        f"{int(np.abs(exp[t.name]).max() * 1000) / 1000}", "max |x|"))
    save_file(exp, str(d / "expected.safetensors"))


# ---------------------------------------------------------------------------------------------------
# 3. SmolLM2-135M-Instruct (Q4_1)
# ---------------------------------------------------------------------------------------------------

TOKENIZE = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "Attention is all you need, isn't it?",
    "When Mary and John went to the store, John gave a drink to",
    "The capital of France is",
    "In 2024 there were 1,234,567 people.",
    "3.14159 and 42 and 007",
    "今天小红很开心，她很好",
    "I ❤️ 🦀 and 👩‍👩‍👧",
    "def f(x):\n    return x**2  # square",
    "a  b   c\t\td\n\n\ne",
    " hello",
    "<|im_start|>user\nhi<|im_end|>",
    "<|endoftext|>",
]
PROMPTS = [
    "When Mary and John went to the store, John gave a drink to",
    "The capital of France is",
    "The cat sat on the",
]
TRACE_PROBS = (0, 16, 18)
TRACE_OUT = (0, 29)
INDUCTION = dict(seed=0, n=32, low=100, high=40000, induction=(18, 6), prev=(16, 0))

# llama.cpp's pre-tokenizer for tokenizer.ggml.pre == "smollm" (llama-vocab.cpp: digits isolated, then
# GPT-2's split), to set beside transformers' choice; see the README.
LLAMACPP_SMOLLM_SPLITS = [r"\p{N}", r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"]


def gguf_meta(path):
    r = GGUFReader(str(path))
    out = {}
    for k, f in r.fields.items():
        if k.startswith("tokenizer.ggml.") and k in ("tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                                                     "tokenizer.ggml.token_type", "tokenizer.ggml.scores"):
            out[k] = f"[{len(f.data)} entries]"
            continue
        v = f.contents()
        out[k] = v
    return out


def make_smollm2(summary):
    from tokenizers import Regex, pre_tokenizers
    from transformers import AutoModelForCausalLM, AutoTokenizer
    import transformers

    SMOL_DIR.mkdir(parents=True, exist_ok=True)
    src = dict(pretrained_model_name_or_path=str(SMOLLM2.parent), gguf_file=SMOLLM2.name)
    tok = AutoTokenizer.from_pretrained(**src)
    model = AutoModelForCausalLM.from_pretrained(**src, dtype=torch.float32, attn_implementation="eager").eval()
    assert model.config._attn_implementation == "eager"
    meta = gguf_meta(SMOLLM2)
    cfg = model.config

    # the same vocabulary and merges, split as llama.cpp's "smollm" pre-tokenizer does
    import copy
    llama_tok = copy.deepcopy(tok.backend_tokenizer)
    llama_tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(s), behavior="isolated") for s in LLAMACPP_SMOLLM_SPLITS]
        + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )

    tokenize = []
    for text in TOKENIZE:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        entry = {"text": text, "ids": ids, "pieces": tok.convert_ids_to_tokens(ids)}
        alt = llama_tok.encode(text, add_special_tokens=False).ids
        assert tok.decode(ids) == text, text
        if alt != ids:
            entry["ids_llamacpp_smollm_split"] = alt
        tokenize.append(entry)
    with_special = tok("hi", add_special_tokens=True)["input_ids"]

    tensors, prompts = {}, []
    for k, text in enumerate(PROMPTS):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        tr = to_np(hf_trace(model, ids))
        logits = tr["logits"][-1]
        p = torch.softmax(torch.from_numpy(logits).double(), -1)
        top = torch.topk(p, 10)
        with torch.no_grad():
            gen = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                 do_sample=False, max_new_tokens=12, pad_token_id=tok.eos_token_id)
        greedy = gen[0, len(ids):].tolist()
        # greedy's first token is the argmax of the traced logits
        assert greedy[0] == int(np.argmax(logits))
        prompts.append({
            "text": text, "ids": ids,
            "top10": [[int(i), float(v)] for v, i in zip(top.values, top.indices)],
            "top10_pieces": tok.convert_ids_to_tokens(top.indices.tolist()),
            "greedy": greedy, "greedy_text": tok.decode(greedy),
        })
        tensors[f"prompt{k}.logits"] = np.ascontiguousarray(logits)
        for l in TRACE_PROBS:
            tensors[f"prompt{k}.layers.{l}.attn.probs"] = tr[f"layers.{l}.attn.probs"]
        for l in TRACE_OUT:
            tensors[f"prompt{k}.layers.{l}.out"] = tr[f"layers.{l}.out"]
        summary.append((f"smollm2/prompt{k}", "llama", "Q4_1", "tied", "transformers", "-", str(len(ids)),
                        f"top1 {tok.convert_ids_to_tokens(int(top.indices[0]))!r} {float(top.values[0]):.3f}"))

    # induction probe: 32 random ids, written twice
    I = INDUCTION
    rnd = np.random.default_rng(I["seed"]).choice(np.arange(I["low"], I["high"]), size=I["n"], replace=False).tolist()
    seq = rnd + rnd
    tr = to_np(hf_trace(model, seq))
    n = I["n"]
    li, hi = I["induction"]
    lp, hp = I["prev"]
    a = tr[f"layers.{li}.attn.probs"][hi]
    induct = float(np.mean([a[n + j, j + 1] for j in range(n)]))
    b = tr[f"layers.{lp}.attn.probs"][hp]
    prev = float(np.mean([b[i, i - 1] for i in range(1, 2 * n)]))
    print(f"induction probe: layer {li} head {hi} mean weight on the token after the first occurrence = {induct:.4f}; "
          f"layer {lp} head {hp} mean weight on the previous token = {prev:.4f}")

    def plain(v):
        if isinstance(v, (np.generic,)):
            return v.item()
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v

    ref = {
        "model": SMOLLM2.name,
        "made_with": {"transformers": transformers.__version__, "torch": torch.__version__,
                      "gguf": getattr(gguf, "__version__", None) or _dist_version("gguf")},
        "bos_token_id": meta.get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": meta.get("tokenizer.ggml.eos_token_id"),
        "add_bos_token": meta.get("tokenizer.ggml.add_bos_token"),
        "tokenizer_add_bos_token": getattr(tok, "add_bos_token", None),
        "ids_for_hi_with_special_tokens": with_special,
        "metadata": {k: plain(v) for k, v in meta.items() if k != "tokenizer.chat_template"},
        "config": {k: getattr(cfg, k, None) for k in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                                      "num_key_value_heads", "intermediate_size", "vocab_size",
                                                      "rms_norm_eps", "max_position_embeddings",
                                                      "tie_word_embeddings")},
        "rope_theta": _rope_theta(cfg),
        "pre_tokenizer": json.loads(tok.backend_tokenizer.to_str())["pre_tokenizer"],
        "tokenize": tokenize,
        "prompts": prompts,
        "trace_layers": {"attn.probs": list(TRACE_PROBS), "out": list(TRACE_OUT)},
        "induction": {"ids": rnd, "layer_head_induction": [li, hi], "induction_mean": induct,
                      "layer_head_prev": [lp, hp], "prev_token_mean": prev,
                      "definition": "ids written twice (no BOS); induction_mean = mean over j in 0..n-1 of "
                                    "probs[n+j, j+1]; prev_token_mean = mean over i in 1..2n-1 of probs[i, i-1]"},
    }
    (SMOL_DIR / "reference.json").write_text(json.dumps(ref, ensure_ascii=False, indent=1) + "\n")
    save_file(tensors, str(SMOL_DIR / "logits.safetensors"))
    summary.append(("smollm2/induction", "llama", "Q4_1", "tied", "transformers", "-", str(len(seq)),
                    f"L{li}H{hi} {induct:.3f}, L{lp}H{hp} prev {prev:.3f}"))


def _rope_theta(cfg):
    rp = getattr(cfg, "rope_parameters", None)
    if isinstance(rp, dict) and "rope_theta" in rp:
        return rp["rope_theta"]
    return getattr(cfg, "rope_theta", None)


def _dist_version(name):
    from importlib.metadata import version
    return version(name)


def main():
    parts = sys.argv[1:] or ["tiny", "kquants", "smollm2"]
    summary = []
    if "tiny" in parts:
        make_tiny(summary)
    if "kquants" in parts:
        make_kquants(summary)
    if "smollm2" in parts:
        make_smollm2(summary)
    print()
    print(f"{'case':26} {'arch':6} {'type':5} {'head':7} {'trace':13} {'vs own':8} {'size/T':>8}  note")
    for row in summary:
        print(f"{row[0]:26} {row[1]:6} {row[2]:5} {row[3]:7} {row[4]:13} {row[5]:8} {row[6]:>8}  {row[7]}")


if __name__ == "__main__":
    main()

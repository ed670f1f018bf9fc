#!/usr/bin/env python3
"""Tiny checkpoints for loading your own model in the page: tests/fixtures/checkpoints/.

The end-to-end test tests/e2e/checkpoint.test.mjs hands these to the page as files (picker and drop)
and as a folder URL, and compares what the page computes with PyTorch's numbers written here:

  minimind3_bf16/  MiniMind-3 layout (Q/K norm, tied lm_head), bf16, config.json says model_type minimind
  llama_f16/       Llama layout (no Q/K norm, its own lm_head), f16, config.json says model_type llama
                   and nothing about qk_norm

Each is a whole model folder: config.json, model.safetensors and tokenizer.json, a byte-level BPE with
the 256 bytes as its whole vocabulary (no merges), in GPT-2's byte alphabet like MiniMind's. Both models
have vocab_size 256, too few for MiniMind's 6400-token tokenizer, which the page must refuse for them.
expected.json holds a sentence, the ids this tokenizer gives it (Hugging Face's `tokenizers`), and
PyTorch's layer-0 attention probs [nH, T, T] and last-position logits [V] for those ids, from
make_fixtures.py's forward on the stored (rounded) weights in f32.

  minimind2_small/ MiniMind2-Small's config exactly (hidden 512, 8 layers, 8 heads / 2 KV heads, no Q/K
                   norm, vocab 6400, Llama layout, tied), MiniMind's tokenizer: config.json and
                   expected.json only. Its 26 M weights (52 MB in bf16) are not committed: each is a
                   small integer over 8192, exact in bf16, from `formula_weights` below, which the
                   tests repeat (tests/minimind2.rs, tests/e2e/hub.test.mjs) to write the same file.

Run from the repository root:  python3 tools/reference/make_checkpoints.py
"""

import json
import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as ref  # noqa: E402

OUT = ref.ROOT / "tests" / "fixtures" / "checkpoints"
TEXT = "Attention is all you need."

SMALL = dict(ref.BASE, vocab_size=256)
CASES = {
    "minimind3_bf16": (dict(SMALL, model_type="minimind"), torch.bfloat16, 21),
    "llama_f16": (dict(SMALL, model_type="llama", qk_norm=False, tie_word_embeddings=False), torch.float16, 22),
}


def bytes_to_unicode():
    """GPT-2's byte alphabet: byte b -> a printable character (as `tokenizers`' ByteLevel uses)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, n = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + n)
            n += 1
    return chars


def byte_tokenizer():
    """Byte-level BPE whose 256 tokens are the bytes in order (id b is byte b), with no merges."""
    alphabet = bytes_to_unicode()
    tok = Tokenizer(models.BPE(vocab={alphabet[b]: b for b in range(256)}, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    return tok


def write(name, cfg, dtype, seed, tok):
    w = ref.make_weights(cfg, seed)
    stored = {k: v.to(dtype).contiguous() for k, v in w.items()}
    w = {k: v.float() for k, v in stored.items()}  # compute in f32 from the stored (rounded) weights
    ids = tok.encode(TEXT).ids
    assert ids == list(TEXT.encode("utf-8")), "the byte tokenizer gives the bytes"
    trace, _ = ref.forward(w, cfg, torch.tensor(ids), None, None)
    probs = trace["layers.0.attn.probs"]
    assert torch.allclose(probs.sum(-1), torch.ones(probs.shape[:-1])), "softmax rows sum to 1"

    out = OUT / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    config = {k: v for k, v in cfg.items() if k != "qk_norm"}  # a Llama config.json does not say qk_norm
    config.update(hidden_act="silu", torch_dtype=ref.DTYPE_NAMES[dtype])
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file(stored, str(out / "model.safetensors"), metadata={"format": "pt"})
    expected = {
        "text": TEXT,
        "ids": ids,
        "probs_shape": list(probs.shape),
        "probs": [round(float(x), 7) for x in probs.flatten()],
        "logits_last": [round(float(x), 6) for x in trace["logits"][-1]],
    }
    (out / "expected.json").write_text(json.dumps(expected) + "\n")
    tok.save(str(out / "tokenizer.json"))
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"{name}: {len(stored)} tensors, {ref.DTYPE_NAMES[dtype]}, {len(ids)} tokens, {size / 1024:.0f} KiB")
    return size


MINIMIND2_SMALL = dict(
    hidden_size=512, num_hidden_layers=8, num_attention_heads=8, num_key_value_heads=2, intermediate_size=1408,
    vocab_size=6400, rms_norm_eps=1e-5, rope_theta=1e6, max_position_embeddings=32768, tie_word_embeddings=True,
    inference_rope_scaling=False, qk_norm=False,
)
MINIMIND2_TEXT = "Attention is all you need. 注意力就是你所需要的。"


def formula_weights(cfg):
    """Every weight a formula of its place: norm weights 1; the k-th other tensor (names sorted), element
    i, ((i * 2654435761 + (k + 1) * 40503) mod 2^32 >> 16) mod 255 - 127, over 8192: exact in bf16."""
    w = {}
    for k, (name, t) in enumerate(sorted(ref.make_weights(cfg, 0).items())):
        if name.endswith("norm.weight"):
            w[name] = torch.ones_like(t)
            continue
        i = torch.arange(t.numel(), dtype=torch.int64)
        v = (((i * 2654435761 + (k + 1) * 40503) & 0xFFFFFFFF) >> 16) % 255 - 127
        w[name] = (v.float() / 8192).reshape(t.shape)
    return w


def write_minimind2():
    """minimind2_small/: config.json and PyTorch's numbers for MINIMIND2_TEXT under MiniMind's tokenizer."""
    cfg = MINIMIND2_SMALL
    w = {k: v.to(torch.bfloat16).float() for k, v in formula_weights(cfg).items()}
    assert all(torch.equal(v, formula_weights(cfg)[k]) for k, v in w.items()), "exact in bf16"
    ids = Tokenizer.from_file(str(ref.ROOT / "www" / "minimind" / "tokenizer.json")).encode(MINIMIND2_TEXT).ids
    trace, _ = ref.forward(w, cfg, torch.tensor(ids), None, None)
    out = OUT / "minimind2_small"
    out.mkdir(parents=True, exist_ok=True)
    config = {k: v for k, v in cfg.items() if k != "qk_norm"}  # MiniMind2's config.json does not say qk_norm
    config.update(model_type="minimind", hidden_act="silu", use_moe=False, torch_dtype="bfloat16")
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    probs = trace["layers.0.attn.probs"]
    expected = {
        "text": MINIMIND2_TEXT,
        "ids": ids,
        "probs_shape": list(probs.shape),
        "probs": [round(float(x), 7) for x in probs.flatten()],
        "logits_last": [round(float(x), 6) for x in trace["logits"][-1]],
    }
    (out / "expected.json").write_text(json.dumps(expected) + "\n")
    print(f"minimind2_small: {sum(v.numel() for v in w.values())} weights (not stored), {len(ids)} tokens")


def main():
    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    tok = byte_tokenizer()
    total = 0
    for name, (cfg, dtype, seed) in CASES.items():
        total += write(name, cfg, dtype, seed, tok)
    write_minimind2()
    print(f"{total / 1024:.0f} KiB in {OUT.relative_to(ref.ROOT)}")


if __name__ == "__main__":
    main()

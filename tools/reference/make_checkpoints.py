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


def main():
    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    tok = byte_tokenizer()
    total = 0
    for name, (cfg, dtype, seed) in CASES.items():
        total += write(name, cfg, dtype, seed, tok)
    print(f"{total / 1024:.0f} KiB in {OUT.relative_to(ref.ROOT)}")


if __name__ == "__main__":
    main()

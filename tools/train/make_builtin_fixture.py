#!/usr/bin/env python3
"""Reference trace of the built-in model for one short English + Chinese sample: tests/fixtures/builtin/.

Runs tools/reference/make_fixtures.py's forward (PyTorch, f32 from the shipped f16 weights, no cache, no
padding) on www/models/builtin, BOS first, and writes
  tests/fixtures/builtin/input.json         {"ids": [...], "attention_mask": null, "prefix_len": 0}
  tests/fixtures/builtin/trace.safetensors  the trace under its contract names, f32, batch dim dropped
so a Rust test can run `attnscope trace --model www/models/builtin --input input.json` and compare.
To keep the fixture small, the I-wide FFN intermediates (layers.*.ffn.gate, .up, .act) are left out;
every other contract tensor is present (see tests/fixtures/builtin/README.md, also written here).

Run from the repository root after train_builtin.py:

    python3 tools/train/make_builtin_fixture.py
"""

import json
import sys
from pathlib import Path

import tokenizers
import torch
from safetensors.torch import load_file, save_file

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "reference"))
import make_fixtures as ref  # noqa: E402

MODEL = ROOT / "www" / "models" / "builtin"
OUT = ROOT / "tests" / "fixtures" / "builtin"
TEXT = "The cat sat on the mat. 小猫坐在垫子上。"
DROPPED = ("ffn.gate", "ffn.up", "ffn.act")
BOS = 1  # <|im_start|>: first, as the model was trained and as the page shows every input


def main():
    torch.set_num_threads(1)
    cfg = json.loads((MODEL / "config.json").read_text())
    stored = load_file(str(MODEL / "model.safetensors"))
    assert all(v.dtype == torch.float16 for v in stored.values()) and "lm_head.weight" not in stored
    w = {k: v.float() for k, v in stored.items()}
    tok = tokenizers.Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    ids = [BOS] + tok.encode(TEXT, add_special_tokens=False).ids
    trace = ref.run_case(w, cfg, torch.tensor(ids), None, 0)
    ref.check("builtin", cfg, trace, torch.tensor(ids), None, 0, w)
    kept = {k: v.float().contiguous().clone() for k, v in trace.items() if not k.endswith(DROPPED)}
    dropped = [k for k in trace if k.endswith(DROPPED)]

    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "input.json").write_text(json.dumps({"ids": ids, "attention_mask": None, "prefix_len": 0}) + "\n")
    save_file(kept, str(OUT / "trace.safetensors"), metadata={"format": "pt", "text": TEXT})
    size = (OUT / "trace.safetensors").stat().st_size
    top = trace["logits"][-1].topk(5)
    top_text = ", ".join(f"{i} {tok.decode([i], skip_special_tokens=False)!r}" for i in top.indices.tolist())
    readme = f"""# Built-in model reference trace

`tools/train/make_builtin_fixture.py` ran the PyTorch reference forward (`tools/reference/make_fixtures.py`)
on the built-in model `www/models/builtin` (its f16 weights, computed in f32, no cache, no padding) for

    {TEXT}

tokenized with MiniMind's tokenizer after its BOS token `<|im_start|>` (id 1): {len(ids)} ids (`input.json`). The Rust side
checks `attnscope trace --model www/models/builtin --input tests/fixtures/builtin/input.json` against
`trace.safetensors` ({size / 1024:.0f} KiB) with the contract's tolerance.

Present: every tensor of the trace contract under its contract name ({len(kept)} tensors), including
`embed`, `rope.cos`/`rope.sin`, all per-layer attention tensors (`attn.q` … `attn.probs`, `attn.context`,
`attn.out`, `attn.residual`), `post_norm`, `ffn.out`, `out`, `final_norm` and `logits` [T, 6400].

Left out to keep the file small ({len(dropped)} tensors): `layers.{{l}}.ffn.gate`, `layers.{{l}}.ffn.up` and
`layers.{{l}}.ffn.act` ([T, {cfg['intermediate_size']}] each) for every layer; `ffn.out` and `out` still pin the FFN.

ids: {ids}

The model's top-5 next tokens after the last position: {top_text}.
"""
    (OUT / "README.md").write_text(readme)
    print(f"{len(ids)} ids, {len(kept)} tensors kept, {len(dropped)} dropped, trace {size} bytes")


if __name__ == "__main__":
    main()

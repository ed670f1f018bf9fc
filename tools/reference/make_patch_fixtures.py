#!/usr/bin/env python3
"""PyTorch reference for activation patching (`attnscope patch`): writes tests/fixtures/patch_*/.

Definitions (issue #47, shared/docs/trace-contract.md's `patch.*` rows). Two inputs of equal length T, `clean`
and `corrupt` (no padding, no cache, causal), a `target` and an `against` token id. The metric of a run is
m = logits[T-1, target] - logits[T-1, against], in f32.

  patch.clean_metric   [1]      m of the clean run
  patch.corrupt_metric [1]      m of the corrupted run
  patch.resid_out      [L, T]   m of the corrupted run with `layers.{l}.out` at position p replaced by the clean
                                run's (layers l+1.., the final norm and lm_head continue from there)
  patch.head_context   [L, nH]  m of the corrupted run with query head h's slice of layer l's `attn.context`
                                ([:, h, :], probs @ V before o_proj) replaced by the clean run's, at every position

Every run is make_fixtures.py's forward (imported, not copied), with its two patching hooks `set_out` and
`set_context`; one forward per entry, as the definition reads. Checked on every case, exactly (==), whatever the
numbers: patching layer L-1's output at T-1 gives the clean metric, and at any p < T-1 the corrupt metric; at
positions before the first changed id every entry is the corrupt metric; patching a layer's output at every
position gives the clean metric; patching with the corrupted run's own activations changes nothing (a few
entries of each kind); patching every head of a layer at once equals replacing that layer's whole context
(every layer). And: target and against are each run's clear top-1 (no near-tie).

Cases:
  patch_gqa      tests/fixtures/gqa's model (referenced, not copied) on its own 9 ids, two of them (3 and the last) changed
  patch_builtin  www/models/builtin (f16 weights, computed in f32) on BOS + an indirect-object sentence

Run from anywhere: python3 tools/reference/make_patch_fixtures.py [CASE ...]   (CPU, one thread, seconds)
"""

import json
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "reference"))
import make_fixtures as ref  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
BOS = 1  # <|im_start|>
IOI_CLEAN = "When Mary and John went to the store, John gave a drink to"
IOI_CORRUPT = "When Mary and John went to the store, Mary gave a drink to"


def load_model(rel):
    d = ROOT / rel
    cfg = json.loads((d / "config.json").read_text())
    cfg.setdefault("inference_rope_scaling", False)
    w = {k: v.float() for k, v in load_file(str(d / "model.safetensors")).items()}  # f32 from the stored weights
    return cfg, w


def run(w, cfg, ids, **patches):
    """One forward over ids (no cache, no mask) with make_fixtures' patching hooks; returns the trace."""
    opts = dict(ablate=[], logit_lens=False, head_logit=False, target_token=None, **patches)
    return ref.forward(w, cfg, torch.tensor(ids), None, None, opts)[0]


def metric(trace, target, against):
    last = trace["logits"][-1]
    return (last[target] - last[against]).reshape(1)  # f32 [1]


def top1(trace):
    """The last position's top-1 and its gap to the second, asserted clear of float rounding."""
    last = trace["logits"][-1]
    top = last.topk(2)
    gap = (top.values[0] - top.values[1]).item()
    assert gap > 1e-4 * last.abs().max().item(), f"top-1 near a tie ({gap})"
    return top.indices[0].item(), gap


def patch(cfg, w, clean, corrupt, target, against):
    """The four tensors, one forward per entry."""
    L, nH, T = cfg["num_hidden_layers"], cfg["num_attention_heads"], len(clean)
    tc = run(w, cfg, clean)
    m = lambda **p: metric(run(w, cfg, corrupt, **p), target, against)  # noqa: E731
    resid = torch.stack([torch.cat([m(set_out=[(l, p, tc[f"layers.{l}.out"][p])]) for p in range(T)])
                         for l in range(L)])
    heads = torch.stack([torch.cat([m(set_context=[(l, h, tc[f"layers.{l}.attn.context"][:, h, :])])
                                    for h in range(nH)]) for l in range(L)])
    out = {
        "patch.clean_metric": metric(tc, target, against),
        "patch.corrupt_metric": m(),
        "patch.resid_out": resid,
        "patch.head_context": heads,
    }
    return {k: v.float().contiguous().clone() for k, v in out.items()}, tc


def check(cfg, w, clean, corrupt, target, against, out, tc):
    """What must hold whatever the numbers; every comparison exact. Returns notes for the summary."""
    L, nH, T = cfg["num_hidden_layers"], cfg["num_attention_heads"], len(clean)
    cm, km = out["patch.clean_metric"], out["patch.corrupt_metric"]
    resid, heads = out["patch.resid_out"], out["patch.head_context"]
    assert resid.shape == (L, T) and heads.shape == (L, nH) and cm.shape == km.shape == (1,)
    assert all(torch.isfinite(t).all() for t in out.values())
    assert cm.item() != km.item(), "the corruption does not move the metric"
    # Layer L-1's output at T-1 is all the last logits see of the residual.
    assert resid[L - 1, T - 1] == cm[0], f"resid_out[L-1, T-1] = {resid[L - 1, T - 1]} but clean {cm}"
    assert (resid[L - 1, :T - 1] == km[0]).all(), f"resid_out[L-1, :T-1] {resid[L - 1, :T - 1]} != corrupt {km}"
    # Before the first changed id both runs' activations are the same: patching them changes nothing.
    first = next(i for i in range(T) if clean[i] != corrupt[i])
    assert (resid[:, :first] == km[0]).all(), "patching an unchanged prefix moved the metric"
    notes = [f"prefix 0..{first - 1} unchanged"]
    tk = run(w, cfg, corrupt)
    for l in range(L):
        # Every position of a layer's output from the clean run: the rest of the forward is the clean run's.
        every = metric(run(w, cfg, corrupt, set_out=[(l, slice(None), tc[f"layers.{l}.out"])]), target, against)
        assert every == cm, f"layer {l}: every position patched gives {every}, clean {cm}"
        # Every head of the layer at once, one set_context entry per head, against the whole context at once.
        ctx = tc[f"layers.{l}.attn.context"]
        per_head = run(w, cfg, corrupt, set_context=[(l, h, ctx[:, h, :]) for h in range(nH)])
        whole = run(w, cfg, corrupt, set_context=[(l, slice(None), ctx)])
        assert metric(per_head, target, against) == metric(whole, target, against), f"layer {l}: heads != whole"
        assert torch.equal(per_head["logits"], whole["logits"])
    # The corrupted run's own activations change nothing.
    own = [("out", 0, first), ("out", L // 2, T - 1), ("out", L - 1, T - 1), ("out", L - 1, first),
           ("context", 0, 0), ("context", L - 1, nH - 1), ("context", L // 2, nH // 2)]
    for kind, l, i in own:
        if kind == "out":
            t = run(w, cfg, corrupt, set_out=[(l, i, tk[f"layers.{l}.out"][i])])
        else:
            t = run(w, cfg, corrupt, set_context=[(l, i, tk[f"layers.{l}.attn.context"][:, i, :])])
        assert torch.equal(t["logits"], tk["logits"]), f"own {kind} {l}:{i} moved the logits"
    notes.append(f"{len(own)} own-activation patches no-ops")
    return notes


def write(name, model, clean, corrupt, target, against, cfg, w):
    out, tc = patch(cfg, w, clean, corrupt, target, against)
    notes = check(cfg, w, clean, corrupt, target, against, out, tc)
    d = FIXTURES / name
    d.mkdir(parents=True, exist_ok=True)
    inp = {"model": model, "clean": clean, "corrupt": corrupt, "target": target, "against": against}
    (d / "input.json").write_text(json.dumps(inp) + "\n")
    for f in d.iterdir():
        assert f.name in ("input.json", "trace.safetensors", "README.md"), f"stray file {f}"
    save_file(out, str(d / "trace.safetensors"), metadata={"format": "pt"})
    resid, heads = out["patch.resid_out"], out["patch.head_context"]
    rl, rp = divmod(resid.abs().argmax().item(), resid.shape[1])
    hl, hh = divmod(heads.abs().argmax().item(), heads.shape[1])
    km = out["patch.corrupt_metric"].item()
    hd = (heads - km).abs()
    dl, dh = divmod(hd.argmax().item(), heads.shape[1])
    print(f"{name}: model {model}, T = {len(clean)}, target {target}, against {against}")
    print(f"  clean   {clean}\n  corrupt {corrupt}")
    print(f"  clean_metric {out['patch.clean_metric'].item():.6f}, corrupt_metric {km:.6f}")
    print(f"  resid_out {list(resid.shape)}: largest |entry| {resid[rl, rp].item():.6f} at (layer {rl}, position {rp})")
    print(f"  head_context {list(heads.shape)}: largest |entry| {heads[hl, hh].item():.6f} at (layer {hl}, head {hh}); "
          f"largest move from corrupt {heads[dl, dh].item() - km:+.6f} at (layer {dl}, head {dh})")
    print(f"  smallest |entry|: resid_out {resid.abs().min().item():.3g}, head_context {heads.abs().min().item():.3g}")
    print(f"  checks passed: {'; '.join(notes)}; trace.safetensors {(d / 'trace.safetensors').stat().st_size} B")
    return out


def case_gqa():
    model = "tests/fixtures/gqa"
    cfg, w = load_model(model)
    clean = json.loads((ROOT / model / "input.json").read_text())["ids"]
    target, gap = top1(run(w, cfg, clean))
    # Positions 3 and 8 (the last) changed; the first replacement pair (from a fixed list) whose top-1 differs is
    # kept. This random model's last top-1 is the last token itself (tied embeddings): changing only positions
    # before T-1 moved it in none of the 7104 tries (8 pairs of positions among 1..7, 37 x 24 replacement ids each).
    for a, b in [(200, 50), (77, 150), (5, 240)]:
        corrupt = list(clean)
        corrupt[3], corrupt[8] = a, b
        against, gap2 = top1(run(w, cfg, corrupt))
        if against != target:
            break
    else:
        raise AssertionError("no corruption tried changes the top-1")
    print(f"patch_gqa: top-1 gaps clean {gap:.3g}, corrupt {gap2:.3g}")
    return write("patch_gqa", model, clean, corrupt, target, against, cfg, w)


def case_builtin():
    import tokenizers

    model = "www/models/builtin"
    cfg, w = load_model(model)
    tok = tokenizers.Tokenizer.from_file(str(ROOT / model / "tokenizer.json"))
    assert tok.id_to_token(BOS) == "<|im_start|>"
    clean = [BOS] + tok.encode(IOI_CLEAN, add_special_tokens=False).ids
    corrupt = [BOS] + tok.encode(IOI_CORRUPT, add_special_tokens=False).ids
    assert len(clean) == len(corrupt), f"token counts differ: {len(clean)} vs {len(corrupt)}"
    tc, tk = run(w, cfg, clean), run(w, cfg, corrupt)
    t1, gap = top1(tc)
    a1, gap2 = top1(tk)
    if t1 != a1:
        target, against, why = t1, a1, "the two runs' top-1"
    else:
        mary, john = (tok.encode(s, add_special_tokens=False).ids for s in (" Mary", " John"))
        if len(mary) == 1 and len(john) == 1:
            target, against, why = mary[0], john[0], "' Mary' / ' John'"
        else:  # the names' first pieces
            target, against, why = mary[0], john[0], f"first pieces of ' Mary' {mary} / ' John' {john}"
    print(f"patch_builtin: top-1 clean {t1} {tok.id_to_token(t1)!r} (gap {gap:.3g}), corrupt {a1} "
          f"{tok.id_to_token(a1)!r} (gap {gap2:.3g}); target {target} {tok.id_to_token(target)!r}, "
          f"against {against} {tok.id_to_token(against)!r}: {why}")
    print(f"  clean pieces   {[tok.id_to_token(i) for i in clean]}\n  corrupt pieces {[tok.id_to_token(i) for i in corrupt]}")
    return write("patch_builtin", model, clean, corrupt, target, against, cfg, w)


CASES = {"patch_gqa": case_gqa, "patch_builtin": case_builtin}


def main(names):
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    unknown = [n for n in names if n not in CASES]
    assert not unknown, f"no case named {unknown}; the cases: {', '.join(CASES)}"
    for name, fn in CASES.items():
        if not names or name in names:
            fn()
    print("all checks passed")


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Trains attnscope's built-in model: a tiny MiniMind-architecture Transformer (Q/K norm, RoPE, GQA, SwiGLU,
tied embeddings) on English and modern Chinese text, with MiniMind's tokenizer (6400 ids).

The model code is not written here: every forward pass is tools/reference/make_fixtures.py's `forward`
(the PyTorch reference the Rust core is tested against, checked against MiniMind's own model), run on a
dict of trainable weights under MiniMind's Hugging Face names. What attnscope shows is therefore exactly
what was trained.

Data: tools/train/prepare_data.py (run it first) writes tools/train/data/tokens.pt; see SOURCES.md.
Training: random 128-token windows (half of them starting at a document start), 8 English + 8 Chinese
per step, AdamW (the q_norm/k_norm gains at 5x the learning rate, see below), warmup then cosine decay. The schedule's progress is max(step / STEPS, elapsed / BUDGET),
so the run ends within the wall-time budget however busy the machine is; one CPU thread.
Writes www/models/builtin/{config.json, model.safetensors (f16, no lm_head.weight), tokenizer.json} and
the log tools/train/train_log.txt (step, train loss, held-out loss). Held-out loss at the end is measured
with the shipped f16 weights (computed in f32, as attnscope does).

Run from the repository root (about 35 minutes on one core):

    python3 tools/train/prepare_data.py
    python3 tools/train/train_builtin.py            # --budget-min 35 --steps 5000 --batch 8 --seed 0
"""

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "reference"))
import make_fixtures as ref  # noqa: E402  (the reference forward: one sequence, weights by HF name)

DATA = ROOT / "tools" / "train" / "data"
OUT = ROOT / "www" / "models" / "builtin"
LOG = ROOT / "tools" / "train" / "train_log.txt"
TOKENIZER = ROOT / "assets" / "minimind" / "tokenizer.json"
EOS = 2

CONFIG = dict(
    hidden_size=192,
    num_hidden_layers=4,
    num_attention_heads=8,
    num_key_value_heads=4,
    head_dim=32,
    intermediate_size=640,  # ceil(192 * pi / 64) * 64, MiniMind's rule
    vocab_size=6400,
    rms_norm_eps=1e-6,
    rope_theta=1e6,
    max_position_embeddings=32768,
    tie_word_embeddings=True,
    inference_rope_scaling=False,
)
CTX = 128


def init_weights(cfg, seed):
    """Linears and embeddings N(0, 0.02) (o_proj and down_proj scaled by 1/sqrt(2L)); norm weights 1."""
    g = torch.Generator().manual_seed(seed)
    w = ref.make_weights(cfg, seed)  # the names and shapes; values replaced below
    scale_out = 1.0 / math.sqrt(2 * cfg["num_hidden_layers"])
    for name, t in w.items():
        if name.endswith("norm.weight") or name.endswith("layernorm.weight"):
            w[name] = torch.ones_like(t)
        else:
            std = 0.02 * (scale_out if name.endswith(("o_proj.weight", "down_proj.weight")) else 1.0)
            w[name] = torch.randn(t.shape, generator=g) * std
    return w


class Windows:
    """Random (CTX + 1)-token windows of one token stream; with probability 1/2 a window starts a document."""

    def __init__(self, stream, seed):
        self.s = stream.long()
        self.starts = torch.cat([torch.tensor([0]), (self.s == EOS).nonzero().flatten() + 1])
        self.starts = self.starts[self.starts < len(self.s) - CTX - 1]
        self.g = torch.Generator().manual_seed(seed)

    def sample(self, n):
        out = []
        for _ in range(n):
            if torch.rand(1, generator=self.g).item() < 0.5:
                i = self.starts[torch.randint(len(self.starts), (1,), generator=self.g)].item()
            else:
                i = torch.randint(len(self.s) - CTX - 1, (1,), generator=self.g).item()
            out.append(self.s[i:i + CTX + 1])
        return torch.stack(out)


def seq_loss(w, cfg, window):
    trace, _ = ref.forward(w, cfg, window[:-1], None, None)
    return F.cross_entropy(trace["logits"], window[1:])


@torch.no_grad()
def eval_loss(w, cfg, batches):
    return {lang: sum(seq_loss(w, cfg, x).item() for x in b) / len(b) for lang, b in batches.items()}


def fmt(losses):
    return (losses["en"] + losses["zh"]) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--budget-min", type=float, default=35.0)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--qk-gain-lr-mult", type=float, default=5.0)
    ap.add_argument("--eval-every", type=int, default=200)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)

    data = torch.load(DATA / "tokens.pt")
    train = {lang: Windows(data["train"][lang], args.seed + i) for i, lang in enumerate(("en", "zh"))}
    held = {lang: Windows(data["heldout"][lang], 100 + i) for i, lang in enumerate(("en", "zh"))}
    eval_small = {lang: held[lang].sample(24) for lang in held}  # fixed for the whole run

    cfg = dict(CONFIG)
    w = {k: v.requires_grad_(True) for k, v in init_weights(cfg, args.seed).items()}
    n_params = sum(v.numel() for v in w.values())
    # Q/K norm caps each attention logit at about sqrt(d) * g_q * g_k (g: the q_norm / k_norm gains, 1 at
    # init), so those gains decide how sharp a head can get; they learn at qk_gain_lr_mult x the rate to get
    # there within a short run. Other norm weights: no decay; matrices: weight decay 0.1.
    qk = [v for k, v in w.items() if k.endswith(("q_norm.weight", "k_norm.weight"))]
    decay = [v for k, v in w.items() if v.dim() == 2]
    no_decay = [v for k, v in w.items() if v.dim() < 2 and not k.endswith(("q_norm.weight", "k_norm.weight"))]
    groups = [{"params": decay, "weight_decay": 0.1, "mult": 1.0}, {"params": no_decay, "weight_decay": 0.0, "mult": 1.0},
              {"params": qk, "weight_decay": 0.0, "mult": args.qk_gain_lr_mult}]
    opt = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95))

    log = open(LOG, "w")

    def say(line):
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    say(f"# attnscope built-in model; config {json.dumps(cfg)}; ctx {CTX}; params {n_params}; "
        f"batch {args.batch} (half en, half zh); lr {args.lr} (q/k norm gains x{args.qk_gain_lr_mult}) warmup {args.warmup} cosine to 10%; "
        f"steps {args.steps} or {args.budget_min} min; seed {args.seed}; torch {torch.__version__}, 1 thread")
    say("# step  elapsed_s  lr  train_loss(mean of the steps since the last line)  heldout_loss(mean en,zh)  heldout_en  heldout_zh")
    start, budget = time.time(), args.budget_min * 60
    step, run_loss, run_n = 0, 0.0, 0
    while True:
        progress = max(step / args.steps, (time.time() - start) / budget)
        if progress >= 1.0:
            break
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
        for group in opt.param_groups:
            group["lr"] = lr * group["mult"]
        batch = torch.cat([train["en"].sample(args.batch // 2), train["zh"].sample(args.batch - args.batch // 2)])
        loss = sum(seq_loss(w, cfg, x) for x in batch) / len(batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(w.values()), 1.0)
        opt.step()
        step += 1
        run_loss, run_n = run_loss + loss.item(), run_n + 1
        if step % args.eval_every == 0 or step == 1:
            h = eval_loss(w, cfg, eval_small)
            say(f"{step:5d}  {time.time() - start:7.0f}  {lr:.2e}  {run_loss / run_n:.4f}  {fmt(h):.4f}  "
                f"{h['en']:.4f}  {h['zh']:.4f}")
            run_loss, run_n = 0.0, 0
            torch.save({k: v.detach() for k, v in w.items()}, DATA / "checkpoint.pt")
    elapsed = time.time() - start
    why = "step limit" if step >= args.steps else "time budget"
    if run_n:
        h = eval_loss(w, cfg, eval_small)
        say(f"{step:5d}  {elapsed:7.0f}  {lr:.2e}  {run_loss / run_n:.4f}  {fmt(h):.4f}  {h['en']:.4f}  {h['zh']:.4f}")
    say(f"# stopped at step {step} ({why}) after {elapsed / 60:.1f} min, {step * args.batch * CTX} training tokens")

    # Ship f16 weights; everything after this point uses the rounded weights, computed in f32.
    shipped = {k: v.detach().to(torch.float16).contiguous() for k, v in w.items()}
    wf = {k: v.float() for k, v in shipped.items()}
    torch.save({k: v.detach() for k, v in w.items()}, DATA / "checkpoint.pt")
    final_eval = {lang: held[lang].sample(100) for lang in held}
    h32 = eval_loss({k: v.detach() for k, v in w.items()}, cfg, final_eval)
    h16 = eval_loss(wf, cfg, final_eval)
    say(f"# final held-out loss (100 en + 100 zh windows of {CTX}): f32 weights {fmt(h32):.4f} "
        f"(en {h32['en']:.4f}, zh {h32['zh']:.4f}); shipped f16 weights {fmt(h16):.4f} "
        f"(en {h16['en']:.4f}, zh {h16['zh']:.4f}); ppl {math.exp(fmt(h16)):.1f}")
    log.close()

    OUT.mkdir(parents=True, exist_ok=True)
    config = dict(cfg, model_type="minimind", architectures=["MiniMindForCausalLM"], hidden_act="silu",
                  use_moe=False, flash_attn=True, torch_dtype="float16", bos_token_id=1, eos_token_id=2)
    (OUT / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file(shipped, str(OUT / "model.safetensors"), metadata={"format": "pt"})
    shutil.copyfile(TOKENIZER, OUT / "tokenizer.json")
    summary = dict(params=n_params, steps=step, stopped_by=why, minutes=round(elapsed / 60, 1),
                   train_tokens=step * args.batch * CTX, heldout_f32=h32, heldout_f16=h16,
                   heldout_mean_f16=fmt(h16), args=vars(args))
    (DATA / "train_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()

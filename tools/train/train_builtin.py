#!/usr/bin/env python3
"""Trains attnscope's built-in model: a tiny MiniMind-architecture Transformer (Q/K norm, RoPE, GQA, SwiGLU,
tied embeddings) on English and modern Chinese text, with MiniMind's tokenizer (6400 ids).

The model code is not written here: every forward pass is tools/reference/make_fixtures.py's `forward`
(the PyTorch reference the Rust core is tested against, checked against MiniMind's own model), run on a
dict of trainable weights under MiniMind's Hugging Face names. What attnscope shows is therefore exactly
what was trained.

Data: tools/train/prepare_data.py (run it first) writes tools/train/data/tokens.pt; see SOURCES.md.
Training: 129-token windows, the first token always BOS (see Windows), 16 English + 16 Chinese per step,
10 % of them a copy task, AdamW (the q_norm/k_norm gains at 5x the learning rate, see below), warmup then cosine decay. The schedule's progress is max(step / STEPS, elapsed / BUDGET),
so the run ends within the wall-time budget however busy the machine is; two CPU threads. The loss is
computed by `batch_logits`, a batched copy of the reference forward that the run checks against it first.
Writes www/models/builtin/{config.json, model.safetensors (f16, no lm_head.weight), tokenizer.json} and
the log tools/train/train_log.txt (step, train loss, held-out loss). Held-out loss at the end is measured
with the shipped f16 weights (computed in f32, as attnscope does).

Run from the repository root (about 95 minutes on two cores):

    python3 tools/train/prepare_data.py
    python3 tools/train/train_builtin.py            # --budget-min 95 --batch 32 --threads 2 --seed 0
    python3 tools/train/train_builtin.py --resume   # continue an interrupted run from its last checkpoint
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
BOS, EOS = 1, 2  # <|im_start|>, <|im_end|>

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
    """Training windows of one token stream: CTX + 1 tokens, the first always BOS (<|im_start|>, id 1), as
    MiniMind's pretraining samples begin; the text after it starts a document with probability 1/2, else
    anywhere. With probability `repeat`, the window is BOS + a 64-token span + the same span again (a copy
    task: the second half is predictable only by looking back, which is what induction heads do)."""

    def __init__(self, stream, seed, repeat=0.0):
        self.s = stream.long()
        self.starts = torch.cat([torch.tensor([0]), (self.s == EOS).nonzero().flatten() + 1])
        self.starts = self.starts[self.starts < len(self.s) - CTX - 1]
        self.g = torch.Generator().manual_seed(seed)
        self.repeat = repeat

    def sample(self, n):
        out = []
        bos = torch.tensor([BOS])
        for _ in range(n):
            if torch.rand(1, generator=self.g).item() < 0.5:
                i = self.starts[torch.randint(len(self.starts), (1,), generator=self.g)].item()
            else:
                i = torch.randint(len(self.s) - CTX - 1, (1,), generator=self.g).item()
            if torch.rand(1, generator=self.g).item() < self.repeat:
                span = self.s[i:i + CTX // 2]
                out.append(torch.cat([bos, span, span]))
            else:
                out.append(torch.cat([bos, self.s[i:i + CTX]]))
        return torch.stack(out)


def batch_logits(w, cfg, ids):
    """The reference forward for a batch [B, T] of windows starting at position 0, written with batched
    matmuls and PyTorch's fused causal attention for speed; main() checks it equals ref.forward first."""
    eps = cfg["rms_norm_eps"]
    nH, nKV, d = cfg["num_attention_heads"], cfg["num_key_value_heads"], ref.head_dim(cfg)
    B, T = ids.shape
    x = w["model.embed_tokens.weight"][ids]  # (B, T, H)
    cos, sin = ref.rope_tables(cfg, 0, T)  # (T, d)
    cos, sin = cos[None, None], sin[None, None]
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = ref.rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = (h @ w[p + "self_attn.q_proj.weight"].T).view(B, T, nH, d).transpose(1, 2)  # (B, nH, T, d)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).view(B, T, nKV, d).transpose(1, 2)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).view(B, T, nKV, d).transpose(1, 2)
        q = ref.rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
        k = ref.rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q = q * cos + ref.rotate_half(q) * sin
        k = k * cos + ref.rotate_half(k) * sin
        rep = nH // nKV  # repeat_kv: KV head j serves query heads j*rep .. j*rep + rep - 1
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # scale 1/sqrt(d)
        x = x + ctx.transpose(1, 2).reshape(B, T, nH * d) @ w[p + "self_attn.o_proj.weight"].T
        g = ref.rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        x = x + ref.feed_forward(g, w, p + "mlp.")[3]
    x = ref.rms_norm(x, w["model.norm.weight"], eps)
    return x @ ref.lm_head(w).T  # (B, T, V)


def batch_loss(w, cfg, windows):
    logits = batch_logits(w, cfg, windows[:, :-1])
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))


def seq_loss(w, cfg, window):
    trace, _ = ref.forward(w, cfg, window[:-1], None, None)
    return F.cross_entropy(trace["logits"], window[1:])


@torch.no_grad()
def eval_loss(w, cfg, batches):
    return {lang: batch_loss(w, cfg, b).item() for lang, b in batches.items()}


def fmt(losses):
    return (losses["en"] + losses["zh"]) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=12000)
    ap.add_argument("--budget-min", type=float, default=95.0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=float, default=0.1, help="share of training windows that repeat a span")
    ap.add_argument("--resume", action="store_true", help="continue from tools/train/data/checkpoint.pt")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--qk-gain-lr-mult", type=float, default=5.0)
    ap.add_argument("--eval-every", type=int, default=200)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    data = torch.load(DATA / "tokens.pt")
    train = {lang: Windows(data["train"][lang], args.seed + i, args.repeat) for i, lang in enumerate(("en", "zh"))}
    held = {lang: Windows(data["heldout"][lang], 100 + i) for i, lang in enumerate(("en", "zh"))}
    eval_small = {lang: held[lang].sample(24) for lang in held}  # fixed for the whole run

    cfg = dict(CONFIG)
    w = init_weights(cfg, args.seed)
    # The fast batched forward must be the reference forward: check it on two held-out windows first.
    probe = eval_small["zh"][:2, :-1]
    fast = batch_logits(w, cfg, probe)
    slow = torch.stack([ref.forward(w, cfg, x, None, None)[0]["logits"] for x in probe])
    assert (fast - slow).abs().max().item() < 1e-4, "batch_logits differs from the reference forward"
    w = {k: v.requires_grad_(True) for k, v in w.items()}
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

    step, done_s = 0, 0.0
    if args.resume:
        ck = torch.load(DATA / "checkpoint.pt")
        with torch.no_grad():
            for k, v in w.items():
                v.copy_(ck["weights"][k])
        opt.load_state_dict(ck["opt"])
        step, done_s = ck["step"], ck["elapsed"]
        for lang in train:
            train[lang].g.set_state(ck["rng"][lang])
    log = open(LOG, "a" if args.resume else "w")

    def say(line):
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    say(f"# attnscope built-in model; config {json.dumps(cfg)}; ctx {CTX}; params {n_params}; "
        f"batch {args.batch} (half en, half zh); lr {args.lr} (q/k norm gains x{args.qk_gain_lr_mult}) warmup {args.warmup} cosine to 10%; "
        f"steps {args.steps} or {args.budget_min} min; seed {args.seed}; torch {torch.__version__}, {args.threads} threads; "
        f"windows BOS-first, {args.repeat:.0%} of them a 64-token span twice" + (f"; resumed at step {step}" if args.resume else ""))
    if not args.resume:
        say("# step  elapsed_s  lr  train_loss(mean of the steps since the last line)  heldout_loss(mean en,zh)  heldout_en  heldout_zh")
    start, budget = time.time() - done_s, args.budget_min * 60
    run_loss, run_n = 0.0, 0
    while True:
        progress = max(step / args.steps, (time.time() - start) / budget)
        if progress >= 1.0:
            break
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
        for group in opt.param_groups:
            group["lr"] = lr * group["mult"]
        batch = torch.cat([train["en"].sample(args.batch // 2), train["zh"].sample(args.batch - args.batch // 2)])
        loss = batch_loss(w, cfg, batch)
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
            torch.save(dict(weights={k: v.detach() for k, v in w.items()}, opt=opt.state_dict(), step=step,
                            elapsed=time.time() - start, rng={lang: t.g.get_state() for lang, t in train.items()}),
                       DATA / "checkpoint.pt")
    elapsed = time.time() - start
    why = "step limit" if step >= args.steps else "time budget"
    if run_n:
        h = eval_loss(w, cfg, eval_small)
        say(f"{step:5d}  {elapsed:7.0f}  {lr:.2e}  {run_loss / run_n:.4f}  {fmt(h):.4f}  {h['en']:.4f}  {h['zh']:.4f}")
    say(f"# stopped at step {step} ({why}) after {elapsed / 60:.1f} min, {step * args.batch * CTX} training tokens")

    # Ship f16 weights; everything after this point uses the rounded weights, computed in f32.
    shipped = {k: v.detach().to(torch.float16).contiguous() for k, v in w.items()}
    wf = {k: v.float() for k, v in shipped.items()}
    torch.save({k: v.detach() for k, v in w.items()}, DATA / "final_weights.pt")
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

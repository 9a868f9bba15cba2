#!/usr/bin/env python3
"""make_tokenizer_golden.py — the fixture and golden ids for statescope's BPE tokenizer.

The real GPT-NeoX tokenizer.json cannot be fetched here (no network, no registry package ships it),
so this trains a small byte-level BPE with the PyPI `tokenizers` library in the GPT-NeoX
configuration: NFC normalizer, ByteLevel pre-tokenizer (GPT-2 regex, no prefix space), ByteLevel
decoder and post-processor, special tokens <|endoftext|> (id 0) and <|padding|> (id 1), and
non-special added whitespace-run tokens like NeoX's. Then it writes a test text of > 1 MB (the first
1,000,000 bytes of the Austen corpus + a generated stress part with Unicode in many scripts,
combining marks that NFC composes, digits, whitespace runs, tabs, CRLF and special tokens) and the
ids `tokenizers` gives for it (uint16 little-endian).

Run: .venv/bin/python tests/golden/make_tokenizer_golden.py   (seed 0; about 20 s)
"""
import json
import os
import random
import struct

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers, AddedToken

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
out = os.path.join(here, "tokenizer")
os.makedirs(out, exist_ok=True)
corpus = open(os.path.join(root, "data", "corpus", "austen-novels.txt"), encoding="utf-8").read()

rng = random.Random(0)
pieces = ["naïve café", "Ångström", "e\u0301tude (decomposed é)", "A\u030a (decomposed Å)", "Ελληνικά κείμενα",
          "русский текст", "日本語のテキスト", "中文文本", "한국어", "עברית", "العربية", "हिन्दी", "emoji 🙂👍🏽🚀",
          "mathematical 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "½ ¾ ² ³ Ⅻ ⑦", "tabs\tand\t\ttabs", "CRLF\r\nline", "   leading", "trailing   ",
          "multi    space     runs", "\n\n\n", "\u00a0non-breaking\u2003em-space\u3000ideographic", "don't it's we're I've I'm you'll he'd",
          "DON'T IT'S", "'quoted' \"double\"", "3.14159 2718281828 1,000,000 0x1F 1e-9", "<|endoftext|>", "<|padding|>",
          "a<|endoftext|>b", "  <|endoftext|>  ", "x = y + z; // code {braces} [brackets]", "$100 & 50% #hash @at",
          "\u200bzero\u200bwidth", "ﬁ ligature", "Ǆ titlecase ǅ", "\U0001F600\U0001F601", "￥ full-width ＡＢＣ １２３"]
stress = []
for i in range(4000):
    k = rng.randint(1, 4)
    stress.append(" ".join(rng.choice(pieces) for _ in range(k)) + rng.choice([" ", "\n", "  ", "\t", "", ". ", "\n\n"]))
    if i % 50 == 0:
        stress.append(str(rng.randint(0, 10**12)))
text = corpus.encode("utf-8")[:1_000_000].decode("utf-8", errors="ignore") + "\n" + "".join(stress)

tok = Tokenizer(models.BPE())
tok.normalizer = normalizers.NFC()
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
tok.decoder = decoders.ByteLevel()
tok.post_processor = processors.ByteLevel(trim_offsets=True)
trainer = trainers.BpeTrainer(vocab_size=4000, special_tokens=["<|endoftext|>", "<|padding|>"],
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
train_text = corpus + "".join(pieces) * 20
tok.train_from_iterator([train_text[i:i + 10000] for i in range(0, len(train_text), 10000)], trainer)
# GPT-NeoX also has non-special added tokens for runs of spaces (normalized, not special).
tok.add_tokens([AddedToken(" " * n, normalized=True, special=False) for n in (24, 16, 8)])
tok.save(os.path.join(out, "tokenizer.json"))

ids = tok.encode(text, add_special_tokens=False).ids
assert max(ids) < 65536
with open(os.path.join(out, "text.txt"), "w", encoding="utf-8", newline="") as f:
    f.write(text)
with open(os.path.join(out, "ids.u16"), "wb") as f:
    f.write(struct.pack("<%dH" % len(ids), *ids))
assert tok.decode(ids, skip_special_tokens=False) == normalizers.NFC().normalize_str(text)
json.dump({"bytes": len(text.encode("utf-8")), "tokens": len(ids), "vocab": tok.get_vocab_size(),
           "tokenizers": __import__("tokenizers").__version__, "seed": 0,
           "command": ".venv/bin/python tests/golden/make_tokenizer_golden.py"},
          open(os.path.join(out, "README.json"), "w"), indent=1)
print(f"{len(text.encode('utf-8'))} bytes -> {len(ids)} tokens, vocab {tok.get_vocab_size()}")

"""tokenizer_hf.py — the reference: `tokenizers` encoding speed on one thread (best of N)."""
import os, sys, time
os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
from tokenizers import Tokenizer
text = open(sys.argv[2], encoding="utf-8", newline="").read()
nbytes = len(text.encode("utf-8"))
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 3
best = 1e30
for _ in range(repeats):
    tok = Tokenizer.from_file(sys.argv[1])
    t0 = time.perf_counter()
    n = len(tok.encode(text, add_special_tokens=False).ids)
    best = min(best, time.perf_counter() - t0)
print(f"tokenizers  {nbytes} bytes -> {n} tokens  {nbytes / best / 1e6:.2f} MB/s")

#!/usr/bin/env python3
"""make_seeds.py ROOT SEEDS — the seed inputs bench/fuzz.sh derives from real files in the tree.

- fuzz_torch_pickle: every pytorch_model.bin in tests/golden/ (written by torch.save of a real
  state dict, or by transformers save_pretrained) in both of the target's forms: the archive itself
  (first byte 0) and its data.pkl with the storage table (first byte 1; see fuzz_torch_pickle.cpp).
- fuzz_tokenizer: the golden BPE tokenizer.json and a small one cut from it (the 256 byte tokens,
  the first 64 merges, the added tokens), each followed by a 0 byte and a line of the corpus.
- fuzz_token_files: corpus snippets as .u16 / .u32 token files (ids = bytes) and .jsonl / .txt, and the
  .jsonl compressed with gzip and xz (the standard library's writers) and zstd (its CLI, when present).
- fuzz_experiment_file: tests/golden/hostile/sparse.h5 (the committed seeds are CLI-written files).
Only the standard library: it runs with any Python 3.
"""
import gzip
import json
import lzma
import pathlib
import shutil
import struct
import subprocess
import sys
import zipfile

root, seeds = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])


def put(target, name, data):
    d = seeds / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


for n, path in enumerate(sorted(root.glob("tests/golden/**/*.bin"))):
    raw = path.read_bytes()
    put("fuzz_torch_pickle", f"{n}.zip", b"\x00" + raw)
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        pkl = next(x for x in names if x.endswith("/data.pkl") or x == "data.pkl")
        prefix = pkl[: -len("data.pkl")]
        table = b""
        records = [x for x in names if x.startswith(prefix + "data/")]
        records = [r for r in records if z.getinfo(r).file_size <= 1 << 20][:255]
        table += bytes([len(records)])
        for r in records:
            key = r[len(prefix + "data/"):].encode()
            table += bytes([len(key)]) + key + struct.pack("<I", z.getinfo(r).file_size)
        put("fuzz_torch_pickle", f"{n}.table", b"\x01" + table + z.read(pkl))

text = (root / "data/corpus/austen-novels.txt").read_bytes()
line = text[20000:20400]
tok_path = root / "tests/golden/tokenizer/tokenizer.json"
tok = json.loads(tok_path.read_text())
put("fuzz_tokenizer", "golden.json", tok_path.read_bytes() + b"\x00" + line)
small = dict(tok)
vocab = {t: i for t, i in tok["model"]["vocab"].items() if i < 322}
pair = lambda m: m.split(" ") if isinstance(m, str) else m
merges = [m for m in tok["model"]["merges"] if all(p in vocab for p in pair(m)) and "".join(pair(m)) in vocab][:64]
small["model"] = dict(tok["model"], vocab=vocab, merges=merges)
small["added_tokens"] = [a for a in tok["added_tokens"] if a["id"] < 2 or a["id"] in vocab.values()]
put("fuzz_tokenizer", "small.json", json.dumps(small).encode() + b"\x00" + line)

for n, at in enumerate([1000, 50000, 400000]):
    s = text[at:at + 600]
    put("fuzz_token_files", f"{n}.u16", b"\x00" + b"".join(struct.pack("<H", c) for c in s))
    put("fuzz_token_files", f"{n}.u32", b"\x01" + b"".join(struct.pack("<I", c) for c in s))
    docs = s.decode("utf-8", "replace").split("\n\n")
    jsonl = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode()
    put("fuzz_token_files", f"{n}.jsonl", b"\x02" + jsonl)
    put("fuzz_token_files", f"{n}.txt", b"\x03" + s)
    put("fuzz_token_files", f"{n}.jsonl.gz", b"\x04" + gzip.compress(jsonl, mtime=0))
    put("fuzz_token_files", f"{n}.jsonl.xz", b"\x05" + lzma.compress(jsonl))
    if shutil.which("zstd"):
        put("fuzz_token_files", f"{n}.jsonl.zst", b"\x06" + subprocess.run(["zstd", "-q", "-c"], input=jsonl,
                                                                            capture_output=True, check=True).stdout)

put("fuzz_experiment_file", "sparse.h5", (root / "tests/golden/hostile/sparse.h5").read_bytes())

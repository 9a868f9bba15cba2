"""make_hf_cache.py — a Hugging Face cache written by huggingface_hub itself, for tests/test_hub_cache.cpp.

The Hub is not reachable from here, so a small local server stands in for it: it answers the two
requests hf_hub_download makes (HEAD for the file's commit, ETag and size; GET for its bytes) from
committed golden model folders. huggingface_hub then lays out its cache as it does on any machine:
models--<owner>--<name>/{refs,snapshots/<commit>,blobs} with relative symlinks.

Repositories written (cache under tests/golden/hf-cache/hub):
  statescope-test/tiny-mamba2   main -> commit B (hf-groups2), tag v1 -> commit A (hf-tied)
  statescope-test/tiny-mamba1   main -> hf-mamba1
  statescope-test/not-a-mamba   main -> a config.json of another architecture (listed as skipped)
  statescope-test/partial       main -> config.json only (an interrupted download: no weights)
  state-spaces/tiny-mamba2-test main -> hf-groups2, no tokenizer.json (as the official checkpoints)
  EleutherAI/gpt-neox-20b       main -> tokenizer.json only (tests/golden/tokenizer's, standing in)
  datasets: statescope-test/tiny-corpus  main -> tests/golden/parquet/shards (two Parquet shards)

Regenerate (dev mode: pip install huggingface_hub):
  .venv/bin/python tests/golden/make_hf_cache.py
"""
import hashlib
import http.server
import json
import os
import shutil
import sys
import threading
from pathlib import Path

here = Path(__file__).resolve().parent
out = here / "hf-cache" / "hub"

# repo id -> list of (revision names, commit hash, {filename: bytes}); the first name of each is a branch or tag
def files_of(folder, names=("config.json", "model.safetensors")):
    return {n: (here / folder / n).read_bytes() for n in names}

other = json.dumps({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 256}).encode()
REPOS = {
    "statescope-test/tiny-mamba2": [
        (["v1"], "a" * 8 + "1" * 32, files_of("hf-tied")),
        (["main"], "b" * 8 + "2" * 32, files_of("hf-groups2")),
    ],
    "statescope-test/tiny-mamba1": [(["main"], "c" * 8 + "3" * 32, files_of("hf-mamba1"))],
    "statescope-test/not-a-mamba": [(["main"], "d" * 8 + "4" * 32, {"config.json": other})],
    "statescope-test/partial": [(["main"], "e" * 8 + "5" * 32, files_of("hf-groups2", ("config.json",)))],
    # Like the official state-spaces checkpoints: config and weights, no tokenizer; the tokenizer comes
    # from EleutherAI/gpt-neox-20b (here the 4003-id tokenizer of tests/golden/tokenizer stands in for it).
    "state-spaces/tiny-mamba2-test": [(["main"], "0" * 8 + "7" * 32, files_of("hf-groups2"))],
    "EleutherAI/gpt-neox-20b": [(["main"], "1" * 8 + "8" * 32, files_of("tokenizer", ("tokenizer.json",)))],
}
# Datasets: a corpus in Parquet shards, as the Hub's datasets are laid out.
DATASETS = {
    "statescope-test/tiny-corpus": [(["main"], "2" * 8 + "9" * 32, files_of(
        "parquet/shards", ("data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet")))],
}


def lookup(repo, revision, table):
    for names, commit, files in table.get(repo, []):
        if revision in names or revision == commit:
            return commit, files
    return None, None


class Hub(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, body):
        # [datasets/]<owner>/<name>/resolve/<revision>/<filename>
        parts = self.path.split("?")[0].strip("/").split("/")
        table = REPOS
        if parts and parts[0] == "datasets":
            parts, table = parts[1:], DATASETS
        if len(parts) < 5 or parts[2] != "resolve":
            self.send_error(404)
            return
        repo, revision, name = parts[0] + "/" + parts[1], parts[3], "/".join(parts[4:])
        commit, files = lookup(repo, revision, table)
        if commit is None or name not in files:
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound" if commit else "RevisionNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        data = files[name]
        self.send_response(200)
        self.send_header("X-Repo-Commit", commit)
        self.send_header("ETag", '"' + hashlib.sha256(data).hexdigest() + '"')
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def do_HEAD(self):
        self.answer(False)

    def do_GET(self):
        self.answer(True)


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ["HF_ENDPOINT"] = f"http://127.0.0.1:{server.server_address[1]}"
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    os.environ["HF_HUB_DISABLE_XET"] = "1"
    import huggingface_hub  # after HF_ENDPOINT: the library reads it at import

    if out.exists():
        shutil.rmtree(out)
    for kind, table in (("model", REPOS), ("dataset", DATASETS)):
        for repo, commits in table.items():
            for names, commit, files in commits:
                for name in files:
                    p = huggingface_hub.hf_hub_download(repo, name, revision=names[0], cache_dir=str(out),
                                                        repo_type=kind)
                    print(os.path.relpath(p, out), file=sys.stderr)
    # What huggingface_hub's own reader makes of it.
    info = huggingface_hub.scan_cache_dir(out)
    for r in sorted(info.repos, key=lambda r: r.repo_id):
        for rev in sorted(r.revisions, key=lambda v: v.commit_hash):
            print(r.repo_id, rev.commit_hash[:12], sorted(rev.refs), sorted(f.file_name for f in rev.files))
    (out.parent / "README.md").write_text(
        "Written by tests/golden/make_hf_cache.py with huggingface_hub " + huggingface_hub.__version__ +
        " (hf_hub_download against a local stand-in for the Hub). Regenerate with\n"
        "`.venv/bin/python tests/golden/make_hf_cache.py`.\n")
    server.shutdown()


if __name__ == "__main__":
    main()

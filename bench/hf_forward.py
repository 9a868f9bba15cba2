#!/usr/bin/env python3
"""hf_forward.py — the reference side of bench/run_forward.sh: transformers' Mamba2ForCausalLM, or
MambaForCausalLM for a shape with "arch": "mamba1" (pure-torch paths), on the same shapes, torch build
and thread count as bench_forward.
Usage: hf_forward.py SHAPES.json NAME THREADS ITERS   -> one JSON line."""
import json
import sys
import time

import torch
from transformers import Mamba2Config, Mamba2ForCausalLM, MambaConfig, MambaForCausalLM


def hf_model(s):
    """transformers' Mamba2ForCausalLM (MambaForCausalLM for "arch": "mamba1") at bench/shapes.json's
    shape `s`, fp32, tied embeddings, its own init from torch's global generator."""
    if s.get("arch", "mamba2") == "mamba1":
        cfg = MambaConfig(hidden_size=s["d_model"], num_hidden_layers=s["n_layer"], state_size=s["d_state"],
                          vocab_size=s["vocab_size"], tie_word_embeddings=True, use_mambapy=False)
        return MambaForCausalLM(cfg).float()
    cfg = Mamba2Config(hidden_size=s["d_model"], num_hidden_layers=s["n_layer"], state_size=s["d_state"],
                       head_dim=s["headdim"], num_heads=2 * s["d_model"] // s["headdim"], n_groups=1,
                       vocab_size=s["vocab_size"], chunk_size=s["chunk_size"], tie_word_embeddings=True)
    return Mamba2ForCausalLM(cfg).float()


def main():
    shapes, name, threads, iters = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    s = json.load(open(shapes))[name]
    torch.set_num_threads(threads)
    model = hf_model(s)
    torch.manual_seed(0)
    tokens = torch.randint(0, s["vocab_size"], (s["batch"], s["length"]))
    ntok = s["batch"] * s["length"]

    def time_it(backward):
        best = float("inf")
        for i in range(iters + 1):
            t0 = time.perf_counter()
            if backward:
                model.train()
                out = model(tokens, labels=tokens)
                out.loss.backward()
                model.zero_grad()
            else:
                model.eval()
                with torch.no_grad():
                    model(tokens)
            dt = time.perf_counter() - t0
            if i > 0:
                best = min(best, dt)
        return ntok / best

    fwd, fwdbwd = time_it(False), time_it(True)
    print(json.dumps({"impl": "transformers", "arch": s.get("arch", "mamba2"), "shape": name, "threads": threads,
                      "fwd_tok_s": fwd, "fwdbwd_tok_s": fwdbwd}))


if __name__ == "__main__":
    main()

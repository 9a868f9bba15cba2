#!/usr/bin/env python3
"""llamacpp_make_models.py — the model and token step of bench/run_llamacpp.sh.

Usage: llamacpp_make_models.py SHAPES.json OUT_DIR SHAPE...

Per shape, into OUT_DIR/SHAPE/: hf/ (a transformers save_pretrained of a seed-0 Mamba2ForCausalLM, or
MambaForCausalLM for "arch": "mamba1", at the shape's size, fp32, tied embeddings) and tokens.i32 (the
shape's batch x length seeded random ids in [0, vocab), int32 little-endian). The weights are moved off
transformers' init (A_log, dt_bias, D, the conv bias and every RMSNorm weight drawn at random) so that
the logit comparison exercises them. A shape whose OUT_DIR/SHAPE/shape.json already matches is left
alone; the GGUF conversion is run_llamacpp.sh's."""
import json
import math
import pathlib
import shutil
import sys

import numpy as np
import torch
from transformers.utils import logging as hf_logging

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from hf_forward import hf_model  # noqa: E402


def make_model(s):
    torch.manual_seed(0)
    model = hf_model(s)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("A_log"):  # A = -exp(A_log) in [-16, -1]
                p.copy_(torch.empty(p.shape).uniform_(0.0, math.log(16.0), generator=g))
            elif name.endswith("dt_bias") or name.endswith("dt_proj.bias"):  # softplus(bias) in ~[1e-3, 1e-1]
                dt = torch.exp(torch.empty(p.shape).uniform_(math.log(1e-3), math.log(1e-1), generator=g))
                p.copy_(dt + torch.log(-torch.expm1(-dt)))
            elif name.endswith(".D"):
                p.copy_(1.0 + 0.5 * torch.randn(p.shape, generator=g))
            elif name.endswith("conv1d.bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
    return model


def main():
    shapes_path, out_dir, names = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3:]
    hf_logging.disable_progress_bar()
    shapes = json.load(open(shapes_path))
    for name in names:
        s = shapes[name]
        d = out_dir / name
        stamp = d / "shape.json"
        if stamp.exists() and json.loads(stamp.read_text()) == s and (d / "hf" / "config.json").exists():
            continue
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        make_model(s).save_pretrained(d / "hf")
        rng = np.random.default_rng(0)
        rng.integers(0, s["vocab_size"], size=(s["batch"], s["length"]), dtype=np.int32).astype("<i4").tofile(
            d / "tokens.i32")
        stamp.write_text(json.dumps(s))  # last: a half-made folder is remade next time
        print(f"made {d}", file=sys.stderr)


if __name__ == "__main__":
    main()

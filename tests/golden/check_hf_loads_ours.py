#!/usr/bin/env python3
"""check_hf_loads_ours.py — the other direction of the golden test (run by hand, output committed).

Loads statescope's own saved model directory (data/models/embedded: written by save_model_dir, with
time_step_limit (0, 0.02)) with transformers' Mamba2ForCausalLM.from_pretrained, and stores its logits
and loss on a fixed byte sequence in tests/golden/embedded-hf.h5. tests/test_golden.cpp checks that
statescope's logits match, proving the saved directory is one transformers accepts and reads the same.

    STATESCOPE_DEV=1 bash tools/setup.sh
    HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/check_hf_loads_ours.py
"""
import os

import h5py
import numpy as np
import torch
import transformers
from transformers import Mamba2ForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    model = Mamba2ForCausalLM.from_pretrained(os.path.join(ROOT, "data", "models", "embedded")).float().eval()
    text = open(os.path.join(ROOT, "data", "corpus", "austen-novels.txt"), "rb").read()[5000:5000 + 2 * 300]
    ids = torch.tensor(list(text), dtype=torch.long).view(2, 300)
    with torch.no_grad():
        out = model(ids, labels=ids)
    with h5py.File(os.path.join(HERE, "embedded-hf.h5"), "w") as f:
        f.attrs["creator"] = "tests/golden/check_hf_loads_ours.py"
        f.attrs["command"] = "HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/check_hf_loads_ours.py"
        f.attrs["versions"] = f"torch {torch.__version__}, transformers {transformers.__version__}"
        f["input_ids"] = ids.numpy().astype(np.int64)
        f["logits"] = out.logits.float().numpy()
        f["loss"] = np.array([out.loss.item()], dtype=np.float64)
    print(f"transformers loaded data/models/embedded: loss {out.loss.item():.4f} nats/byte on 600 bytes")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""check_layouts_130m.py — a randomly initialised Mamba-2 in the 130m shape (d_model 768, 24 layers,
d_state 128, headdim 64, vocab 50280 padded to 50288, tied), written in both checkpoint layouts:
  hf/   Hugging Face: config.json (model_type mamba2) + sharded model-0000k-of-0000n.safetensors with
        model.safetensors.index.json (transformers save_pretrained, 200 MB shards)
  ssm/  mamba_ssm: config.json (d_model, n_layer, ssm_cfg) + pytorch_model.bin (lm_head aliasing the
        embedding, vocab_size 50280 unpadded as mamba_ssm writes it)
then runs `statescope-cli forward` on both with the same tokens and compares the logits (they must be
identical: same weights, same code path), and against transformers' own forward (pure-torch path).

Run: STATESCOPE_DEV=1 bash tools/setup.sh; .venv/bin/python tools/check_layouts_130m.py [workdir]
(about 2 minutes and 1.2 GB of disk on the 2-core machine; seed 0)
"""
import json
import os
import subprocess
import sys
import time

import h5py
import numpy as np
import torch
from transformers import Mamba2Config, Mamba2ForCausalLM

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
work = sys.argv[1] if len(sys.argv) > 1 else "/tmp/statescope_layouts_130m"
cli = os.path.join(root, "build", "bin", "statescope-cli")
os.makedirs(work, exist_ok=True)
torch.manual_seed(0)

cfg = Mamba2Config(hidden_size=768, num_hidden_layers=24, vocab_size=50288, state_size=128, head_dim=64,
                   num_heads=24, n_groups=1, expand=2, conv_kernel=4, chunk_size=256, use_conv_bias=True,
                   use_bias=False, layer_norm_epsilon=1e-5, residual_in_fp32=True, tie_word_embeddings=True,
                   time_step_limit=(0.0, float("inf")), pad_token_id=0, bos_token_id=0, eos_token_id=0)
model = Mamba2ForCausalLM(cfg).float().eval()
with torch.no_grad():  # move everything off its init so a mixed-up tensor cannot hide
    for name, p in model.named_parameters():
        if name.endswith("A_log"):
            p.copy_(torch.log(torch.rand_like(p) * 15 + 1))
        elif name.endswith(".D") or "norm" in name:
            p.copy_(1.0 + 0.3 * torch.randn_like(p))
        elif not name.endswith("dt_bias"):
            p.add_(torch.randn_like(p) * 0.01)
n_params = sum(p.numel() for p in model.parameters())

hf = os.path.join(work, "hf")
model.save_pretrained(hf, max_shard_size="200MB", safe_serialization=True)
ssm = os.path.join(work, "ssm")
os.makedirs(ssm, exist_ok=True)
json.dump({"d_model": 768, "d_intermediate": 0, "n_layer": 24, "vocab_size": 50280,
           "ssm_cfg": {"layer": "Mamba2", "d_state": 128, "d_conv": 4, "expand": 2, "headdim": 64, "ngroups": 1,
                       "chunk_size": 256},
           "attn_layer_idx": [], "attn_cfg": {}, "rms_norm": True, "residual_in_fp32": True, "fused_add_norm": True,
           "pad_vocab_size_multiple": 16, "tie_embeddings": True}, open(os.path.join(ssm, "config.json"), "w"), indent=1)
sd = {k.replace("backbone.embeddings.", "backbone.embedding."): v for k, v in model.state_dict().items()}
sd["lm_head.weight"] = sd["backbone.embedding.weight"]
torch.save(sd, os.path.join(ssm, "pytorch_model.bin"))

ids = torch.randint(0, 50280, (2, 96), generator=torch.Generator().manual_seed(1))
inp = os.path.join(work, "input.h5")
with h5py.File(inp, "w") as f:
    f["input_ids"] = ids.numpy().astype(np.int64)
logits = {}
for name, d in (("hf", hf), ("ssm", ssm)):
    out = os.path.join(work, name + "_out.h5")
    t0 = time.time()
    subprocess.run([cli, "forward", "--model", d, "--input", inp, "--output", out], check=True)
    with h5py.File(out, "r") as f:
        logits[name] = f["logits"][...]
    print(f"{name}: forward in {time.time() - t0:.1f} s, logits {logits[name].shape}")
with torch.no_grad():
    ref = model(ids).logits.float().numpy()
shards = sorted(x for x in os.listdir(hf) if x.endswith(".safetensors"))
print(f"130m shape: {n_params / 1e6:.1f}M parameters; hf layout: {len(shards)} safetensors shards + index")
print(f"max |logits(hf) - logits(ssm)| = {np.abs(logits['hf'] - logits['ssm']).max():.3g}")
print(f"max |logits(statescope) - logits(transformers)| = {np.abs(logits['hf'] - ref).max():.3g} "
      f"(max |logit| {np.abs(ref).max():.3g})")
sys.exit(0 if np.array_equal(logits["hf"], logits["ssm"]) else 1)

#!/usr/bin/env python3
"""make_golden.py — third-party reference outputs for statescope's Mamba-2 (run by hand).

What it is: builds tiny random Mamba-2 models with PyPI `transformers` (Mamba2ForCausalLM, pure-torch
path), moves every parameter away from its init value, and stores inputs, logits, final states,
the loss and continuations (a multi-token chunk and single-token steps from the cached state), so
tests/test_golden.cpp can check the C++ model against them. The same weights in other layouts and
dtypes (mamba_ssm's torch.save of a state dict, transformers 4 .bin files) come from
make_wild_checkpoints.py.

Regenerate (outputs are committed):
    STATESCOPE_DEV=1 bash tools/setup.sh
    HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/make_golden.py
"""
import json
import os
import sys

import h5py
import numpy as np
import torch
import transformers
from transformers import Mamba2Config, Mamba2ForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20261129


def build(name, n_groups, tied, vocab):
    cfg = Mamba2Config(
        hidden_size=32, num_hidden_layers=2, vocab_size=vocab, state_size=8, head_dim=8, num_heads=8,
        n_groups=n_groups, expand=2, conv_kernel=4, chunk_size=16, use_conv_bias=True, use_bias=False,
        layer_norm_epsilon=1e-5, residual_in_fp32=True, tie_word_embeddings=tied,
        time_step_limit=(0.0, float("inf")), pad_token_id=0, bos_token_id=0, eos_token_id=0)
    return perturb(Mamba2ForCausalLM(cfg).float().eval(), dt_bias="dt_bias")


def perturb(model, dt_bias):
    """Moves every parameter away from its init value (in named_parameters order), so no term hides:
    A in [0.3, 3.3], the dt bias (`dt_bias`: its name's ending) around -1.5, D and norms random."""
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if pname.endswith("A_log"):
                p.copy_(torch.log(torch.rand_like(p) * 3.0 + 0.3))
            elif pname.endswith(dt_bias):
                p.copy_(torch.randn_like(p) * 0.7 - 1.5)
            elif pname.endswith(".D"):
                p.copy_(torch.randn_like(p))
            elif "norm" in pname:
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
            else:
                p.add_(torch.randn_like(p) * 0.1)
    return model


def states_from_cache(cache, n_layer):
    ssm, conv = [], []
    for i in range(n_layer):
        ssm.append(cache.get_recurrent_state(i, state_idx=0).detach().clone())
        c = cache.get_conv_state(i, state_idx=0).detach().clone()
        conv.append(c[..., -3:])  # statescope keeps the last d_conv-1 = 3 pre-conv inputs
    return torch.stack(ssm), torch.stack(conv)


def run(model, name, batch, length, n_next, n_steps):
    V = model.config.vocab_size
    g = torch.Generator().manual_seed(SEED + 1)
    ids = torch.randint(0, V, (batch, length), generator=g)
    nxt = torch.randint(0, V, (batch, n_next), generator=g)
    steps = torch.randint(0, V, (batch, n_steps), generator=g)
    with torch.no_grad():
        out = model(ids, labels=ids, use_cache=True)
        cache = out.cache
        ssm, conv = states_from_cache(cache, model.config.num_hidden_layers)
        # Continuation: a multi-token chunk from the cached state (chunk path with initial states) ...
        pos = torch.arange(length, length + n_next)
        out2 = model(nxt, cache=cache, use_cache=True, cache_position=pos)
        # ... then single-token recurrent steps.
        step_logits = []
        for t in range(n_steps):
            pos = torch.tensor([length + n_next + t])
            o = model(steps[:, t:t + 1], cache=out2.cache, use_cache=True, cache_position=pos)
            step_logits.append(o.logits)
        ssm2, conv2 = states_from_cache(out2.cache, model.config.num_hidden_layers)
    with h5py.File(os.path.join(HERE, name, "golden.h5"), "w") as f:
        f.attrs["creator"] = "tests/golden/make_golden.py"
        f.attrs["command"] = "HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/make_golden.py"
        f.attrs["seed"] = SEED
        f.attrs["versions"] = f"torch {torch.__version__}, transformers {transformers.__version__}"
        f["input_ids"] = ids.numpy().astype(np.int64)
        f["logits"] = out.logits.float().numpy()
        f["loss"] = np.array([out.loss.item()], dtype=np.float64)
        f["final_ssm_state"] = ssm.float().numpy()
        f["final_conv_state"] = conv.float().numpy()
        f["next_ids"] = nxt.numpy().astype(np.int64)
        f["next_logits"] = out2.logits.float().numpy()
        f["step_ids"] = steps.numpy().astype(np.int64)
        f["step_logits"] = torch.cat(step_logits, 1).float().numpy()
        f["after_steps_ssm_state"] = ssm2.float().numpy()
        f["after_steps_conv_state"] = conv2.float().numpy()
    print(f"{name}: loss {out.loss.item():.6f}, logits {tuple(out.logits.shape)}")


def save_mamba_ssm_config(model, d, raw_vocab, ssm_cfg=None):
    """config.json in mamba_ssm's dialect (d_model, ssm_cfg, ...) for `model`'s shape; ssm_cfg defaults to
    a Mamba-2's (layer "Mamba2"; a Mamba-1's names no layer)."""
    c = model.config
    if ssm_cfg is None:
        ssm_cfg = {"layer": "Mamba2", "d_state": c.state_size, "d_conv": c.conv_kernel, "expand": c.expand,
                   "headdim": c.head_dim, "ngroups": c.n_groups, "chunk_size": c.chunk_size}
    cfg = {"d_model": c.hidden_size, "d_intermediate": 0, "n_layer": c.num_hidden_layers, "vocab_size": raw_vocab,
           "ssm_cfg": ssm_cfg, "attn_layer_idx": [], "attn_cfg": {}, "rms_norm": True, "residual_in_fp32": True,
           "fused_add_norm": True, "pad_vocab_size_multiple": 16, "tie_embeddings": True}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)


def main():
    torch.manual_seed(SEED)
    for name, groups, tied, vocab in [("hf-untied", 1, False, 64), ("hf-groups2", 2, False, 64), ("hf-tied", 1, True, 64)]:
        model = build(name, groups, tied, vocab)
        model.save_pretrained(os.path.join(HERE, name), safe_serialization=True)
        run(model, name, batch=2, length=45, n_next=7, n_steps=3)
    # ssm-tied (hf-tied's weights in mamba_ssm layout, written by torch.save(module.state_dict()))
    # comes from make_wild_checkpoints.py tf5, with the other checkpoints from real writers.
    return 0


if __name__ == "__main__":
    sys.exit(main())

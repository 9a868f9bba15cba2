#!/usr/bin/env python3
"""make_golden_mamba1.py — third-party reference outputs for statescope's Mamba-1 (run by hand).

What it is: tiny random Mamba-1 models built with PyPI `transformers` (MambaForCausalLM, its
pure-torch path), every parameter moved away from its init value, written by the writers users have:
  - hf-mamba1: save_pretrained (model.safetensors + config.json, model_type "mamba"), head tied;
  - hf-mamba1-untied: the same with an untied lm_head;
  - ssm-mamba1: hf-mamba1's weights as mamba_ssm writes them, torch.save(module.state_dict()) of a
    module with mamba_ssm's parameter names (backbone.embedding, lm_head sharing its storage), and a
    mamba_ssm config.json (d_model, n_layer, ssm_cfg without "layer", raw vocab padded by 16).
Each folder's golden.h5 holds inputs, logits, the loss, the final SSM and conv states from
transformers' cache, and single-token continuation steps from that cached state (transformers'
multi-token path starts its SSM scan from zero even with a cache, so steps are what it offers for a
forward from a non-zero state; statescope's own float64 recurrence covers longer pieces).

Regenerate (outputs are committed):
    STATESCOPE_DEV=1 bash tools/setup.sh
    HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/make_golden_mamba1.py
"""
import os
import shutil
import sys

import h5py
import numpy as np
import torch
import transformers
from transformers import MambaConfig, MambaForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_golden import perturb  # noqa: E402
from make_wild_checkpoints import fresh, save_state_dict_mamba_ssm  # noqa: E402

SEED = 20261203
RAW_VOCAB = 60  # mamba_ssm pads 60 to 64 (pad_vocab_size_multiple 16)


def build(tied):
    # Odd sizes: d_model 24 (dt_rank auto = 2), d_inner 48, d_state 6.
    cfg = MambaConfig(
        hidden_size=24, num_hidden_layers=2, vocab_size=64, state_size=6, expand=2, conv_kernel=4,
        use_bias=False, use_conv_bias=True, layer_norm_epsilon=1e-5, residual_in_fp32=True,
        time_step_rank="auto", tie_word_embeddings=tied, pad_token_id=0, bos_token_id=0, eos_token_id=0)
    return perturb(MambaForCausalLM(cfg).float().eval(), dt_bias="dt_proj.bias")


def cache_of(out):
    return out.cache if hasattr(out, "cache") and out.cache is not None else out.cache_params


def states_from_cache(cache, n_layer, d_conv):
    ssm, conv = [], []
    for i in range(n_layer):
        ssm.append(cache.get_recurrent_state(i, state_idx=0).detach().clone())      # [b, d_inner, d_state]
        c = cache.get_conv_state(i, state_idx=0).detach().clone()                    # [b, d_inner, d_conv]
        conv.append(c[..., -(d_conv - 1):])  # statescope keeps the last d_conv-1 pre-conv inputs
    return torch.stack(ssm), torch.stack(conv)


def run(model, d, batch=2, length=45, n_steps=4):
    V = model.config.vocab_size
    n_layer, K = model.config.num_hidden_layers, model.config.conv_kernel
    g = torch.Generator().manual_seed(SEED + 1)
    ids = torch.randint(0, RAW_VOCAB, (batch, length), generator=g)
    steps = torch.randint(0, RAW_VOCAB, (batch, n_steps), generator=g)
    with torch.no_grad():
        out = model(ids, labels=ids, use_cache=True)
        cache = cache_of(out)
        ssm, conv = states_from_cache(cache, n_layer, K)
        step_logits = []
        for t in range(n_steps):
            pos = torch.tensor([length + t])
            o = model(steps[:, t:t + 1], cache=cache, use_cache=True, cache_position=pos)
            cache = cache_of(o)
            step_logits.append(o.logits)
        ssm2, conv2 = states_from_cache(cache, n_layer, K)
    with h5py.File(os.path.join(d, "golden.h5"), "w") as f:
        f.attrs["creator"] = "tests/golden/make_golden_mamba1.py"
        f.attrs["command"] = "HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/make_golden_mamba1.py"
        f.attrs["seed"] = SEED
        f.attrs["versions"] = f"torch {torch.__version__}, transformers {transformers.__version__}"
        f["input_ids"] = ids.numpy().astype(np.int64)
        f["logits"] = out.logits.float().numpy()
        f["loss"] = np.array([out.loss.item()], dtype=np.float64)
        f["final_ssm_state"] = ssm.float().numpy()        # (layer, batch, d_inner, d_state)
        f["final_conv_state"] = conv.float().numpy()      # (layer, batch, d_inner, d_conv-1), oldest first
        f["step_ids"] = steps.numpy().astype(np.int64)
        f["step_logits"] = torch.cat(step_logits, 1).float().numpy()
        f["after_steps_ssm_state"] = ssm2.float().numpy()
        f["after_steps_conv_state"] = conv2.float().numpy()
    print(f"{os.path.basename(d)}: loss {out.loss.item():.6f}, logits {tuple(out.logits.shape)}, "
          f"ssm {tuple(ssm.shape)}, conv {tuple(conv.shape)}")


def main():
    torch.manual_seed(SEED)
    tied = build(tied=True)
    d = fresh(os.path.join(HERE, "hf-mamba1"))
    tied.save_pretrained(d, safe_serialization=True)
    run(tied, d)
    d = fresh(os.path.join(HERE, "ssm-mamba1"))  # the same weights: the same golden
    c = tied.config
    save_state_dict_mamba_ssm(tied, d, torch.float32, RAW_VOCAB,
                              ssm_cfg={"d_state": c.state_size, "d_conv": c.conv_kernel, "expand": c.expand, "dt_rank": "auto"})
    shutil.copy(os.path.join(HERE, "hf-mamba1", "golden.h5"), os.path.join(d, "golden.h5"))
    untied = build(tied=False)
    d = fresh(os.path.join(HERE, "hf-mamba1-untied"))
    untied.save_pretrained(d, safe_serialization=True)
    run(untied, d)
    return 0


if __name__ == "__main__":
    sys.exit(main())

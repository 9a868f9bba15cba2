#!/usr/bin/env python3
"""make_golden_nemotron_h.py — a whole Nemotron-H as transformers 5.25 runs it (issue 53; run by hand).

What it is: a tiny random NemotronHForCausalLM built by transformers' own classes, float64, every
parameter (and the routers' score-correction bias) moved off its init, written by `save_pretrained`
(config.json + model.safetensors under backbone.*, experts one by one, as hub checkpoints are). Pattern
"M-*EM": Mamba-2 (4 heads of 8: a mixer width of 32, not 2 x hidden), relu^2 MLP, attention (4 query
heads over 2 key/value heads, no positional encoding), a mixture of 8 relu^2 experts in 2 groups of
which 1 is kept, top-2 renormalised and scaled by 2.5, with the shared expert; Mamba-2 again.

golden.h5:
  input_ids [2, 21] and logits [2, 21, vocab] of one pass from the empty state;
  the same tokens in two pieces through transformers' DynamicCache (13, then 8): the state after the
  first piece (per Mamba layer ssm [layer, batch, heads, headdim, d_state] (transformers keeps it in
  float32), conv [layer, batch, conv_dim, conv_kernel-1] (oldest first); per attention layer keys and
  values [layer, batch, kv_heads, 13, head_dim]) and the second piece's logits [2, 8, vocab].
Logits are lm_head(last_hidden_state) in float64 (NemotronHForCausalLM itself returns them as
float32). transformers computes the SSD scan, the RMSNorms and the router in float32 inside the float64
model, so these outputs carry that rounding (about 1e-7 relative); the C++ test's tolerance says so.

Regenerate (outputs are committed):
    STATESCOPE_DEV=1 bash tools/setup.sh
    HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/make_golden_nemotron_h.py
"""
import os
import sys

import h5py
import numpy as np
import torch
from transformers import NemotronHConfig, NemotronHForCausalLM, __version__ as transformers_version
from transformers.cache_utils import DynamicCache

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# (importing it also quiets transformers' warnings)
from make_golden_hybrid_blocks import HERE, fresh, perturb, provenance  # noqa: E402

SEED = 20261208


def main():
    torch.manual_seed(SEED)
    cfg = NemotronHConfig(vocab_size=96, hidden_size=48, hybrid_override_pattern="M-*EM", num_attention_heads=4,
                          num_key_value_heads=2, head_dim=16, intermediate_size=72, mamba_num_heads=4, mamba_head_dim=8,
                          ssm_state_size=8, n_groups=2, conv_kernel=4, chunk_size=8, n_routed_experts=8,
                          num_experts_per_tok=2, moe_intermediate_size=24, moe_shared_expert_intermediate_size=40,
                          n_group=2, topk_group=1, routed_scaling_factor=2.5)
    cfg._attn_implementation = "sdpa"
    cfg._experts_implementation = "eager"
    model = perturb(NemotronHForCausalLM(cfg).double().eval())
    d = fresh(os.path.join(HERE, "hf-nemotron-h"))
    model.save_pretrained(d, safe_serialization=True)
    g = torch.Generator().manual_seed(SEED + 1)
    ids = torch.randint(0, cfg.vocab_size, (2, 21), generator=g)
    kinds = model.config.layers_block_type

    def logits(out):
        return model.lm_head(out.last_hidden_state)

    with torch.no_grad():
        whole = logits(model.model(ids, use_cache=False))
        cache = DynamicCache(config=model.config)
        a = model.model(ids[:, :13], cache=cache, use_cache=True)
        ssm, conv, keys, values = [], [], [], []
        for i, k in enumerate(kinds):
            layer = a.cache.layers[i]
            if k == "linear_attention":
                ssm.append(layer.recurrent_states[0].double().clone())
                conv.append(layer.conv_states[0][..., 1:].clone())
            elif k == "full_attention":
                keys.append(layer.keys.clone())
                values.append(layer.values.clone())
        b = logits(model.model(ids[:, 13:], cache=a.cache, use_cache=True))
    print(f"hf-nemotron-h: kinds {kinds}; two pieces vs one pass max |d logits| "
          f"{(torch.cat([logits(a), b], 1) - whole).abs().max().item():.2e}")
    with h5py.File(os.path.join(d, "golden.h5"), "w") as f:
        f.attrs.update(provenance("make_golden_nemotron_h.py", SEED))
        f["input_ids"] = ids.numpy().astype(np.int64)
        f["logits"] = whole.numpy()
        f["piece_a_ssm_state"] = torch.stack(ssm).numpy()
        f["piece_a_conv_state"] = torch.stack(conv).numpy()
        f["piece_a_keys"] = torch.stack(keys).numpy()
        f["piece_a_values"] = torch.stack(values).numpy()
        f["piece_b_logits"] = b.numpy()
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write(f"# hf-nemotron-h: a Nemotron-H written by transformers {transformers_version}\n\n"
                f"Made by `tests/golden/make_golden_nemotron_h.py` (seed {SEED}).\n\n```\n{__doc__}```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

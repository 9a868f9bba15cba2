#!/usr/bin/env python3
"""make_golden_hybrids.py — whole hybrids as transformers 5.25 runs them (issue 53; run by hand).

What it is: tiny random models built by transformers' own classes, float64, every parameter (and
Nemotron-H's router bias) moved off its init (zero-centred norms around 0), written by
`save_pretrained`, each with golden.h5 (make_golden_hybrid_blocks.whole_model_golden):

hf-nemotron-h (NemotronHForCausalLM, seed 20261208): pattern "M-*EM": Mamba-2 (4 heads of 8: a mixer
  width of 32, not 2 x hidden), relu^2 MLP, attention (4 query heads over 2 key/value heads, no
  positional encoding), a mixture of 8 relu^2 experts in 2 groups of which 1 is kept, top-2
  renormalised and scaled by 2.5, with the shared expert; Mamba-2 again. On disk under backbone.*, the
  experts one by one, as hub checkpoints are.
hf-qwen3-5 (Qwen3_5ForCausalLM, model_type qwen3_5_text, seed 20261209): [linear_attention,
  full_attention, linear_attention]: Gated DeltaNet (2 key heads of 8 serving 4 value heads of 8, the
  fused in_proj_qkv and conv1d, the gated per-head norm) and gated attention (4 query heads over 2
  key/value heads of 16, zero-centred q/k norms, RoPE on the first quarter of each head, theta 1e4, the
  sigmoid output gate), each followed by the SwiGLU MLP; untied head.

hf-granite-h (GraniteMoeHybridForCausalLM, model_type granitemoehybrid, seed 20261210): [linear_attention,
  full_attention, linear_attention]: Mamba-2 (8 heads of 12, 2 groups), attention (4 query heads over 2
  key/value heads of 12, RoPE theta 1e4, attention_multiplier 0.09 as the score scale), each layer with 4
  SwiGLU experts (top-2, softmax over the two) beside the shared SwiGLU MLP; muP multipliers (embedding 6,
  residual 0.3, logits / 2.5); tied head.
hf-granite-h-dense (the same family, seed 20261211): [full_attention, linear_attention], NoPE
  (position_embedding_type null), no experts (the shared MLP alone), attention biases, untied head, the
  multipliers at other values.

golden.h5:
  input_ids [2, 21] and logits [2, 21, vocab] of one pass from the empty state;
  the same tokens in two pieces through transformers' DynamicCache (13, then 8): the state after the
  first piece (per recurrent layer ssm [layer, batch, heads, ...] (float32 in transformers) and conv
  [layer, batch, channels, kernel-1] (oldest first); per attention layer keys and values [layer, batch,
  kv_heads, 13, head_dim], as cached) and the second piece's logits [2, 8, vocab].
Logits are lm_head(last_hidden_state) in float64 (Granite's divided by its logits_scaling). transformers computes the scans, the RMSNorms, the
q/k norms and the router in float32 inside its float64 models (about 1e-7 relative; its own two pieces
differ from its one pass by 4e-7 (Nemotron-H) and 8e-6 (Qwen3.5)); the C++ tests' tolerance says so.

Regenerate (outputs are committed):
    STATESCOPE_DEV=1 bash tools/setup.sh
    HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/make_golden_hybrids.py
"""
import os
import sys

import torch
from transformers import (GraniteMoeHybridConfig, GraniteMoeHybridForCausalLM, NemotronHConfig, NemotronHForCausalLM,
                          Qwen3_5ForCausalLM, Qwen3_5TextConfig)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# (importing it also quiets transformers' warnings)
from make_golden_hybrid_blocks import perturb, whole_model_golden  # noqa: E402

SCRIPT = "make_golden_hybrids.py"
NEMOTRON_SEED, QWEN_SEED, GRANITE_SEED, GRANITE_DENSE_SEED = 20261208, 20261209, 20261210, 20261211


def build(cls, cfg):
    """The model in float64, off its init; sdpa attention (float64 inside), eager experts (the default
    grouped_mm refuses float64 on the CPU)."""
    cfg._attn_implementation = "sdpa"
    cfg._experts_implementation = "eager"
    return perturb(cls(cfg).double().eval())


def nemotron_h():
    torch.manual_seed(NEMOTRON_SEED)
    cfg = NemotronHConfig(vocab_size=96, hidden_size=48, hybrid_override_pattern="M-*EM", num_attention_heads=4,
                          num_key_value_heads=2, head_dim=16, intermediate_size=72, mamba_num_heads=4, mamba_head_dim=8,
                          ssm_state_size=8, n_groups=2, conv_kernel=4, chunk_size=8, n_routed_experts=8,
                          num_experts_per_tok=2, moe_intermediate_size=24, moe_shared_expert_intermediate_size=40,
                          n_group=2, topk_group=1, routed_scaling_factor=2.5)
    model = build(NemotronHForCausalLM, cfg)
    whole_model_golden(model, "hf-nemotron-h", model.config.layers_block_type, SCRIPT, NEMOTRON_SEED, __doc__)


def qwen3_5():
    torch.manual_seed(QWEN_SEED)
    cfg = Qwen3_5TextConfig(vocab_size=96, hidden_size=48, num_hidden_layers=3,
                            layer_types=["linear_attention", "full_attention", "linear_attention"], num_attention_heads=4,
                            num_key_value_heads=2, head_dim=16, intermediate_size=72, linear_num_key_heads=2,
                            linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=8,
                            linear_conv_kernel_dim=4, tie_word_embeddings=False,
                            rope_parameters={"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.25})
    model = build(Qwen3_5ForCausalLM, cfg)
    whole_model_golden(model, "hf-qwen3-5", model.config.layer_types, SCRIPT, QWEN_SEED, __doc__)


def granite_h():
    common = dict(vocab_size=96, hidden_size=48, num_attention_heads=4, num_key_value_heads=2, mamba_n_heads=8,
                  mamba_d_head=12, mamba_n_groups=2, mamba_d_state=8, mamba_d_conv=4, mamba_chunk_size=8,
                  shared_intermediate_size=40)
    torch.manual_seed(GRANITE_SEED)
    cfg = GraniteMoeHybridConfig(num_hidden_layers=3, layer_types=["linear_attention", "full_attention", "linear_attention"],
                                 intermediate_size=24, num_local_experts=4, num_experts_per_tok=2,
                                 position_embedding_type="rope", rope_parameters={"rope_type": "default", "rope_theta": 1e4},
                                 embedding_multiplier=6.0, attention_multiplier=0.09, residual_multiplier=0.3,
                                 logits_scaling=2.5, tie_word_embeddings=True, **common)
    model = build(GraniteMoeHybridForCausalLM, cfg)
    whole_model_golden(model, "hf-granite-h", model.config.layer_types, SCRIPT, GRANITE_SEED, __doc__,
                       logits_scale=1.0 / model.config.logits_scaling)
    torch.manual_seed(GRANITE_DENSE_SEED)
    cfg = GraniteMoeHybridConfig(num_hidden_layers=2, layer_types=["full_attention", "linear_attention"],
                                 num_local_experts=0, position_embedding_type=None, attention_bias=True,
                                 embedding_multiplier=2.0, attention_multiplier=0.2, residual_multiplier=0.5,
                                 logits_scaling=0.8, tie_word_embeddings=False, **common)
    model = build(GraniteMoeHybridForCausalLM, cfg)
    whole_model_golden(model, "hf-granite-h-dense", model.config.layer_types, SCRIPT, GRANITE_DENSE_SEED, __doc__,
                       logits_scale=1.0 / model.config.logits_scaling)


FAMILIES = {"nemotron_h": nemotron_h, "qwen3_5": qwen3_5, "granite_h": granite_h}


def main():
    # Every family, or those named: make_golden_hybrids.py granite_h
    for name in sys.argv[1:] or FAMILIES:
        FAMILIES[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""make_golden_hybrid_blocks.py — reference outputs of the hybrids' attention and MLP blocks (run by hand).

What it is: for each hybrid family of issue 53, a tiny random model built by transformers' own classes
(every parameter moved off its init), float64, written by `save_pretrained` (config.json +
model.safetensors, the names a hub checkpoint has), and blocks.h5: the input and output of each of its
attention and MLP modules, captured by forward hooks inside the model's own forward, for one sequence
run whole and run in two pieces through transformers' DynamicCache (13 tokens, then 8 continuing from
the cache: the attention's keys and values of the first piece are what the second reads).

  hf-nemotron-h-blocks      nemotron_h, pattern "M*-": attention without positional encoding, relu^2 MLP
  hf-granite-h-blocks       granitemoehybrid, [mamba, attention], RoPE, attention_multiplier as the scale,
                            the shared SwiGLU MLP (input_linear chunked in two) with no experts
  hf-granite-h-nope-blocks  the same, position_embedding_type null (NoPE), attention bias on
  hf-falcon-h1-blocks       falcon_h1: RoPE over the whole head, key_multiplier, SwiGLU MLP with
                            mlp_multipliers
  hf-qwen3-5-blocks         qwen3_5_text: zero-centred q/k norms before a 25% partial RoPE, the sigmoid
                            output gate (q_proj's rows per head [q | gate]), SwiGLU MLP
  hf-qwen3-next-blocks      qwen3_next: the same attention, a dense MLP (mlp_only_layers)
  mixtures of experts (the block's whole output, shared expert included where the block holds one):
  hf-nemotron-h-moe-blocks  nemotron_h "ME*": sigmoid router with the score-correction bias selecting,
                            2 groups of which 1 is kept, top-2 renormalised and scaled by 2.5, relu^2
                            experts, the shared relu^2 expert
  hf-nemotron-h-latent-blocks  the same with moe_latent_size (experts in a 16-wide latent space)
  hf-granite-h-moe-blocks   granitemoehybrid: softmax over the top-2 logits, SwiGLU experts (the shared
                            MLP is the layer's, captured apart)
  hf-qwen3-next-moe-blocks  qwen3_next: softmax, top-2 renormalised, SwiGLU experts, the shared expert
                            behind its sigmoid gate

blocks.h5 per captured module (group "<module path>", e.g. "model.layers.1.self_attn"):
  input [1, 21, hidden] and output [1, 21, hidden] of the whole sequence;
  input_a, output_a [1, 13, hidden] and input_b, output_b [1, 8, hidden]: the two pieces (piece b at
  positions 13..20, reading piece a's keys and values from the cache).
  attribute "kind": attention | mlp.
transformers computes some steps in float32 inside a float64 model (RMSNorms, the eager softmax): the
outputs are float64 but their last digits carry that rounding (about 1e-7 relative); the C++ tests'
tolerances say so.

Regenerate (outputs are committed):
    STATESCOPE_DEV=1 bash tools/setup.sh
    HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/make_golden_hybrid_blocks.py
"""
import os
import sys
import warnings

import h5py
import numpy as np
import torch
import transformers
from transformers.cache_utils import DynamicCache

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_wild_checkpoints import fresh  # noqa: E402

SEED = 20261207


def provenance(script, seed):
    """The attributes every fixture file of these scripts carries: what made it, how, from which seed."""
    return {"creator": f"tests/golden/{script}", "command": f"HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/{script}",
            "seed": seed, "versions": f"torch {torch.__version__}, transformers {transformers.__version__}"}


PROVENANCE = provenance("make_golden_hybrid_blocks.py", SEED)


def whole_model_golden(model, name, kinds, script, seed, doc, logits_scale=1.0):
    """A whole hybrid's fixture (make_golden_hybrids.py): save_pretrained into
    tests/golden/<name>, then golden.h5 with one pass and two pieces (13 + 8 tokens) through transformers'
    DynamicCache, the state after the first piece per recurrent layer (ssm, conv without its oldest
    column) and per attention layer (keys, values); logits as lm_head(last_hidden_state) in float64,
    times logits_scale (Granite's 1 / logits_scaling, which its ForCausalLM applies after the head)."""
    d = fresh(os.path.join(HERE, name))
    model.save_pretrained(d, safe_serialization=True)
    g = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, model.config.vocab_size, (2, 21), generator=g)

    def logits(out):
        return model.lm_head(out.last_hidden_state) * logits_scale

    with torch.no_grad():
        whole = logits(model.model(ids, use_cache=False))
        a = model.model(ids[:, :13], cache=DynamicCache(config=model.config), use_cache=True)
        state = {"ssm_state": [], "conv_state": [], "keys": [], "values": []}
        for i, k in enumerate(kinds):
            layer = a.cache.layers[i]
            if k == "linear_attention":
                state["ssm_state"].append(layer.recurrent_states[0].double().clone())
                state["conv_state"].append(layer.conv_states[0][..., 1:].clone())
            elif k == "full_attention":
                state["keys"].append(layer.keys.clone())
                state["values"].append(layer.values.clone())
        b = logits(model.model(ids[:, 13:], cache=a.cache, use_cache=True))
    print(f"{name}: kinds {kinds}; two pieces vs one pass max |d logits| "
          f"{(torch.cat([logits(a), b], 1) - whole).abs().max().item():.2e}")
    with h5py.File(os.path.join(d, "golden.h5"), "w") as f:
        f.attrs.update(provenance(script, seed))
        f["input_ids"] = ids.numpy().astype(np.int64)
        f["logits"] = whole.numpy()
        for key, tensors in state.items():
            f["piece_a_" + key] = torch.stack(tensors).numpy()
        f["piece_b_logits"] = b.numpy()
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write(f"# {name}: written by transformers {transformers.__version__}\n\n"
                f"Made by `tests/golden/{script}` (seed {seed}).\n\n```\n{doc}```\n")


def perturb(model):
    """Every parameter off its init: norm weights around their identity (zero-centred ones around 0),
    the rest with added noise."""
    zero_centred = "Qwen3" in type(model).__name__
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_((0.0 if zero_centred else 1.0) + 0.3 * torch.randn_like(p))
            else:
                p.add_(torch.randn_like(p) * 0.15)
        for name, b in model.named_buffers():
            if name.endswith("e_score_correction_bias"):  # Nemotron-H's router bias: it selects experts
                b.copy_(torch.randn_like(b) * 0.3)
    return model


def capture(model, wanted):
    """Forward hooks on the modules named in `wanted`: each call appends (input, output)."""
    calls = {name: [] for name in wanted}
    mods = dict(model.named_modules())
    hooks = []
    for name in wanted:
        def hook(mod, args, kwargs, out, name=name):
            x = args[0] if args else kwargs["hidden_states"]
            y = out[0] if isinstance(out, tuple) else out
            calls[name].append((x.detach().clone(), y.detach().clone()))
        hooks.append(mods[name].register_forward_hook(hook, with_kwargs=True))
    return calls, hooks


def run(cls, cfg, name, wanted):
    torch.manual_seed(SEED)
    cfg._attn_implementation = "sdpa"  # float64 inside (eager's softmax is float32)
    cfg._experts_implementation = "eager"  # the default grouped_mm refuses float64 on the CPU
    model = perturb(cls(cfg).double().eval())
    d = fresh(os.path.join(HERE, name))
    model.save_pretrained(d, safe_serialization=True)
    g = torch.Generator().manual_seed(SEED + 1)
    ids = torch.randint(0, cfg.vocab_size, (1, 21), generator=g)
    calls, hooks = capture(model, wanted)
    with torch.no_grad():
        model(ids, use_cache=False)
        cache = DynamicCache(config=model.config)
        a = model(ids[:, :13], cache=cache, use_cache=True)
        model(ids[:, 13:], cache=a.cache, use_cache=True)
    for h in hooks:
        h.remove()
    with h5py.File(os.path.join(d, "blocks.h5"), "w") as f:
        f.attrs.update(PROVENANCE)
        f["input_ids"] = ids.numpy().astype(np.int64)
        for mod, kind in wanted.items():
            c = calls[mod]
            assert len(c) == 3, (mod, len(c))
            grp = f.create_group(mod)
            grp.attrs["kind"] = kind
            for (x, y), tag in zip(c, ["", "_a", "_b"]):
                grp["input" + tag] = x.numpy()
                grp["output" + tag] = y.numpy()
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write(f"# {name}: {cls.__name__} blocks written by transformers {transformers.__version__}\n\n"
                f"Made by `tests/golden/make_golden_hybrid_blocks.py` (seed {SEED}); read its docstring.\n")
    print(f"{name}: {', '.join(wanted)}")


def main():
    from transformers import (FalconH1Config, FalconH1ForCausalLM, GraniteMoeHybridConfig,
                              GraniteMoeHybridForCausalLM, NemotronHConfig, NemotronHForCausalLM,
                              Qwen3_5ForCausalLM, Qwen3_5TextConfig, Qwen3NextConfig, Qwen3NextForCausalLM)
    run(NemotronHForCausalLM,
        NemotronHConfig(vocab_size=96, hidden_size=48, hybrid_override_pattern="M*-", num_attention_heads=4,
                        num_key_value_heads=2, head_dim=16, intermediate_size=72, mamba_num_heads=4, mamba_head_dim=8,
                        ssm_state_size=8, n_groups=2, conv_kernel=4, chunk_size=8),
        "hf-nemotron-h-blocks", {"model.layers.1.mixer": "attention", "model.layers.2.mixer": "mlp"})
    granite = dict(vocab_size=96, hidden_size=48, num_hidden_layers=2, layer_types=["linear_attention", "full_attention"],
                   num_attention_heads=4, num_key_value_heads=2, intermediate_size=32, shared_intermediate_size=40,
                   num_local_experts=0, mamba_n_heads=4, mamba_d_head=24, mamba_n_groups=2, mamba_d_state=8,
                   mamba_chunk_size=8, embedding_multiplier=12.0, residual_multiplier=0.22,
                   attention_multiplier=0.0078125 * 9, logits_scaling=6.0)
    run(GraniteMoeHybridForCausalLM,
        GraniteMoeHybridConfig(position_embedding_type="rope", rope_parameters={"rope_type": "default", "rope_theta": 1000.0},
                               **granite),
        "hf-granite-h-blocks", {"model.layers.1.self_attn": "attention", "model.layers.1.shared_mlp": "mlp"})
    run(GraniteMoeHybridForCausalLM,
        GraniteMoeHybridConfig(position_embedding_type=None, attention_bias=True, **granite),
        "hf-granite-h-nope-blocks", {"model.layers.1.self_attn": "attention"})
    run(FalconH1ForCausalLM,
        FalconH1Config(vocab_size=96, hidden_size=48, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2,
                       head_dim=16, intermediate_size=72, mamba_d_ssm=48, mamba_n_heads=6, mamba_d_head=8,
                       mamba_n_groups=2, mamba_d_state=8, mamba_chunk_size=8, key_multiplier=0.7,
                       mlp_multipliers=[0.9, 1.2], rope_parameters={"rope_type": "default", "rope_theta": 500.0}),
        "hf-falcon-h1-blocks", {"model.layers.0.self_attn": "attention", "model.layers.0.feed_forward": "mlp"})
    qwen = dict(vocab_size=96, hidden_size=48, num_hidden_layers=2, layer_types=["linear_attention", "full_attention"],
                num_attention_heads=4, num_key_value_heads=2, head_dim=16, intermediate_size=72,
                linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=8,
                linear_conv_kernel_dim=4,
                rope_parameters={"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.25})
    run(Qwen3_5ForCausalLM, Qwen3_5TextConfig(**qwen), "hf-qwen3-5-blocks",
        {"model.layers.1.self_attn": "attention", "model.layers.1.mlp": "mlp"})
    run(Qwen3NextForCausalLM,
        Qwen3NextConfig(mlp_only_layers=[0, 1], num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                        shared_expert_intermediate_size=24, **qwen),
        "hf-qwen3-next-blocks", {"model.layers.1.self_attn": "attention", "model.layers.1.mlp": "mlp"})
    nemo_moe = dict(vocab_size=96, hidden_size=48, hybrid_override_pattern="ME*", num_attention_heads=4,
                    num_key_value_heads=2, head_dim=16, intermediate_size=72, mamba_num_heads=4, mamba_head_dim=8,
                    ssm_state_size=8, n_groups=2, conv_kernel=4, chunk_size=8, n_routed_experts=8, num_experts_per_tok=2,
                    moe_intermediate_size=24, moe_shared_expert_intermediate_size=40, n_group=2, topk_group=1,
                    routed_scaling_factor=2.5)
    run(NemotronHForCausalLM, NemotronHConfig(**nemo_moe), "hf-nemotron-h-moe-blocks", {"model.layers.1.mixer": "moe"})
    run(NemotronHForCausalLM, NemotronHConfig(moe_latent_size=16, **nemo_moe), "hf-nemotron-h-latent-blocks",
        {"model.layers.1.mixer": "moe"})
    run(GraniteMoeHybridForCausalLM,
        GraniteMoeHybridConfig(position_embedding_type="rope", **{**granite, "num_local_experts": 4, "num_experts_per_tok": 2}),
        "hf-granite-h-moe-blocks", {"model.layers.1.block_sparse_moe": "moe"})
    run(Qwen3NextForCausalLM,
        Qwen3NextConfig(mlp_only_layers=[0], num_experts=4, num_experts_per_tok=2, moe_intermediate_size=16,
                        shared_expert_intermediate_size=24, **qwen),
        "hf-qwen3-next-moe-blocks", {"model.layers.1.mlp": "moe"})
    return 0


if __name__ == "__main__":
    sys.exit(main())

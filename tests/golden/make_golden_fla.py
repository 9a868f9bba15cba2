#!/usr/bin/env python3
"""make_golden_fla.py — third-party reference outputs for statescope's GLA (run by hand).

What it is: tiny random GLA models built by flash-linear-attention 0.6.0's own classes
(`fla.models.GLAForCausalLM`), every parameter moved away from its init value, written by
`save_pretrained` (model.safetensors + config.json, model_type "gla"):
  - fla-gla: short convolutions, 4 query heads sharing 2 key/value heads, the fused swish-gated
    output norm (g_norm_swish_gate), clamp_min, untied head, odd sizes (head_k_dim 3, head_v_dim 6);
  - fla-gla-plain: no short convolutions, the unfused output norm (g_norm) without its weight
    (elementwise_affine null), no output gate, tied head.

fla's compute runs in Triton, which has no CPU backend, so on the CPU this script swaps, inside fla's
own modules, each Triton op for the reference fla ships or the formula its kernel computes:
  - fused_recurrent_gla and chunk_gla (fla.layers.gla) -> fla.ops.gla.naive.naive_recurrent_gla
    (fla's naive recurrence; the cache's state is [B, H, V, K] with state_v_first, transposed in and
    out around the naive [B, H, K, V]);
  - ShortConvolution.forward -> torch conv1d over [cache[..., 1:], x] with SiLU; the cache it
    returns is the last conv_size inputs (fla's layout, [N, D, W]);
  - RMSNorm.forward (with its residual/prenorm form), FusedRMSNormGated.forward -> the formulas of
    fla's kernels in float32: x * rsqrt(mean(x^2) + eps) * w, then * g * sigmoid(g) when gated;
  - GatedMLP.forward -> down(silu(gate(x)) * up(x)).
Everything else (projections, head splits and key/value groups, the gate logsigmoid(gk)/16 and
clamp_min, the block's residuals, the cache plumbing) is fla's code as shipped.

Each folder's golden.h5 holds: input_ids [2, 45] and their logits and final states from the zero
state (45 <= 64: fla's fused_recurrent mode), and the per-position state norms (layer, batch,
position, head) read from fla's cache while it steps through the same tokens one at a time (its
generation path); input_ids_long [1, 70] (the chunk mode) with its
logits; and a forward of input_ids from random non-zero initial states (given to fla through its
Cache) with its logits and final states. States as statescope names them: ssm (layer, batch, head,
key dim, value dim), key first; conv (layer, batch, q|k|v channels, conv_size-1), oldest first.

Regenerate (outputs are committed):
    STATESCOPE_DEV=1 bash tools/setup.sh
    .venv/bin/python -m pip install flash-linear-attention==0.6.0 fla-core==0.6.0
    HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/make_golden_fla.py
"""
import os
import sys
import warnings

import h5py
import numpy as np
import torch
import torch.nn.functional as F

warnings.filterwarnings("ignore")
import fla  # noqa: E402
import fla.layers.gla as fla_gla_layer  # noqa: E402
from fla.models import GLAConfig, GLAForCausalLM  # noqa: E402
from fla.models.cache_utils import Cache  # noqa: E402
from fla.modules import FusedRMSNormGated, GatedMLP, RMSNorm, ShortConvolution  # noqa: E402
from fla.ops.gla.naive import naive_recurrent_gla  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_wild_checkpoints import fresh  # noqa: E402

SEED = 20261205
GLA_SWAPPED = ("fused_recurrent_gla/chunk_gla -> fla.ops.gla.naive.naive_recurrent_gla; "
               "ShortConvolution, RMSNorm, FusedRMSNormGated, GatedMLP forward -> torch formulas")


# ---- the swaps (see the docstring) ----
def gla_naive(q, k, v, gk=None, g=None, initial_state=None, output_final_state=False, state_v_first=False, **_):
    gk = gk if gk is not None else g
    h0 = initial_state
    if h0 is not None and state_v_first:
        h0 = h0.transpose(-1, -2)
    o, h = naive_recurrent_gla(q, k, v, gk, initial_state=h0, output_final_state=True)
    if state_v_first:
        h = h.transpose(-1, -2).contiguous()
    return o, (h if output_final_state else None)


def short_conv_forward(self, x, residual=None, mask=None, cache=None, output_final_state=False, cu_seqlens=None, **_):
    assert residual is None and mask is None and cu_seqlens is None
    B, T, D = x.shape
    W = self.kernel_size[0]
    prev = cache if cache is not None else x.new_zeros(B, D, W)
    xin = torch.cat([prev, x.transpose(1, 2)], 2)                      # [B, D, W + T]
    y = F.conv1d(xin[..., 1:], self.weight, self.bias, groups=D)       # [B, D, T]
    if self.activation is not None:
        y = F.silu(y)
    return y.transpose(1, 2), (xin[..., -W:].contiguous() if output_final_state else None)


def rms(x, w, eps):
    xf = x.float()
    y = xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps)
    return y * w.float() if w is not None else y


def rmsnorm_forward(self, x, residual=None, prenorm=False, residual_in_fp32=False):
    if residual is not None:
        x = x + residual
    y = rms(x, self.weight, self.eps).to(x.dtype)
    return (y, x) if prenorm else y


def gated_forward(self, x, g, residual=None, prenorm=False, residual_in_fp32=False):
    assert residual is None
    gf = g.float()
    return (rms(x, self.weight, self.eps) * gf * torch.sigmoid(gf)).to(x.dtype)


def mlp_forward(self, x, **_):
    return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


fla_gla_layer.fused_recurrent_gla = gla_naive
fla_gla_layer.chunk_gla = gla_naive
fla_gla_layer.fused_chunk_gla = gla_naive
ShortConvolution.forward = short_conv_forward
RMSNorm.forward = rmsnorm_forward
FusedRMSNormGated.forward = gated_forward
GatedMLP.forward = mlp_forward


def perturb(model):
    """Every parameter off its init: norms around 1, the rest with added noise."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
            elif name.endswith("gk_proj.1.bias"):
                p.copy_(torch.randn_like(p) * 2.0 + 1.0)  # gates spread over fast and slow decay
            else:
                p.add_(torch.randn_like(p) * 0.15)
    return model


def build(**kw):
    cfg = GLAConfig(vocab_size=64, fuse_cross_entropy=False, fuse_swiglu=False, attn_mode="chunk", **kw)
    return perturb(GLAForCausalLM(cfg).float().eval())


def states(cache, model):
    """statescope's layout from fla's cache: ssm key first, conv the last conv_size-1 inputs of q|k|v."""
    ssm, conv = [], []
    for i in range(model.config.num_hidden_layers):
        s = cache[i]
        ssm.append(s["recurrent_state"].transpose(-1, -2))             # [B, H, V, K] -> [B, H, K, V]
        if model.config.use_short_conv:
            conv.append(torch.cat([c[..., 1:] for c in s["conv_state"]], 1))  # [B, Cq+Ck+Cv, W-1]
    return torch.stack(ssm), (torch.stack(conv) if conv else None)


def cache_from(model, ssm, conv, conv_sizes):
    """An fla Cache holding statescope's initial states (the column fla keeps beyond W-1 inputs is
    never read: random here, so a reader of it would show)."""
    cfg = model.config
    cache = Cache()
    for i in range(cfg.num_hidden_layers):
        cs = None
        if cfg.use_short_conv:
            B = conv.shape[1]
            parts = torch.split(conv[i], conv_sizes, 1)
            cs = tuple(torch.cat([torch.randn(B, p.shape[1], 1), p], 2) for p in parts)
        cache.update(recurrent_state=ssm[i].transpose(-1, -2).contiguous(), conv_state=cs, layer_idx=i, offset=0)
    return cache


def gla_dims(model):
    """(state heads, key dim, value dim, the q|k|v conv channels) of fla's GLA layer."""
    a = model.model.layers[0].attn
    return a.num_heads, a.head_k_dim, a.head_v_dim, [a.key_dim, a.key_dim_per_group, a.value_dim_per_group]


def run(model, d, dims=gla_dims, seed=SEED, script="make_golden_fla.py", swapped=GLA_SWAPPED, doc=__doc__, title="GLA"):
    cfg = model.config
    g = torch.Generator().manual_seed(seed + 1)
    ids = torch.randint(0, cfg.vocab_size, (2, 45), generator=g)
    long_ids = torch.randint(0, cfg.vocab_size, (1, 70), generator=g)
    H, K, V, conv_sizes = dims(model)
    ssm0 = torch.randn(cfg.num_hidden_layers, 2, H, K, V, generator=g) * 0.7
    conv0 = None
    if cfg.use_short_conv:
        conv0 = torch.randn(cfg.num_hidden_layers, 2, sum(conv_sizes), cfg.conv_size - 1, generator=g)
    with torch.no_grad():
        out = model(ids, labels=ids, use_cache=True)
        ssm, conv = states(out.past_key_values, model)
        long_logits = model(long_ids, use_cache=False).logits
        out0 = model(ids, past_key_values=cache_from(model, ssm0, conv0, conv_sizes), use_cache=True)
        ssm1, conv1 = states(out0.past_key_values, model)
        # Per-position state norms from fla's own token-by-token path (generation through its Cache).
        cache, norms = None, []
        for t in range(ids.shape[1]):
            step = model(ids[:, t:t + 1], past_key_values=cache, use_cache=True)
            cache = step.past_key_values
            s, _ = states(cache, model)                                 # [NL, B, H, K, V]
            norms.append(s.square().sum((-2, -1)).sqrt())               # [NL, B, H]
        norms = torch.stack(norms, 2)                                   # [NL, B, L, H]
    with h5py.File(os.path.join(d, "golden.h5"), "w") as f:
        f.attrs["creator"] = "tests/golden/" + script
        f.attrs["command"] = "HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/" + script
        f.attrs["seed"] = seed
        f.attrs["versions"] = f"torch {torch.__version__}, flash-linear-attention {fla.__version__}"
        f.attrs["swapped"] = swapped
        f["input_ids"] = ids.numpy().astype(np.int64)
        f["logits"] = out.logits.float().numpy()
        f["loss"] = np.array([out.loss.item()], dtype=np.float64)
        f["final_ssm_state"] = ssm.float().numpy()
        f["ssm_state_norm_per_head"] = norms.float().numpy()
        f["input_ids_long"] = long_ids.numpy().astype(np.int64)
        f["logits_long"] = long_logits.float().numpy()
        f["initial_ssm_state"] = ssm0.float().numpy()
        f["logits_from_state"] = out0.logits.float().numpy()
        f["final_ssm_state_from_state"] = ssm1.float().numpy()
        if conv is not None:
            f["final_conv_state"] = conv.float().numpy()
            f["initial_conv_state"] = conv0.float().numpy()
            f["final_conv_state_from_state"] = conv1.float().numpy()
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write(f"# {os.path.basename(d)}: a {title} reference written by fla {fla.__version__}\n\n"
                f"Made by `tests/golden/{script}` (seed {seed}); read its docstring for the model and for\n"
                "exactly which of fla's Triton ops were swapped for fla's own naive recurrence and the kernels'\n"
                f"formulas so that fla could run on the CPU.\n\n```\n{doc}```\n")
    print(f"{os.path.basename(d)}: loss {out.loss.item():.6f}, logits {tuple(out.logits.shape)}, ssm {tuple(ssm.shape)}, "
          f"conv {None if conv is None else tuple(conv.shape)}")


def main():
    torch.manual_seed(SEED)
    m = build(hidden_size=24, num_hidden_layers=2, num_heads=4, num_kv_heads=2, expand_k=0.5, expand_v=1.0,
              use_short_conv=True, conv_size=4, use_output_gate=True, fuse_norm=True, clamp_min=-0.4,
              intermediate_size=40, tie_word_embeddings=False, norm_eps=1e-6)
    d = fresh(os.path.join(HERE, "fla-gla"))
    m.save_pretrained(d, safe_serialization=True)
    run(m, d)
    m = build(hidden_size=32, num_hidden_layers=2, num_heads=2, expand_k=0.5, expand_v=1.0, use_short_conv=False,
              use_output_gate=False, fuse_norm=False, elementwise_affine=None, hidden_ratio=2,
              tie_word_embeddings=True, norm_eps=1e-5)
    d = fresh(os.path.join(HERE, "fla-gla-plain"))
    m.save_pretrained(d, safe_serialization=True)
    run(m, d)
    return 0


if __name__ == "__main__":
    sys.exit(main())

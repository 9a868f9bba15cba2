#!/usr/bin/env python3
"""make_golden_gdn.py — third-party reference outputs for statescope's Gated DeltaNet (run by hand).

What it is: tiny random Gated DeltaNet models built by flash-linear-attention 0.6.0's own classes
(`fla.models.GatedDeltaNetForCausalLM`), every parameter moved away from its init value, written by
`save_pretrained` (model.safetensors + config.json, model_type "gated_deltanet"):
  - fla-gdn: short convolutions, 2 query/key heads serving 4 value heads (GVA), head_dim 6 and
    head_v_dim 9, the fused swish-gated output norm, untied head;
  - fla-gdn-plain: no short convolutions (SiLU on q, k, v), no output gate (o_norm a plain RMSNorm),
    allow_neg_eigval (beta = 2 sigmoid), tied head, norm_eps 1e-5;
  - fla-gdn-sigmoid: one layer, the sigmoid output gate (output_gate_activation "sigmoid").

fla's compute runs in Triton, which has no CPU backend, so on the CPU this script swaps, inside fla's
own modules, each Triton op for the reference fla ships or the formula its kernel computes:
  - chunk_gated_delta_rule and fused_recurrent_gated_delta_rule (fla.layers.gated_deltanet) ->
    fla.ops.gated_delta_rule.naive.naive_recurrent_gated_delta_rule (fla's naive recurrence), with
    what the kernels do in-kernel done first: the gate by fla's own torch reference
    fla.ops.gated_delta_rule.gate.naive_gdn_gate (-exp(A_log) softplus(a + dt_bias)); beta =
    sigmoid(b), x2 with allow_neg_eigval; q and k L2-normalised per head as l2norm_fwd computes it
    (x / sqrt(sum x^2 + 1e-6)); for GVA q and k repeated per value head (value head hv reads q/k head
    hv // (HV/H), the kernels' index); the state_v_first cache [N, HV, V, K] transposed in and out
    around the naive [N, HV, K, V];
  - the layer's fused q|k|v convolution (used without a cache) is switched off
    (GatedDeltaNet._use_fused_qkv_conv -> False) so every call goes through ShortConvolution, whose
    forward -> torch conv1d over [cache[..., 1:], x] with SiLU; the cache it returns is the last
    conv_size inputs (fla's layout, [N, D, W]);
  - RMSNorm.forward (with its residual/prenorm form), FusedRMSNormGated.forward -> the formulas of
    fla's kernels in float32: x * rsqrt(mean(x^2) + eps) * w, then * g * sigmoid(g) (swish) or
    * sigmoid(g) (sigmoid);
  - GatedMLP.forward -> down(silu(gate(x)) * up(x)).
Everything else (projections, head splits, the block's residuals, the cache plumbing) is fla's code
as shipped.

Each folder's golden.h5 holds: input_ids [2, 45] and their logits and final states from the zero
state, and the per-position state norms (layer, batch, position, value head) read from fla's cache
while it steps through the same tokens one at a time (its generation path); input_ids_long [1, 70] with its logits; and a forward of input_ids from random non-zero
initial states (given to fla through its Cache) with its logits and final states. States as
statescope names them: ssm (layer, batch, value head, key dim, value dim), key first; conv (layer,
batch, q|k|v channels, conv_size-1), oldest first.

Regenerate (outputs are committed):
    STATESCOPE_DEV=1 bash tools/setup.sh
    .venv/bin/python -m pip install flash-linear-attention==0.6.0 fla-core==0.6.0
    HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/make_golden_gdn.py
"""
import os
import sys
import warnings

import torch

warnings.filterwarnings("ignore")
import fla.layers.gated_deltanet as fla_gdn_layer  # noqa: E402
from fla.models import GatedDeltaNetConfig, GatedDeltaNetForCausalLM  # noqa: E402
from fla.modules import FusedRMSNormGated  # noqa: E402
from fla.ops.gated_delta_rule.gate import naive_gdn_gate  # noqa: E402
from fla.ops.gated_delta_rule.naive import naive_recurrent_gated_delta_rule  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_golden_fla as shared  # noqa: E402  (its ShortConvolution, RMSNorm, GatedMLP swaps apply here too)
from make_wild_checkpoints import fresh  # noqa: E402

SEED = 20261206


# ---- the swaps (see the docstring) ----
def l2norm(x):
    xf = x.float()
    return xf / torch.sqrt(xf.square().sum(-1, keepdim=True) + 1e-6)


def gdn_naive(q, k, v, g, beta, initial_state=None, output_final_state=False, use_qk_l2norm_in_kernel=False,
              use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False, state_v_first=False, use_gate_in_kernel=False,
              A_log=None, dt_bias=None, scale=None, cu_seqlens=None, **_):
    assert cu_seqlens is None and use_qk_l2norm_in_kernel and use_beta_sigmoid_in_kernel and use_gate_in_kernel
    H, HV = q.shape[2], v.shape[2]
    g = naive_gdn_gate(g, A_log, dt_bias)                     # [B, T, HV] float32
    beta = torch.sigmoid(beta.float()) * (2.0 if allow_neg_eigval else 1.0)
    q, k = l2norm(q), l2norm(k)
    if HV > H:
        q, k = q.repeat_interleave(HV // H, 2), k.repeat_interleave(HV // H, 2)
    h0 = initial_state
    if h0 is not None and state_v_first:
        h0 = h0.transpose(-1, -2)
    o, h = naive_recurrent_gated_delta_rule(q, k, v.float(), beta, g, scale=scale, initial_state=h0,
                                            output_final_state=True)
    if state_v_first:
        h = h.transpose(-1, -2).contiguous()
    return o.to(v.dtype), (h if output_final_state else None)


def gated_forward(self, x, g, residual=None, prenorm=False, residual_in_fp32=False):
    assert residual is None
    gf = g.float()
    act = torch.sigmoid(gf) if self.activation == "sigmoid" else gf * torch.sigmoid(gf)
    return (shared.rms(x, self.weight, self.eps) * act).to(x.dtype)


fla_gdn_layer.chunk_gated_delta_rule = gdn_naive
fla_gdn_layer.fused_recurrent_gated_delta_rule = gdn_naive
fla_gdn_layer.GatedDeltaNet._use_fused_qkv_conv = lambda self, **_: False
FusedRMSNormGated.forward = gated_forward


def build(**kw):
    cfg = GatedDeltaNetConfig(vocab_size=64, fuse_cross_entropy=False, fuse_swiglu=False, fuse_norm=False,
                              attn_mode="chunk", **kw)
    return shared.perturb(GatedDeltaNetForCausalLM(cfg).float().eval())


def gdn_dims(model):
    """(state heads = value heads, key dim, value dim, the q|k|v conv channels) of fla's layer."""
    a = model.model.layers[0].attn
    return a.num_v_heads, a.head_k_dim, a.head_v_dim, [a.key_dim, a.key_dim, a.value_dim]


SWAPPED = ("chunk/fused_recurrent_gated_delta_rule -> naive_recurrent_gated_delta_rule after naive_gdn_gate, "
           "sigmoid beta, l2norm; fused qkv conv off; ShortConvolution, RMSNorm, FusedRMSNormGated, GatedMLP "
           "forward -> torch formulas")


def main():
    torch.manual_seed(SEED)
    fixtures = [
        ("fla-gdn", dict(hidden_size=24, num_hidden_layers=2, num_heads=2, num_v_heads=4, head_dim=6, expand_v=1.5,
                         use_short_conv=True, conv_size=4, use_gate=True, intermediate_size=40,
                         tie_word_embeddings=False, norm_eps=1e-6)),
        ("fla-gdn-plain", dict(hidden_size=32, num_hidden_layers=2, num_heads=2, head_dim=8, expand_v=2.0,
                               use_short_conv=False, use_gate=False, allow_neg_eigval=True, hidden_ratio=2,
                               tie_word_embeddings=True, norm_eps=1e-5)),
        ("fla-gdn-sigmoid", dict(hidden_size=16, num_hidden_layers=1, num_heads=2, head_dim=4, expand_v=1.0,
                                 use_short_conv=True, conv_size=3, use_gate=True, output_gate_activation="sigmoid",
                                 intermediate_size=24, tie_word_embeddings=False)),
    ]
    for name, kw in fixtures:
        m = build(**kw)
        d = fresh(os.path.join(HERE, name))
        m.save_pretrained(d, safe_serialization=True)
        shared.run(m, d, dims=gdn_dims, seed=SEED, script="make_golden_gdn.py", swapped=SWAPPED, doc=__doc__,
                   title="Gated DeltaNet")
    return 0


if __name__ == "__main__":
    sys.exit(main())

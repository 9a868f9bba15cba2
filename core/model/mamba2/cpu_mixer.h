// cpu_mixer.h — the Mamba-2 mixer between its two projections as ONE autograd node on the CPU
// (float32): conv1d + SiLU, dt = softplus(dt_raw + dt_bias) (clamped), A = -exp(A_log), the scan
// with its skip term, gate + RMSNorm. The CPU fast path of Mamba2Mixer (ScanImpl::Fused on a CPU).
//
// Why one node: at laptop sizes the time went to the ops around the loops, not the loops — three
// narrows of the in-projection whose backward each zero-fills and adds a [b, L, R] tensor, contiguous
// copies of x, B and C, a dozen small elementwise ops for dt and A, each with its own backward. Here
// the in-projection's output is read in place (its z, xBC and dt columns at their row stride) and its
// gradient written in place, in one [b, L, R] tensor. The loops are cpu_loops.h and cpu_scan.h's.
// Exact against the ATen formulation in mamba2/model.cpp to float32 rounding, outputs, final states
// and every gradient (tests/test_cpu_mixer.cpp).
#pragma once
#include <torch/types.h>

namespace statescope {

struct CpuMixerDims {
  int64_t H = 0, P = 0, G = 1, N = 0;  // heads, headdim, groups of B/C, d_state
  int64_t norm_groups = 1;             // the gated norm's groups over d_inner = H P
  double norm_eps = 1e-5;
  bool clamp_dt = false;               // dt = clamp(softplus(.), dt_lo, dt_hi) when set
  double dt_lo = 0, dt_hi = 0;
  bool delta_norms = true;             // with the norms: also ||S_t - S_{t-1}|| (else delta_norm is unset)
};

struct CpuMixerOut {
  torch::Tensor out;         // [b, L, d_inner]: gate + norm output (before the out-projection)
  torch::Tensor ssm;         // [b, H, P, N] final SSM state
  torch::Tensor conv;        // [b, conv_dim, K-1] final conv state
  torch::Tensor state_norm;  // [b, L, H] ||S_t|| (when asked; no gradient)
  torch::Tensor delta_norm;  // [b, L, H] ||S_t - S_{t-1}|| (when asked; no gradient)
};

// zxbcdt [b, L, R] the in-projection's output, R = d_inner + conv_dim + H, columns [z | xBC | dt_raw],
// conv_dim = d_inner + 2 G N; conv_w [conv_dim, 1, K]; conv_b [conv_dim] or undefined; dt_bias,
// A_log, D [H]; norm_w [d_inner]; conv0 [b, conv_dim, K-1] and h0 [b, H, P, N] or undefined (zeros).
// All float32 on the CPU. Gradients flow to every tensor argument.
CpuMixerOut cpu_mixer_core(const torch::Tensor& zxbcdt, const torch::Tensor& conv_w, const torch::Tensor& conv_b,
                           const torch::Tensor& dt_bias, const torch::Tensor& A_log, const torch::Tensor& D,
                           const torch::Tensor& norm_w, const torch::Tensor& conv0, const torch::Tensor& h0,
                           const CpuMixerDims& dims, bool want_norms);

}  // namespace statescope

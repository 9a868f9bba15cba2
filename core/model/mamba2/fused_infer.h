// fused_infer.h — the no-grad inference kernels as tensor functions: the causal depthwise conv1d with
// its initial state and fused SiLU (kernels/conv1d.h), and the single-token SSM step for decoding
// (kernels/ssm_step.h). CUDA kernels on a GPU (when built), their CPU twins on the CPU (tests). No
// autograd: callers use them under NoGradGuard only (the model's ScanImpl::Fused does).
#pragma once
#include "core/model/mamba2/ssd_scan.h"

namespace statescope {

// xBC [b, L, C] (L >= 1), w [C, 1, K], bias [C] or undefined, state0 [b, C, K-1] or undefined (zeros)
// -> silu(conv) [b, L, C] float32; state1 <- the last K-1 inputs [b, C, K-1] float32.
torch::Tensor fused_conv1d_silu(const torch::Tensor& xBC, const torch::Tensor& w, const torch::Tensor& bias,
                                const torch::Tensor& state0, torch::Tensor& state1);

// One token: x [b, 1, H, P], dt [b, 1, H], A [H], B/C [b, 1, G, N], D [H], h0 [b, H, P, N] or
// undefined -> y [b, 1, H, P] INCLUDING the D x term, the new state, norms and delta norms [b, 1, H] when asked.
ScanResult fused_step(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                      const torch::Tensor& C, const torch::Tensor& D, const torch::Tensor& h0, bool want_norms);

}  // namespace statescope

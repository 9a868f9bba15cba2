// cpu_ops.h — the mixer's conv1d + SiLU and gated RMSNorm as plain loops on the CPU (float32), each
// one autograd node with a hand-written backward (loops in cpu_loops.h). Part of the CPU fast path
// (ScanImpl::Fused on a CPU); exact against the ATen formulation in mamba2/model.cpp to float32
// rounding (tests/test_cpu_ops.cpp).
#pragma once
#include <torch/types.h>

#include <utility>

namespace statescope {

// Causal depthwise conv over time from an initial conv state, then SiLU.
//   xBC   [b, L, C]  float32 CPU; the channel dim contiguous (a narrow of the in-projection is fine)
//   w     [C, 1, K]; bias [C] or undefined; conv0 [b, C, K-1] or undefined (zeros)
// -> {silu(conv) [b, L, C], final conv state [b, C, K-1] (the newest K-1 inputs)}.
// Gradients flow to xBC, w, bias, conv0 (from both outputs).
std::pair<torch::Tensor, torch::Tensor> cpu_conv1d_silu(const torch::Tensor& xBC, const torch::Tensor& w,
                                                        const torch::Tensor& bias, const torch::Tensor& conv0);

// Gate then RMSNorm per group: g = y * silu(z); out = g / sqrt(mean(g^2 over each of ng groups) + eps) * w.
//   y [b, L, D] float32 CPU; z [b, L, D] (last dim contiguous); w [D]; D divisible by ng.
// -> [b, L, D]. Gradients flow to y, z and w.
torch::Tensor cpu_gated_rms_norm(const torch::Tensor& y, const torch::Tensor& z, const torch::Tensor& w, int64_t ng,
                                 double eps);

}  // namespace statescope

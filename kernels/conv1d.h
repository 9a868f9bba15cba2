// conv1d.h — host entry for the CUDA causal depthwise conv1d with an initial conv state (plain C++,
// no LibTorch, no CUDA headers). CPU twin: core/twins/conv1d_ref.h; tests/test_kernels.cpp compares them.
//
// y[b, t, c] = act(bias[c] + sum_k w[c, k] * in[b, t + k, c]), where `in` is the K-1 state columns
// followed by x (in[b, j, c] = state0[b, c, j] for j < K-1, else x[b, j-(K-1), c]): exactly
// F::conv1d(cat(state0, x^T), w, bias, groups = C) as core/model/mamba2/model.cpp computes it, with SiLU
// fused when `silu`. The new state is the last K-1 columns of `in`.
#pragma once
#include <cstdint>
#include <string>

namespace statescope::kernels {

struct Conv1dArgs {
  const float* x = nullptr;       // [b, L, C] channels last
  const float* w = nullptr;       // [C, K]
  const float* bias = nullptr;    // [C] or null
  const float* state0 = nullptr;  // [b, C, K-1] previous inputs, oldest first; null = zeros
  float* y = nullptr;             // [b, L, C] out
  float* state1 = nullptr;        // [b, C, K-1] out, or null to skip
  int64_t b = 0, L = 0, C = 0, K = 4;
  bool silu = true;
};

// Device pointers; launches on `stream` (cudaStream_t or null). Returns "" or the failing call.
std::string conv1d_fwd_cuda(const Conv1dArgs& a, void* stream);

}  // namespace statescope::kernels

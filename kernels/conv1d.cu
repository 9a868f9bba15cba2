// conv1d.cu — causal depthwise conv1d with initial state, SiLU fused (CUDA C++17, no LibTorch).
#include <cuda_runtime.h>

#include <string>

#include "kernels/conv1d.h"

namespace statescope::kernels {
namespace {

// One thread per output (b, t, c); consecutive threads take consecutive channels (coalesced).
__global__ void conv1d_kernel(Conv1dArgs a) {
  const int64_t total = a.b * a.L * a.C, Km1 = a.K - 1;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = i % a.C, t = (i / a.C) % a.L, bi = i / (a.C * a.L);
    float acc = a.bias ? a.bias[c] : 0.0f;
    for (int64_t k = 0; k < a.K; ++k) {
      const int64_t j = t + k;  // index into [state | x]
      const float v = j < Km1 ? (a.state0 ? a.state0[(bi * a.C + c) * Km1 + j] : 0.0f)
                              : a.x[(bi * a.L + (j - Km1)) * a.C + c];
      acc += a.w[c * a.K + k] * v;
    }
    a.y[i] = a.silu ? acc / (1.0f + expf(-acc)) : acc;
  }
}

// state1[b, c, j] = in[b, L + j, c] for j < K-1.
__global__ void conv_state_kernel(Conv1dArgs a) {
  const int64_t Km1 = a.K - 1, total = a.b * a.C * Km1;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = i % Km1, c = (i / Km1) % a.C, bi = i / (Km1 * a.C);
    const int64_t src = a.L + j;
    a.state1[i] = src < Km1 ? (a.state0 ? a.state0[(bi * a.C + c) * Km1 + src] : 0.0f)
                            : a.x[(bi * a.L + (src - Km1)) * a.C + c];
  }
}

std::string check(cudaError_t e, const char* what) {
  return e == cudaSuccess ? std::string() : std::string(what) + ": " + cudaGetErrorString(e);
}

unsigned blocks_for(int64_t n, int threads) {
  const int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 65535 * 16 ? (b > 0 ? b : 1) : 65535 * 16);
}

}  // namespace

std::string conv1d_fwd_cuda(const Conv1dArgs& a, void* stream) {
  if (a.b <= 0 || a.L < 0 || a.C <= 0 || a.K < 1 || !a.x || !a.w || !a.y)
    return "conv1d_fwd_cuda: bad arguments (need b, C, K > 0, L >= 0, x, w, y)";
  constexpr int kThreads = 256;
  auto s = static_cast<cudaStream_t>(stream);
  if (a.L > 0) {
    conv1d_kernel<<<blocks_for(a.b * a.L * a.C, kThreads), kThreads, 0, s>>>(a);
    if (auto e = check(cudaGetLastError(), "conv1d_kernel launch"); !e.empty()) return e;
  }
  if (a.state1 && a.K > 1) {
    conv_state_kernel<<<blocks_for(a.b * a.C * (a.K - 1), kThreads), kThreads, 0, s>>>(a);
    if (auto e = check(cudaGetLastError(), "conv_state_kernel launch"); !e.empty()) return e;
  }
  return {};
}

}  // namespace statescope::kernels

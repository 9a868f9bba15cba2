// ssm_step.h — host entry for the CUDA single-token SSM step (generation, e.g. passkey decoding):
// h <- exp(dt A) h + dt x B^T;  y = h C + D x;  optionally ||h||_F per head. Plain C++, no LibTorch.
// CPU twin: core/twins/ssm_step_ref.h; tests/test_kernels.cpp compares them.
#pragma once
#include <cstdint>
#include <string>

namespace statescope::kernels {

struct SsmStepArgs {
  float* h = nullptr;          // [b, H, P, N] state, updated in place
  const float* x = nullptr;    // [b, H, P]
  const float* dt = nullptr;   // [b, H]  after softplus and any clamp
  const float* A = nullptr;    // [H]     negative
  const float* B = nullptr;    // [b, G, N]  head h reads group h / (H/G)
  const float* C = nullptr;    // [b, G, N]
  const float* D = nullptr;    // [H] skip connection, or null for none
  float* y = nullptr;          // [b, H, P] out
  float* norm = nullptr;       // [b, H] out ||h||_F after the step, or null
  float* delta = nullptr;      // [b, H] out ||h_new - h_old||_F, or null
  int64_t b = 0, H = 0, P = 0, G = 1, N = 0;
};

// Device pointers; launches on `stream` (cudaStream_t or null). Returns "" or the failing call.
std::string ssm_step_cuda(const SsmStepArgs& a, void* stream);

}  // namespace statescope::kernels

// mamba1/selective_loops.h — Mamba-1's selective scan on the CPU as plain loops over one channel at a
// time (no LibTorch). A channel c of one sequence is an independent SSM with an N-vector state:
//   a_t[n] = exp(dt_t A[n]);  h_t[n] = a_t[n] h_{t-1}[n] + dt_t x_t B_t[n];  y_t = h_t . C_t + D x_t.
// The autograd wrapper that owns the tensors is selective_scan.cpp. Built -O3 with an AVX2+FMA clone
// picked at load time on x86-64; sums over n run in eight lanes, so their order differs from a
// left-to-right sum by float32 rounding only.
#pragma once
#include <cstdint>

namespace statescope::cpu {

// One channel's inputs: x_t, dt_t at x[t], dt[t] (time contiguous); B_t, C_t rows of N at B + t N,
// C + t N (shared by every channel of the sequence); A [N] (this channel's, negative); D.
struct ChannelScan {
  const float* x = nullptr;
  const float* dt = nullptr;
  const float* B = nullptr;
  const float* C = nullptr;
  const float* A = nullptr;
  float D = 0.0f;
  int64_t L = 0, N = 0;
};

// Forward: h [N] holds the initial state on entry, the final state on return; y [L] receives the
// outputs (D x included). sq, dsq [L] (both null, or both set) receive ||h_t||^2 and ||h_t - h_{t-1}||^2.
void selective_forward(const ChannelScan& s, float* h, float* y, float* sq, float* dsq);

// Backward: from h0 [N] (the initial state), the output gradient dy [L] and the final state's
// gradient dhf [N] (null: zero). hist is scratch of (L + 2) N floats (the recomputed states and a sum). Writes
// dx [L], ddt [L] and dh0 [N]; adds into dB, dC rows [L, N] (summed over the channels a caller gives
// the same buffers), dA [N] and dD (float64).
void selective_backward(const ChannelScan& s, const float* h0, const float* dy, const float* dhf, float* hist,
                        float* dx, float* ddt, float* dh0, float* dB, float* dC, double* dA, double& dD);

}  // namespace statescope::cpu

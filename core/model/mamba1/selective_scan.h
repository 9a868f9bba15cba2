// mamba1/selective_scan.h — Mamba-1's selective scan, two ways: the sequential recurrence in ATen
// (the reference and the GPU path; any float dtype, autograd) and plain CPU loops with their own
// backward (the default CPU path; float32).
//
// Per channel c with state h[c, :] (N entries; every channel has its own decay per state entry):
//   h_t[c, n] = exp(dt_t[c] A[c, n]) h_{t-1}[c, n] + dt_t[c] x_t[c] B_t[n],   y_t[c] = h_t[c, :] . C_t + D[c] x_t[c]
// Shapes (b batch, L length, Di channels = d_inner, N d_state):
//   x  [b, L, Di]   dt [b, L, Di] (after softplus)   A [Di, N] (negative)   D [Di]
//   B  [b, L, N]    C  [b, L, N]                      h0 [b, Di, N] or undefined (zeros)
// Norms are per group of Di / groups consecutive channels (the per-head views' unit, state_layout.h).
#pragma once
#include <torch/types.h>

namespace statescope {

struct SelectiveScanResult {
  torch::Tensor y;            // [b, L, Di], D x included
  torch::Tensor final_state;  // [b, Di, N]
  torch::Tensor state_norm;   // [b, L, groups] ||h_t|| over each group's channels and N, or undefined
  torch::Tensor delta_norm;   // [b, L, groups] ||h_t - h_{t-1}|| (h_{-1} = initial state), with state_norm
};

// The recurrence token by token in ATen, in the inputs' dtype (float64 inputs give the reference).
// max_norm [groups] (optional): after every token each channel group's state is scaled down to at
// most its bound (the clip intervention, intervention.h); y reads the clipped state.
SelectiveScanResult selective_scan_sequential(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                                              const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& D,
                                              const torch::Tensor& h0, int64_t groups, bool want_norms,
                                              const torch::Tensor& max_norm = {});

// The CPU loops (selective_loops.h) as one autograd node; float32 (other float types are converted).
// Gradients flow to every input, h0 included; norms carry none. Parallel over (batch, channel).
SelectiveScanResult selective_scan_cpu(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                                       const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& D,
                                       const torch::Tensor& h0, int64_t groups, bool want_norms);

// Checks the shapes above; throws statescope::Error naming the offending argument.
void check_selective_shapes(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                            const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& D,
                            const torch::Tensor& h0, int64_t groups);

}  // namespace statescope

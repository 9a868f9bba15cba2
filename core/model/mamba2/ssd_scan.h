// ssd_scan.h — the Mamba-2 selective state-space scan, two ways: a plain sequential recurrence
// (the reference, the specification) and the chunked SSD algorithm (the fast exact path).
//
// Per head h with state S (P x N):  S_t = exp(dt_t A_h) S_{t-1} + dt_t x_t B_t^T,  y_t = S_t C_t.
// The D skip term, gating and norms are NOT here; see mamba2/model.cpp.
//
// Shapes (b batch, L length, H heads, P headdim, G groups, N d_state; H % G == 0, head h reads
// group h / (H/G)):
//   x  [b, L, H, P]     dt [b, L, H] (after softplus and any clamp)    A [H] (negative)
//   B  [b, L, G, N]     C  [b, L, G, N]                               h0 [b, H, P, N] or undefined
// Autograd flows through every input, h0 included.
#pragma once
#include <torch/types.h>

namespace statescope {

struct ScanResult {
  torch::Tensor y;            // [b, L, H, P]
  torch::Tensor final_state;  // [b, H, P, N], the state after the last token
  torch::Tensor state_norm;   // [b, L, H] Frobenius norm of S_t, or undefined if not requested
  torch::Tensor delta_norm;   // [b, L, H] ||S_t - S_{t-1}||_F (S_{-1} = initial state), with state_norm
};

// max_norm [H] (optional): after every token each head's state is scaled down to at most its bound
// (the clip intervention, intervention.h); y reads the clipped state.
ScanResult ssd_scan_sequential(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                               const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& h0,
                               bool want_norms, const torch::Tensor& max_norm = {});

// `chunk` is the chunk length Q (any L works: the discretised inputs are zero-padded to a multiple
// of Q, so padded steps have decay 1 and no input). Norms are computed without autograd, one block
// of positions at a time, so memory does not grow with L.
ScanResult ssd_scan_chunked(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                            const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& h0,
                            int64_t chunk, bool want_norms);

// Checks the shapes above; throws statescope::Error naming the offending argument.
void check_scan_shapes(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                       const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& h0);

}  // namespace statescope

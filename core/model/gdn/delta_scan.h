// gdn/delta_scan.h — the gated delta rule, per head with a state S [K, V] (key first):
//
//   S_t = exp(g_t) S_{t-1} + k_t u_t^T,   u_t = beta_t (v_t - exp(g_t) S_{t-1}^T k_t),   o_t = S_t^T q_t
//
// i.e. S_t = exp(g_t) (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T, with g_t <= 0 one log decay
// per head and token, k_t L2-normalised (so for beta in (0, 1] the transition is a contraction: the
// delta rule keeps the state bounded by itself), q arriving normalised and scaled. Two forms with
// autograd on any device: the sequential recurrence (the reference; in float64 the twin every fast
// path is tested against) and the chunked form (the WY form of fla's naive_chunk_gated_delta_rule:
// within a chunk the u_t solve one unit lower-triangular system (I + A) U = beta (V - exp(G) K S_0),
// A[t, s] = beta_t exp(G_t - G_s) k_t.k_s for s < t; chunks chained through their end states; every
// decay exp(G_t - G_s) <= 1, masked before exp, so nothing overflows).
#pragma once
#include <torch/types.h>

namespace statescope {

struct DeltaScanOutputs {
  torch::Tensor o;            // [b, L, H, V]
  torch::Tensor final_state;  // [b, H, K, V]
  torch::Tensor norms;        // [b, L, H] ||S_t||_F per head (when asked)
  torch::Tensor delta_norms;  // [b, L] ||S_t - S_{t-1}||_F over the heads (when asked)
};

// q, k [b, L, H, K]; v [b, L, H, V]; g, beta [b, L, H]; h0 [b, H, K, V] or undefined (zeros).
// Computes in at least float32 (float64 stays float64). max_norm [H] (defined): each head's state
// norm is clipped to it after every token (intervention.h).
DeltaScanOutputs delta_scan_sequential(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                       const torch::Tensor& g, const torch::Tensor& beta, const torch::Tensor& h0,
                                       bool norms = false, const torch::Tensor& max_norm = {});
DeltaScanOutputs delta_scan_chunked(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                    const torch::Tensor& g, const torch::Tensor& beta, const torch::Tensor& h0,
                                    int64_t chunk = 64, bool norms = false);

}  // namespace statescope

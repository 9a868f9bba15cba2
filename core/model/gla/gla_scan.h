// gla/gla_scan.h — the gated linear attention recurrence, per head with a state S [K, V] (key first):
//
//   S_t = diag(exp(g_t)) S_{t-1} + k_t v_t^T        o_t = S_t^T q_t
//
// with g_t <= 0 the per-key log decay (GLA: logsigmoid(gk) / 16). q arrives already scaled. Two forms
// with autograd on any device: the sequential recurrence (the reference; in float64 it is the twin
// every fast path is tested against) and the chunked form (within a chunk every pair s <= t at once,
// with decays exp(G_t - G_s) <= 1 from the chunk's cumulative log gates G, so nothing overflows;
// chunks chained through their end states). The per-position state norms come from either.
#pragma once
#include <torch/types.h>

namespace statescope {

struct GLAScanOutputs {
  torch::Tensor o;            // [b, L, H, V]
  torch::Tensor final_state;  // [b, H, K, V]
  torch::Tensor norms;        // [b, L, H] ||S_t||_F per head (when asked)
  torch::Tensor delta_norms;  // [b, L] ||S_t - S_{t-1}||_F over the heads (when asked)
};

// q, k [b, L, H, K]; v [b, L, H, V]; g [b, L, H, K] (<= 0); h0 [b, H, K, V] or undefined (zeros).
// Computes in at least float32 (float64 stays float64); o and the state in that dtype.
// max_norm [H] (defined): each head's state norm is clipped to it after every token (intervention.h).
GLAScanOutputs gla_scan_sequential(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                   const torch::Tensor& g, const torch::Tensor& h0, bool norms = false,
                                   const torch::Tensor& max_norm = {});
GLAScanOutputs gla_scan_chunked(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                const torch::Tensor& g, const torch::Tensor& h0, int64_t chunk = 64, bool norms = false);

}  // namespace statescope

// attention.h — a recurrent head written as attention. A Mamba-2 head's output without the D term is
//   y_t = sum_{s<=t} M[t, s] x_s + a_t (C_t . h_{-1}),
//   M[t, s] = (C_t . B_s) dt_s exp(sum_{s<r<=t} dt_r A),   a_t = exp(sum_{r<=t} dt_r A),
// so M says how much position t reads position s, and a_t how much of the initial state is left at t
// (its own column). Computed exactly from the model's own dt, A, B, C of one sequence (the scan's
// inputs as the forward computes them, mamba2/model.h). LibTorch.
#pragma once
#include <cstdint>
#include <vector>

#include "core/model/recurrent_lm.h"

namespace statescope {

struct EffectiveAttention {
  int64_t layer = 0, head = 0, length = 0;
  torch::Tensor M;     // [L, L] float64, zero above the diagonal
  torch::Tensor init;  // [L] float64: a_t, the weight the initial state keeps at t
  // Per distance d = t - s, the mean over t of M[t, t - d]'s magnitude ("how far back does it look"). [L]
  torch::Tensor by_distance;
};

// The largest sequence effective_attention takes (M is L x L doubles: 128 MiB at 4096).
inline constexpr int64_t kMaxAttentionLength = 4096;

// tokens [1, L] (L <= kMaxAttentionLength), `init` the initial state (nullptr: zeros). Throws Error
// for another architecture (names it), a layer or head out of range, or a longer sequence.
EffectiveAttention effective_attention(RecurrentLM& model, const torch::Tensor& tokens, int64_t layer, int64_t head,
                                       const ModelState* init = nullptr);

}  // namespace statescope

// effrem.h — Effective Remembrance (Buitrago Ruiz & Gu 2025):
//   EffRem_T(t) = TV(p(. | x[0:T]), p(. | x[t:T])) = 1/2 sum_v |p_v - p'_v|,
// the total variation between the next-token distributions after the full context of T tokens and
// after only its tokens from t on. 0 means tokens before t do not matter at all; near 1 means they
// change the prediction completely. Averaged over validation sequences, with standard errors.
//
// Cost: for each T, one forward of the full contexts and one of each truncation (t = 0 included, as
// a check that the same context gives TV 0), batched across sequences:
// forward_tokens = N * (T + sum over the grid of (T - t)), recorded in the result.
#pragma once
#include <functional>

#include "core/data/corpus.h"
#include "core/model/recurrent_lm.h"
#include "core/analyses/options.h"  // EffRemOptions
#include "core/base/results.h"

namespace statescope {

// Total variation between rows of two probability tables [N, V] -> [N] (float64).
torch::Tensor total_variation(const torch::Tensor& p, const torch::Tensor& q);

// Common t grid for contexts up to max_T: 0 plus `points` log- or linearly spaced values in [1, max_T-1].
std::vector<int64_t> effrem_grid(int64_t max_T, int64_t points, bool log_grid);

EffRemResult effective_remembrance(RecurrentLM& model, const std::vector<Document>& docs, const EffRemOptions& opt,
                                   const std::function<bool(int64_t, int64_t)>& progress = {});

}  // namespace statescope

// result.h — effective attention of one layer's heads on one sequence (attention.h): M[t, s], how
// much position t reads position s; what is left of the initial state at t; and per distance the
// mean |M| ("how far back does this head look?"). The same bytes for every run of an experiment, so
// a run after state passing shows beside the one before it. No LibTorch, no Qt.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace statescope {

struct AttentionResult {
  int64_t layer = 0, length = 0;    // L tokens
  std::vector<int64_t> heads;       // the heads shown
  std::vector<int32_t> tokens;      // [L] the sequence, in the model's ids
  std::vector<double> M;            // [heads, L, L], zero above the diagonal
  std::vector<double> init;         // [heads, L]
  std::vector<double> by_distance;  // [heads, L] mean |M[t, t-d]| over t, per distance d
};

// The mean distance a head reads from, weighted by |M| per distance: sum_d d w_d / sum_d w_d.
inline double mean_distance(const AttentionResult& a, size_t head) {
  double num = 0, den = 0;
  const size_t L = static_cast<size_t>(a.length);
  for (size_t d = 0; d < L; ++d) {
    const double w = a.by_distance[head * L + d] * static_cast<double>(L - d);  // mass, not the per-t mean
    num += static_cast<double>(d) * w, den += w;
  }
  return den > 0 ? num / den : 0.0;
}

}  // namespace statescope

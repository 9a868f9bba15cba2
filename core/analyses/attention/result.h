// result.h — effective attention of one layer's heads on one sequence (attention.h): M[t, s], how
// much position t reads position s; what is left of the initial state at t; and per distance the
// mean |M| ("how far back does this head look?"). The same bytes for every run of an experiment, so
// a run after state passing shows beside the one before it. No LibTorch, no Qt.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace statescope {

// The largest sequence effective_attention takes (M is L x L doubles: 128 MiB at 4096), and the
// largest attention_result takes, binning it: one bin per position below kAttentionExactBins, then
// kAttentionLogBins log-spaced bins to L, so M takes at most 1024 x 1024 per head whatever the length.
inline constexpr int64_t kMaxAttentionLength = 4096;
inline constexpr int64_t kMaxBinnedAttentionLength = int64_t{1} << 16;
inline constexpr int64_t kAttentionExactBins = 512, kAttentionLogBins = 512;

struct AttentionResult {
  int64_t layer = 0, length = 0;    // L tokens; layer: a hybrid's model layer
  // A hybrid's layer kind: "attention" (M is the softmax's own map, init 0: it keeps no state from before
  // the sequence) or the recurrent kind ("mamba2"); empty for a pure recurrent model.
  std::string layer_kind;
  std::vector<int64_t> heads;       // the heads shown
  std::vector<int32_t> tokens;      // [L] the sequence, in the model's ids
  // [B] the first position of each of M's B row and column bins: 0..L-1 (B = L) when M is exact;
  // fewer for a long sequence (attention.h: attention_bins), whose M then holds per cell the mean |M|
  // over its pairs s <= t.
  std::vector<int64_t> positions;
  std::vector<double> M;            // [heads, B, B], zero above the diagonal
  std::vector<double> init;         // [heads, B] (mean over each bin)
  std::vector<double> by_distance;  // [heads, L] mean |M[t, t-d]| over t, per distance d (exact)
  // (an empty `positions` means one bin per position)
  int64_t bins() const { return positions.empty() ? length : static_cast<int64_t>(positions.size()); }
  bool binned() const { return bins() < length; }
  // The bin holding position p.
  int64_t bin_of(int64_t p) const {
    if (positions.empty()) return p;
    int64_t k = 0;
    while (k + 1 < bins() && positions[static_cast<size_t>(k + 1)] <= p) ++k;
    return k;
  }
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

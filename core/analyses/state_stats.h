// state_stats.h — where do SSM states go past T? Histograms of state entries at chosen positions
// (some below T, some far beyond), per layer and head, their mean and std, the Gaussian fitted to
// states at position T-1 (what training saw; the fitted-noise distribution) for overlay, and the
// norm of the state change per token.
#pragma once
#include <functional>

#include "core/data/corpus.h"
#include "core/model/mamba2_model.h"
#include "core/base/results.h"

namespace statescope {

struct StateStatsOptions {
  int64_t T = 32;
  std::vector<int64_t> positions;  // empty: T/2, T-1, 2T, 8T, 32T, 64T-1 (those < length)
  std::vector<int64_t> layers;     // empty: all
  int64_t length = 0;              // positions scanned (default 64T)
  int64_t sequences = 16;
  int64_t bins = 101;
  double range = 0;                // histogram range [-range, range]; 0: the largest |entry| seen
  int64_t segment = 512;
};

StateStatsResult state_statistics(Mamba2LM& model, const std::vector<Document>& docs, const StateStatsOptions& opt);

}  // namespace statescope

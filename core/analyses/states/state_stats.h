// state_stats.h — where do SSM states go past T? Histograms of state entries at chosen positions
// (some below T, some far beyond), per layer and head, their mean and std, the Gaussian fitted to
// states at position T-1 (what training saw; the fitted-noise distribution) for overlay, and the
// norm of the state change per token.
#pragma once
#include <functional>

#include "core/data/corpus.h"
#include "core/model/recurrent_lm.h"
#include "core/analyses/options.h"  // StateStatsOptions
#include "core/base/results.h"

namespace statescope {

StateStatsResult state_statistics(RecurrentLM& model, const std::vector<Document>& docs, const StateStatsOptions& opt);

}  // namespace statescope

// record.h — state statistics' record: the run's state_stats/ group, its `inspect` lines and report
// section. No LibTorch, no Qt.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include "core/analyses/options.h"
#include "core/store/analysis_io.h"

namespace statescope {
// state_stats/{position, layer, head, bin_edges, histogram [layer, position, head, bin], mean, std
// [layer, position, head], fitted_mean, fitted_std [layer, head], delta_position, delta_norm
// [n_layer, position]}; attributes T, sequences.
STATESCOPE_ANALYSIS_RECORD(state_stats, StateStatsResult)
// The spec's "analyses": {"states": {...}} section read with every default; throws Error naming
// `src` and the field ("analyses.states.<field>").
StateStatsOptions states_options(const nlohmann::json& section, const std::string& src);
}  // namespace statescope

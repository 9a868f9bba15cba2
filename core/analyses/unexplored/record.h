// record.h — the unexplored-states detector's record: the run's unexplored/ group, its `inspect`
// lines and report section. No LibTorch, no Qt.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include "core/analyses/options.h"
#include "core/store/analysis_io.h"

namespace statescope {
// unexplored/{position, outside [position, layer, head], outside_mean, outside_seq [sequence,
// position], excess, heldout_outside, threshold [layer, head], excess_rho [3], quantile [1]}.
STATESCOPE_ANALYSIS_RECORD(unexplored, UnexploredResult)
// The spec's "analyses": {"unexplored": {...}} section read with every default; throws Error naming
// `src` and the field ("analyses.unexplored.<field>").
UnexploredOptions unexplored_options(const nlohmann::json& section, const std::string& src);
}  // namespace statescope

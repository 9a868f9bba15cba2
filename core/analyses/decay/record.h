// record.h — decay timescales' record: the run's decay/ group, its `inspect` lines, report section
// and spec section ("analyses": {"decay": {...}}). No LibTorch, no Qt.
#pragma once
#include <nlohmann/json.hpp>

#include "core/store/analysis_io.h"

namespace statescope {
// decay/{bin_edges [bins + 1], near, far [layer, group, bins], median_near, median_far [layer,
// group]}; attributes T, length, sequences, head_axis.
STATESCOPE_ANALYSIS_RECORD(decay, DecayResult)
// The spec section checked (errors name `src` and the field), with every default filled in:
// {"length": 0 (16T), "sequences": 8, "bins": 160, "segment": 1024}.
nlohmann::json options_decay(const nlohmann::json& section, const std::string& src);
}  // namespace statescope

// record.h — effective attention's record: the run's attention/ group, its `inspect` lines, report
// section and spec section ("analyses": {"attention": {...}}). No LibTorch, no Qt.
#pragma once
#include <nlohmann/json.hpp>

#include "core/store/analysis_io.h"

namespace statescope {
// attention/{tokens [L], heads [h], M [h, L, L], init [h, L], by_distance [h, L]}; attribute layer.
STATESCOPE_ANALYSIS_RECORD(attention, AttentionResult)
// The spec section checked (errors name `src` and the field), defaults filled in:
// {"layer": 0, "length": 256 (at most 4096), "head": -1 (every head)}.
nlohmann::json options_attention(const nlohmann::json& section, const std::string& src);
}  // namespace statescope

// record.h — effective attention's record: the run's attention/ group, its `inspect` lines, report
// section and spec section ("analyses": {"attention": {...}}). No LibTorch, no Qt.
#pragma once
#include <nlohmann/json.hpp>

#include "core/store/analysis_io.h"

namespace statescope {
// attention/{tokens [L], heads [h], positions [B], M [h, B, B], init [h, B], by_distance [h, L]};
// attributes layer, length, binned (B = L unless the sequence is longer than 4096: result.h).
STATESCOPE_ANALYSIS_RECORD(attention, AttentionResult)
// The spec section checked (errors name `src` and the field), defaults filled in:
// {"layer": 0, "length": 256 (at most 65536; past 4096 binned), "head": -1 (every head)}.
nlohmann::json options_attention(const nlohmann::json& section, const std::string& src);
}  // namespace statescope

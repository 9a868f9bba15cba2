// record.h — Effective Remembrance's record: the run's effrem/ group, its `inspect` lines and report
// section. No LibTorch, no Qt.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include "core/analyses/options.h"
#include "core/store/analysis_io.h"

namespace statescope {
// effrem/{T, t, value [T, t], stderr [T, t]}; attributes sequences, forward_tokens.
STATESCOPE_ANALYSIS_RECORD(effrem, EffRemResult)
// The spec's "analyses": {"effrem": {...}} section read with every default; throws Error naming
// `src` and the field ("analyses.effrem.<field>").
EffRemOptions effrem_options(const nlohmann::json& section, const std::string& src);
}  // namespace statescope

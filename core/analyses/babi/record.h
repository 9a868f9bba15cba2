// record.h — bAbI-style questions' record: the run's babi/ group, its `inspect` lines and report section. No
// LibTorch, no Qt.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include "core/analyses/options.h"
#include "core/store/analysis_io.h"

namespace statescope {
// babi/{length, accuracy, choice_accuracy, last_mentioned_accuracy, mean_distance}; attributes samples, candidates.
STATESCOPE_ANALYSIS_RECORD(babi, BabiResult)
// The spec's "analyses": {"babi": {...}} section read with every default; throws Error naming
// `src` and the field ("analyses.babi.<field>").
BabiOptions babi_options(const nlohmann::json& section, const std::string& src);
}  // namespace statescope

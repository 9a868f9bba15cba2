// record.h — Synthetic copying's record: the run's copying/ group, its `inspect` lines and report section. No
// LibTorch, no Qt.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include "core/analyses/options.h"
#include "core/store/analysis_io.h"

namespace statescope {
// copying/{length, exact, token_accuracy, exact_passed, token_accuracy_passed}; attributes L, alphabet, T, samples, conv_passed.
STATESCOPE_ANALYSIS_RECORD(copying, CopyResult)
// The spec's "analyses": {"copying": {...}} section read with every default; throws Error naming
// `src` and the field ("analyses.copying.<field>").
CopyingOptions copying_options(const nlohmann::json& section, const std::string& src);
}  // namespace statescope

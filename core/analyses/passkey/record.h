// record.h — Passkey retrieval's record: the run's passkey/ group, its `inspect` lines and report section. No
// LibTorch, no Qt.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include "core/analyses/options.h"
#include "core/store/analysis_io.h"

namespace statescope {
// passkey/{length, depth, accuracy [length, depth], digit_accuracy [length, depth]}; attribute samples.
STATESCOPE_ANALYSIS_RECORD(passkey, PasskeyResult)
// The spec's "analyses": {"passkey": {...}} section read with every default; throws Error naming
// `src` and the field ("analyses.passkey.<field>").
PasskeyOptions passkey_options(const nlohmann::json& section, const std::string& src);
}  // namespace statescope

// record.h — the toy analysis's record: toy/{position, entropy}; attribute sequences.
#pragma once
#include <nlohmann/json.hpp>

#include "core/store/analysis_io.h"

namespace statescope {
STATESCOPE_ANALYSIS_RECORD(toy, ToyResult)
nlohmann::json options_toy(const nlohmann::json& section, const std::string& src);
}  // namespace statescope

// record.h — Synthetic copying's record: the run's copying/ group, its `inspect` lines and report section. No
// LibTorch, no Qt.
#pragma once
#include "core/store/analysis_io.h"

namespace statescope {
// copying/{length, exact, token_accuracy, exact_passed, token_accuracy_passed}; attributes L, alphabet, T, samples, conv_passed.
STATESCOPE_ANALYSIS_RECORD(copying, CopyResult)
}  // namespace statescope

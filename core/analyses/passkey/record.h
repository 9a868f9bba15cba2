// record.h — Passkey retrieval's record: the run's passkey/ group, its `inspect` lines and report section. No
// LibTorch, no Qt.
#pragma once
#include "core/store/analysis_io.h"

namespace statescope {
// passkey/{length, depth, accuracy [length, depth], digit_accuracy [length, depth]}; attribute samples.
STATESCOPE_ANALYSIS_RECORD(passkey, PasskeyResult)
}  // namespace statescope

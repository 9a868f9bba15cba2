// record.h — Effective Remembrance's record: the run's effrem/ group, its `inspect` lines and report
// section. No LibTorch, no Qt.
#pragma once
#include "core/store/analysis_io.h"

namespace statescope {
// effrem/{T, t, value [T, t], stderr [T, t]}; attributes sequences, forward_tokens.
STATESCOPE_ANALYSIS_RECORD(effrem, EffRemResult)
}  // namespace statescope

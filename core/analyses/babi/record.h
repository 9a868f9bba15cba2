// record.h — bAbI-style questions' record: the run's babi/ group, its `inspect` lines and report section. No
// LibTorch, no Qt.
#pragma once
#include "core/store/analysis_io.h"

namespace statescope {
// babi/{length, accuracy, choice_accuracy, last_mentioned_accuracy, mean_distance}; attributes samples, candidates.
STATESCOPE_ANALYSIS_RECORD(babi, BabiResult)
}  // namespace statescope

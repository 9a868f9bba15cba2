// run_results.h — what one run measured, as the store reads it and every consumer (inspect, the
// report, the app's views) sees it: its training steps and each registered analysis's result. It
// lives with the analysis registry (analysis_record.h), not in base/: the ground layer (base/results.h:
// the plain result structs several layers share) knows no analysis. No LibTorch, no Qt.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/analyses/list.h"  // each registered analysis's key and result type
#include "core/base/results.h"

namespace statescope {

// A sweep's run: its group (the run name without the seed) and its swept values, from the run's spec
// (run.sweep_group, run.sweep_cell); empty when the run is not a sweep's.
struct SweepCell {
  std::string group;
  std::vector<std::pair<std::string, double>> values;
};

// What one run measured: its training steps and each registered analysis's result, when it has one
// (analysis_record.h lists the analyses; run_record.h reads them from a file). A new analysis's slot
// comes from its line in core/analyses/list.h.
struct RunResults {
  std::vector<StepInfo> train;
  std::optional<EvalResult> eval;  // ppl/ + state_norm/
  // One slot per listed analysis, named by its key (its group in the file: the record's `group`).
#define STATESCOPE_SLOT(key, Result) std::optional<Result> key;
  STATESCOPE_ANALYSES(STATESCOPE_SLOT)
#undef STATESCOPE_SLOT
  SweepCell sweep;
};

}  // namespace statescope

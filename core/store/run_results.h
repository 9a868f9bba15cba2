// run_results.h — what one run measured, as the store reads it and every consumer (inspect, the
// report, the app's views) sees it: its training steps and each registered analysis's result. It
// lives with the analysis registry (analysis_record.h), not in base/: the ground layer (base/results.h:
// the plain result structs several layers share) knows no analysis. No LibTorch, no Qt.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/analyses/attention/result.h"  // each registered analysis's result type
#include "core/analyses/decay/result.h"
#include "core/base/results.h"

namespace statescope {

// A sweep's run: its group (the run name without the seed) and its swept values, from the run's spec
// (run.sweep_group, run.sweep_cell); empty when the run is not a sweep's.
struct SweepCell {
  std::string group;
  std::vector<std::pair<std::string, double>> values;
};

// What one run measured: its training steps and each registered analysis's result, when it has one
// (analysis_record.h lists the analyses; run_record.h reads them from a file). A new analysis adds
// its slot here and its descriptor to the registry.
struct RunResults {
  std::vector<StepInfo> train;
  std::optional<EvalResult> eval;             // ppl/ + state_norm/
  std::optional<EffRemResult> effrem;         // effrem/
  std::optional<StateStatsResult> states;     // state_stats/
  std::optional<UnexploredResult> unexplored; // unexplored/
  std::optional<PasskeyResult> passkey;       // passkey/
  std::optional<CopyResult> copying;          // copying/
  std::optional<BabiResult> babi;             // babi/
  std::optional<DecayResult> decay;           // decay/
  std::optional<AttentionResult> attention;   // attention/
  SweepCell sweep;
};

}  // namespace statescope

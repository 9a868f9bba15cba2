// analysis_steps.h — how an experiment run computes each analysis of core/analyses/list.h: one step
// per analysis, run_<key> in its folder's step.cpp, found by key. A step reads its spec section (the
// JSON its record's `options` returned, analysis_record.h), computes on the run's model and writes
// its group into the run. LibTorch inside only.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/analyses/list.h"

namespace statescope {

class RecurrentLM;
class ExperimentFile;
struct AnalysisContext;

using AnalysisStepFn = void (*)(RecurrentLM& model, const nlohmann::json& options, const AnalysisContext& ctx,
                                ExperimentFile& file, const std::string& run);

#define STATESCOPE_DECLARE_STEP(key, Result)                                                                  \
  void run_##key(RecurrentLM& model, const nlohmann::json& options, const AnalysisContext& ctx, ExperimentFile& file, \
                 const std::string& run);
STATESCOPE_ANALYSES(STATESCOPE_DECLARE_STEP)
#undef STATESCOPE_DECLARE_STEP

struct AnalysisStep {
  std::string key;  // the analysis's key (analysis_record.h)
  AnalysisStepFn run;
};

// Every step, in list.h's order (the order a run computes them).
const std::vector<AnalysisStep>& analysis_steps();
const AnalysisStep* find_analysis_step(const std::string& key);

}  // namespace statescope

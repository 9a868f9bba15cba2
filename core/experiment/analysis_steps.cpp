// analysis_steps.cpp — the experiment steps (analysis_steps.h), from core/analyses/list.h.
#include "core/experiment/analysis_steps.h"

#include "core/base/find_key.h"

namespace statescope {

const std::vector<AnalysisStep>& analysis_steps() {
#define STATESCOPE_STEP(key, Result) AnalysisStep{#key, run_##key},
  static const std::vector<AnalysisStep> all{STATESCOPE_ANALYSES(STATESCOPE_STEP)};
#undef STATESCOPE_STEP
  return all;
}

const AnalysisStep* find_analysis_step(const std::string& key) { return find_key(analysis_steps(), key); }

}  // namespace statescope

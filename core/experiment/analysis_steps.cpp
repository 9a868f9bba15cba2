// analysis_steps.cpp — the experiment steps of registered analyses (analysis_steps.h): a line each.
#include "core/experiment/analysis_steps.h"

#include "core/analyses/attention/step.h"
#include "core/analyses/decay/step.h"

namespace statescope {

const std::vector<AnalysisStep>& analysis_steps() {
  static const std::vector<AnalysisStep> all{
      {"decay", run_decay},
      {"attention", run_attention},
  };
  return all;
}

const AnalysisStep* find_analysis_step(const std::string& key) {
  for (const auto& s : analysis_steps())
    if (s.key == key) return &s;
  return nullptr;
}

}  // namespace statescope

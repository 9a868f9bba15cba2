// step.cpp — state distributions as a step of an experiment run (core/experiment/analysis_steps.h),
// at the run's T, on the validation split.
#include <torch/torch.h>

#include "core/experiment/analyses.h"
#include "core/experiment/analysis_steps.h"
#include "core/analyses/states/record.h"
#include "core/analyses/states/state_stats.h"

namespace statescope {

void run_states(RecurrentLM& model, const nlohmann::json& section, const AnalysisContext& ctx, ExperimentFile& file,
                const std::string& run) {
  StateStatsOptions o = states_options(section, "spec");
  o.T = ctx.T;
  write_state_stats(file, run, state_statistics(model, *ctx.validation, o));
}

}  // namespace statescope

// step.cpp — Effective Remembrance as a step of an experiment run (core/experiment/analysis_steps.h):
// the section's context lengths, or T, 2T, ..., 64T of the run's T; the validation split.
#include <torch/torch.h>

#include "core/experiment/analyses.h"
#include "core/experiment/analysis_steps.h"
#include "core/analyses/effrem/effrem.h"
#include "core/analyses/effrem/record.h"

namespace statescope {

void run_effrem(RecurrentLM& model, const nlohmann::json& section, const AnalysisContext& ctx, ExperimentFile& file,
                const std::string& run) {
  EffRemOptions o = effrem_options(section, "spec");
  if (o.Ts.empty()) o.Ts = default_effrem_contexts(ctx.T);
  auto r = effective_remembrance(model, *ctx.validation, o, [&](int64_t d, int64_t t) {
    analysis_tick(ctx, "effrem", d, t);
    return true;
  });
  write_effrem(file, run, r);
}

}  // namespace statescope

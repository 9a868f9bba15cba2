// step.cpp — copying as a step of an experiment run (core/experiment/analysis_steps.h): a fresh
// model trained with the run's initial-state policy (the baseline: zero), its steps in
// run/copying/train; held-out prose is one of the foreign starting states. A training-free run (the
// model as loaded with an intervention) has no copying: it trains a fresh model.
#include <torch/torch.h>

#include "core/experiment/analyses.h"
#include "core/experiment/analysis_steps.h"
#include "core/analyses/copying/copying.h"
#include "core/analyses/copying/record.h"
#include "core/base/error.h"

namespace statescope {

void run_copying(RecurrentLM&, const nlohmann::json& section, const AnalysisContext& ctx, ExperimentFile& file,
                 const std::string& run) {
  if (ctx.training_free) return;
  const CopyingOptions c = copying_options(section, "spec");
  auto o = c.options;
  o.seed = ctx.seed;
  auto r = run_copying(o, ctx.policy, c.train, [&](const StepInfo& s) {
    file.append_train(run + "/copying", s);
    return !ctx.progress || ctx.progress("copying", s.step, s.steps, s.loss);
  }, ctx.compute, ctx.validation);
  if (r.train.status != "finished") throw Error("copying " + r.train.status + ": " + r.train.message);
  write_copying(file, run, r.result);
}

}  // namespace statescope

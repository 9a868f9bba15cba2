// analyses.cpp — run each analysis of the spec into the run's groups, by its step.
#include "core/experiment/analyses.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "core/base/constants.h"
#include "core/base/error.h"
#include "core/experiment/analysis_steps.h"
#include "core/model/checkpoint.h"
#include "core/train/trainer.h"

namespace statescope {

void analysis_tick(const AnalysisContext& ctx, const std::string& phase, int64_t done, int64_t total, double loss) {
  if (ctx.progress && !ctx.progress(phase, done, total, loss)) throw Error(phase + " cancelled");
}

RecurrentLM finetuned_copy(RecurrentLM& model, const std::vector<Document>& docs, const TaskFinetune& ft,
                           const AnalysisContext& ctx, ExperimentFile& file, const std::string& group,
                           const std::string& phase) {
  RecurrentLM tuned = copy_model(model);
  TrainOptions t = ft.train;
  t.seed = ctx.seed;
  t.freeze_A_log = ctx.freeze_A_log;
  auto policy = make_policy(ctx.policy, SeedStreams::task_policy(ctx.seed));
  auto r = train(tuned, docs, *policy, t, [&](const StepInfo& s) {
    file.append_train(group, s);
    return !ctx.progress || ctx.progress(phase, s.step, s.steps, s.loss);
  });
  if (r.status != "finished") throw Error(phase + " " + r.status + (r.message.empty() ? "" : ": " + r.message));
  if (ctx.finetuned) ctx.finetuned(tuned);
  return tuned;
}

void run_analyses(RecurrentLM& model, const AnalysesSpec& spec, const AnalysisContext& ctx, ExperimentFile& file,
                  const std::string& run) {
  for (const auto& [key, section] : spec.sections)
    if (!find_analysis_step(key)) throw Error("analysis '" + key + "' has no experiment step (core/analyses/list.h)");
  for (const auto& step : analysis_steps()) {
    const auto it = spec.sections.find(step.key);
    if (it == spec.sections.end()) continue;
    analysis_tick(ctx, step.key, 0, 1);
    step.run(model, nlohmann::json::parse(it->second), ctx, file, run);
  }
}

}  // namespace statescope

// step.cpp — the unexplored-states detector as a step of an experiment run
// (core/experiment/analysis_steps.h): the evaluation's sequences and length, the post-training's
// steps and batch replayed unless the section gives them; the baseline met zero-state windows only,
// a policy run its policy's states (those recorded in its post-training when there were any).
#include <torch/torch.h>

#include "core/experiment/analyses.h"
#include "core/experiment/analysis_steps.h"
#include "core/analyses/unexplored/record.h"
#include "core/analyses/unexplored/unexplored.h"
#include "core/base/constants.h"
#include "core/base/error.h"

namespace statescope {

void run_unexplored(RecurrentLM& model, const nlohmann::json& section, const AnalysisContext& ctx, ExperimentFile& file,
                    const std::string& run) {
  UnexploredOptions o = unexplored_options(section, "spec");
  o.T = ctx.T;
  o.length = ctx.eval_length > 0 ? ctx.eval_length : default_eval_length(ctx.T);
  o.sequences = ctx.eval_sequences;
  if (o.train_steps == 0) o.train_steps = ctx.posttrain_steps > 0 ? ctx.posttrain_steps : 200;
  if (o.train_batch == 0) o.train_batch = ctx.posttrain_batch > 0 ? ctx.posttrain_batch : 16;
  if (!ctx.train) throw Error("unexplored states: no training text");
  const PolicySpec ps = ctx.baseline ? PolicySpec{} : ctx.policy;
  write_unexplored(file, run,
                   unexplored_states(model, *ctx.train, *ctx.validation, ps, o, SeedStreams::envelope(ctx.seed), ctx.eval,
                                     [&](int64_t d, int64_t t) {
                                       analysis_tick(ctx, "unexplored", d, t);
                                       return true;
                                     },
                                     ctx.baseline ? nullptr : ctx.recorded_states,
                                     ctx.common_envelopes ? ctx.common_envelopes(o) : nullptr));
}

}  // namespace statescope

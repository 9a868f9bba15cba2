// step.cpp — decay timescales as a step of an experiment run (core/experiment/analysis_steps.h):
// the spec section's options (options_decay's defaults), the evaluation's T, the run's seed-free
// sequences (the same bytes for every run).
#include <torch/torch.h>

#include "core/experiment/analysis_steps.h"
#include "core/analyses/decay/decay.h"
#include "core/analyses/decay/record.h"
#include "core/experiment/analyses.h"

namespace statescope {

void run_decay(RecurrentLM& model, const nlohmann::json& opt, const AnalysisContext& ctx, ExperimentFile& file,
               const std::string& run) {
  DecayOptions o;
  o.T = ctx.T;
  o.length = opt.at("length").get<int64_t>();
  o.sequences = opt.at("sequences").get<int64_t>();
  o.bins = opt.at("bins").get<int64_t>();
  o.segment = opt.at("segment").get<int64_t>();
  write_decay(file, run, decay_timescales(model, *ctx.validation, o, [&](int64_t d, int64_t t) {
                return !ctx.progress || ctx.progress("decay", d, t, 0);
              }));
}

}  // namespace statescope

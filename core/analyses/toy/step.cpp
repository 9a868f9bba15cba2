// step.cpp — the toy analysis as a step of an experiment run.
#include <torch/torch.h>

#include "core/analyses/toy/record.h"
#include "core/analyses/toy/toy.h"
#include "core/experiment/analyses.h"
#include "core/experiment/analysis_steps.h"

namespace statescope {

void run_toy(RecurrentLM& model, const nlohmann::json& opt, const AnalysisContext& ctx, ExperimentFile& file,
             const std::string& run) {
  write_toy(file, run, toy_entropy(model, *ctx.validation, opt.at("length").get<int64_t>(), 2));
}

}  // namespace statescope

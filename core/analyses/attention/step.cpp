// step.cpp — effective attention as a step of an experiment run: the first `length` tokens of the
// validation split (the same bytes for every run), every head of the chosen layer (or one).
#include <torch/torch.h>

#include "core/analyses/attention/attention.h"
#include "core/analyses/attention/record.h"
#include "core/experiment/analysis_steps.h"
#include "core/base/error.h"
#include "core/experiment/analyses.h"
#include "core/model/intervention.h"

namespace statescope {

void run_attention(RecurrentLM& model, const nlohmann::json& opt, const AnalysisContext& ctx, ExperimentFile& file,
                   const std::string& run) {
  // The clip intervention has no matrix form (attention.h): its runs carry no attention group.
  if (model->intervention && model->intervention->kind == "clip") return;
  const auto tokens = leading_tokens(*ctx.validation, opt.at("length").get<int64_t>());
  if (tokens.empty()) throw Error("attention: the validation split is empty");
  write_attention(file, run, attention_result(model, tokens, opt.at("layer").get<int64_t>(), opt.at("head").get<int64_t>(),
                                              [&](int64_t d, int64_t t) { return !ctx.progress || ctx.progress("attention", d, t, 0); }));
}

}  // namespace statescope

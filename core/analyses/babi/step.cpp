// step.cpp — bAbI-style questions as a step of an experiment run (core/experiment/analysis_steps.h):
// the questions' prose from the validation split; with "finetune", a policy run is measured on a
// copy of its model fine-tuned on questions over training prose with its own policy (the baseline
// as loaded). Questions seeded as the CLI verb's (task_prompts).
#include <torch/torch.h>

#include "core/experiment/analyses.h"
#include "core/experiment/analysis_steps.h"
#include "core/analyses/babi/babi.h"
#include "core/analyses/babi/record.h"
#include "core/analyses/task_docs.h"
#include "core/base/constants.h"
#include "core/base/error.h"

namespace statescope {

void run_babi(RecurrentLM& model, const nlohmann::json& section, const AnalysisContext& ctx, ExperimentFile& file,
              const std::string& run) {
  const BabiOptions o = babi_options(section, "spec");
  RecurrentLM tuned{nullptr};
  if (o.finetune && !ctx.baseline) {
    const auto& ft = *o.finetune;
    if (!ctx.train) throw Error("babi fine-tune: no training prose");
    tuned = finetuned_copy(model,
                           babi_training_docs(ft.examples, ft.train.T, examples_per_doc(ctx.policy),
                                              prose_of(*ctx.train, size_t{16} << 20, ctx.tokenizer), o.facts,
                                              SeedStreams::task_examples(ctx.seed), ctx.tokenizer),
                           ft, ctx, file, run + "/babi", "bAbI fine-tune");
  }
  analysis_tick(ctx, "babi", 0, 1);
  write_babi(file, run, evaluate_babi(tuned ? tuned : model, o.lengths, prose_of(*ctx.validation, size_t{16} << 20, ctx.tokenizer),
                                      o.facts, o.samples, SeedStreams::task_prompts(ctx.seed), ctx.tokenizer));
}

}  // namespace statescope

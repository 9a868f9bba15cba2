// step.cpp — the passkey grid as a step of an experiment run (core/experiment/analysis_steps.h):
// lengths 4T .. 64T (at least 128) unless the section gives them; with "finetune", a policy run is
// measured on a copy of its model fine-tuned on passkey examples with its own policy (the baseline
// as loaded).
#include <torch/torch.h>

#include "core/experiment/analyses.h"
#include "core/experiment/analysis_steps.h"
#include "core/analyses/passkey/passkey.h"
#include "core/analyses/passkey/record.h"
#include "core/analyses/task_docs.h"
#include "core/base/constants.h"

namespace statescope {

void run_passkey(RecurrentLM& model, const nlohmann::json& section, const AnalysisContext& ctx, ExperimentFile& file,
                 const std::string& run) {
  const PasskeyOptions o = passkey_options(section, "spec");
  auto lengths = o.lengths;
  if (lengths.empty())
    for (int64_t m : {4, 8, 16, 32, 64}) lengths.push_back(std::max<int64_t>(128, m * ctx.T));
  RecurrentLM tuned{nullptr};
  if (o.finetune && !ctx.baseline) {
    const auto& ft = *o.finetune;
    tuned = finetuned_copy(model,
                           passkey_training_docs(ft.examples, ft.train.T, examples_per_doc(ctx.policy),
                                                 SeedStreams::task_examples(ctx.seed), ctx.tokenizer),
                           ft, ctx, file, run + "/passkey", "passkey fine-tune");
  }
  analysis_tick(ctx, "passkey", 0, 1);
  write_passkey(file, run, evaluate_passkey(tuned ? tuned : model, lengths, o.depths, o.samples,
                                            SeedStreams::task_prompts(ctx.seed), ctx.tokenizer));
}

}  // namespace statescope

// analyses.h — runs the analyses of a spec's "analyses" section (AnalysesSpec, spec.h) on a run's
// model, each by its experiment step (analysis_steps.h) in core/analyses/list.h's order, and writes
// each into the run's groups; what every step is given (AnalysisContext) and the helpers steps share.
#pragma once
#include <functional>
#include <string>

#include "core/analyses/eval/evaluate.h"
#include "core/analyses/options.h"
#include "core/analyses/unexplored/unexplored.h"  // StateEnvelope
#include "core/compute/runtime.h"
#include "core/data/tokenizer.h"
#include "core/experiment/spec.h"  // AnalysesSpec
#include "core/store/experiment_store.h"

namespace statescope {

struct AnalysisContext {
  const std::vector<Document>* validation = nullptr;
  const std::vector<Document>* train = nullptr;  // bAbI fine-tuning's prose
  int64_t T = 0;             // the model's training context
  uint64_t seed = 0;
  bool baseline = false;     // the model as loaded: no task fine-tuning
  bool freeze_A_log = false; // task fine-tuning keeps A fixed (the model's record)
  PolicySpec policy;         // the run's policy (copying and task fine-tuning train with it)
  const Tokenizer* tokenizer = nullptr;  // the model's (passkey and bAbI prompts); null: bytes
  Compute compute;           // the run's (copying trains its fresh model with it)
  // (phase, done, total, loss) -> false cancels (throws Error "cancelled").
  std::function<bool(const std::string&, int64_t, int64_t, double)> progress;
  const EvalResult* eval = nullptr;  // the run's evaluation (the unexplored-states detector correlates with it)
  int64_t posttrain_steps = 200, posttrain_batch = 16;  // replayed by the detector unless its spec says
  int64_t eval_length = 0, eval_sequences = 32;         // the evaluation's sequences, scored by the detector
  const std::vector<torch::Tensor>* recorded_states = nullptr;  // states met in this run's post-training
  // The detector's common yardstick for these knobs (zero_state_envelopes of the loaded model, the
  // experiment's one per setting); empty: each run's own envelope only.
  std::function<const std::vector<StateEnvelope>*(const UnexploredOptions&)> common_envelopes = nullptr;
  bool training_free = false;  // the model as loaded with an intervention (copying, which trains a
                               // fresh model, does not apply and is skipped)
  // Called with each task-fine-tuned copy when its training has finished (the CLI's --save).
  std::function<void(RecurrentLM&)> finetuned = nullptr;
};

// Reports (phase, done, total) to ctx.progress; throws Error "<phase> cancelled" when it says stop.
void analysis_tick(const AnalysisContext& ctx, const std::string& phase, int64_t done, int64_t total, double loss = 0);

// A copy of `model` fine-tuned on `docs` with the run's policy (passkey's and bAbI's "finetune"; seeds
// as the CLI verbs': ctx.seed for the trainer, SeedStreams::task_policy for the policy), each step
// recorded in `group`/train and reported as `phase`. Throws Error when training does not finish.
RecurrentLM finetuned_copy(RecurrentLM& model, const std::vector<Document>& docs, const TaskFinetune& ft,
                           const AnalysisContext& ctx, ExperimentFile& file, const std::string& group,
                           const std::string& phase);

// Runs every analysis in `spec` on `model`, writing each group into `run` of `file` as it finishes.
void run_analyses(RecurrentLM& model, const AnalysesSpec& spec, const AnalysisContext& ctx, ExperimentFile& file,
                  const std::string& run);

}  // namespace statescope

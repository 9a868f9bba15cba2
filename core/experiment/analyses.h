// analyses.h — runs the analyses of a spec's "analyses" section (AnalysesSpec, spec.h) on a run's
// model and writes each into the run's groups. passkey and babi evaluate the run's model as it is
// (zero-shot), or, with a "finetune" entry, a copy of it fine-tuned on the task with the run's policy
// (the baseline run: not fine-tuned), its steps in run/passkey/train and run/babi/train; copying
// trains a fresh model with the run's initial-state policy (the baseline run: zero), so one spec
// gives each task's table per policy.
#pragma once
#include <functional>
#include <string>

#include "core/analyses/babi/babi.h"
#include "core/data/tokenizer.h"
#include "core/analyses/copying/copying.h"
#include "core/analyses/effrem/effrem.h"
#include "core/store/experiment_store.h"
#include "core/analyses/states/state_stats.h"
#include "core/analyses/unexplored/unexplored.h"
#include "core/experiment/spec.h"  // AnalysesSpec

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
  std::function<const std::vector<StateEnvelope>*(const UnexploredOptions&)> common_envelopes;
  bool training_free = false;  // the model as loaded with an intervention (copying, which trains a
                               // fresh model, does not apply and is skipped)
};

// Runs every analysis in `spec` on `model`, writing each group into `run` of `file` as it finishes.
void run_analyses(RecurrentLM& model, const AnalysesSpec& spec, const AnalysisContext& ctx, ExperimentFile& file,
                  const std::string& run);

}  // namespace statescope

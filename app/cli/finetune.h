// finetune.h — fine-tune a loaded model on task documents (passkey, bAbI) with an initial-state
// policy, recording every step into the run's train/ group, with a progress line.
#pragma once
#include <string>
#include <vector>

#include "app/cli/progress.h"
#include "core/error.h"
#include "core/experiment_store.h"
#include "core/trainer.h"

namespace statescope::cli {

// Trains `model` in place; throws Error (after marking the run) unless training finished.
inline void finetune(Mamba2LM& model, const std::vector<Document>& docs, const PolicySpec& ps, const TrainOptions& t,
                     uint64_t seed, ExperimentFile& file, const std::string& run, const std::string& what) {
  auto policy = make_policy(ps, seed);
  ProgressLine line;
  auto r = train(model, docs, *policy, t, [&](const StepInfo& s) {
    file.append_train(run, s);
    line.update(what + " step " + std::to_string(s.step) + "/" + std::to_string(s.steps) + "  loss " +
                    std::to_string(s.loss) + "  " + std::to_string(static_cast<int64_t>(s.tokens_per_s)) + " tok/s  ETA " +
                    fmt_eta(s.eta_s),
                s.step == s.steps);
    return true;
  });
  line.done();
  if (r.status != "finished") {
    file.set_status(run, r.status, r.message);
    throw Error(what + " " + r.status + ": " + r.message);
  }
}

}  // namespace statescope::cli

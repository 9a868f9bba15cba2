// finetune.h — what the task verbs (passkey, bAbI) share: their fine-tuning flags, their run (the
// spec section's "finetune" entry), and where the fine-tuned model is saved (--save).
#pragma once
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/analysis_verb.h"  // VerbRun
#include "core/base/constants.h"
#include "core/base/output_rule.h"
#include "core/model/checkpoint.h"
#include "core/analyses/options.h"  // TaskFinetune: the defaults

namespace statescope::cli {

// The options shared by verbs that optionally fine-tune on task data before measuring (passkey,
// babi): steps (default 0: none), window T, batch, lr, policy (default fitted noise, as the paper)
// with sigma, and where to save the fine-tuned model.
// The defaults are the spec's (TaskFinetune::defaults), steps apart.
inline void add_finetune_options(CLI::App& app, TrainOptions& t, PolicySpec& ps, std::string& save,
                                 const TaskFinetune& dflt, const std::string& on_what,
                                 const std::string& T_help) {
  t = dflt.train;
  t.steps = 0;
  ps.kind = "fitted";
  app.add_option("--finetune-steps", t.steps, "fine-tuning steps on " + on_what + " first (0: none)")->capture_default_str();
  app.add_option("--T", t.T, T_help)->capture_default_str();
  app.add_option("--batch", t.batch)->capture_default_str();
  app.add_option("--lr", t.lr)->capture_default_str();
  app.add_option("--policy", ps.kind, "initial-state policy while fine-tuning (the paper used fitted noise)")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kPolicyKinds), std::end(kPolicyKinds))))->capture_default_str();
  app.add_option("--sigma", ps.sigma)->capture_default_str();
  app.add_option_function<std::string>(
         "--loss-on", [&t](const std::string& v) { t.loss_mask = v == "answer"; },
         "fine-tuning loss on the answer's tokens only (answer, default) or on every token (all)")
      ->check(CLI::IsMember({"answer", "all"}))->default_str("answer");
  app.add_option("--save", save, "write the fine-tuned model to this directory (a new one, or --overwrite; never the "
                                 "model being read)");
}

// A task verb's run (passkey, babi): its policy, and with --finetune-steps its spec section's
// "finetune" entry (parse_finetune's fields); measured as loaded without. `section` holds the
// verb's other knobs; `recorded` gains what every task run records.
inline VerbRun task_run(nlohmann::json section, nlohmann::json recorded, const TrainOptions& t, int64_t examples,
                        const PolicySpec& ps, uint64_t seed) {
  const char* loss_on = t.loss_mask ? "answer" : "all";
  VerbRun run;
  run.section = std::move(section);
  if (t.steps > 0)
    run.section["finetune"] = {{"steps", t.steps}, {"T", t.T},           {"batch", t.batch},  {"lr", t.lr},
                               {"warmup", t.warmup}, {"examples", examples}, {"loss_on", loss_on}};
  run.seed = seed;
  run.policy = ps;
  run.baseline = t.steps == 0;
  run.intervention = t.steps ? ps.label() : "none";
  run.recorded = std::move(recorded);
  run.recorded.update({{"finetune_steps", t.steps}, {"policy", ps.label()}, {"loss_on", loss_on}, {"T", t.T}});
  return run;
}

// The --save folder under the output rule (core/base/output_rule.h), checked before any work: a new
// folder or --overwrite, never the model being read nor a folder holding it; written as SAVE.partial
// and renamed when the model is complete. nullptr when no --save was given.
inline std::unique_ptr<StagedOutput> stage_save(const std::string& save, bool overwrite, const std::string& model_dir) {
  if (save.empty()) return nullptr;
  return std::make_unique<StagedOutput>(save, OutputRule{overwrite, {model_dir}, /*folder=*/true});
}

// Writes the fine-tuned model into the staged --save folder and puts it in place.
inline void save_finetuned(RecurrentLM& model, std::unique_ptr<StagedOutput>& staged) {
  if (!staged) return;
  save_model_dir(model, staged->staging());
  staged->finish(StagedOutput::Outcome::Replace);
}

}  // namespace statescope::cli

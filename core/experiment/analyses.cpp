// analyses.cpp — run each analysis of the spec into the run's groups.
#include "core/experiment/analyses.h"
#include "core/base/constants.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/experiment/analysis_steps.h"
#include "core/analyses/passkey/passkey.h"
#include "core/analyses/task_docs.h"
#include "core/model/checkpoint.h"
#include "core/train/trainer.h"
#include "core/analyses/babi/record.h"
#include "core/analyses/copying/record.h"
#include "core/analyses/effrem/record.h"
#include "core/analyses/passkey/record.h"
#include "core/analyses/states/record.h"
#include "core/analyses/unexplored/record.h"

namespace statescope {

namespace {

// A copy of `model` fine-tuned on `docs` with the run's policy (seeds as the CLI verbs': the
// trainer's ctx.seed, the policy's SeedStreams::task_policy), each step recorded in `group`/train.
RecurrentLM finetuned(RecurrentLM& model, const std::vector<Document>& docs, const AnalysesSpec::TaskFinetune& ft,
                   const AnalysisContext& ctx, ExperimentFile& file, const std::string& group, const std::string& phase) {
  RecurrentLM tuned = copy_model(model);
  TrainOptions t = ft.train;
  t.seed = ctx.seed;
  t.freeze_A_log = ctx.freeze_A_log;
  auto policy = make_policy(ctx.policy, SeedStreams::task_policy(ctx.seed));
  auto r = train(tuned, docs, *policy, t, [&](const StepInfo& s) {
    file.append_train(group, s);
    return !ctx.progress || ctx.progress(phase, s.step, s.steps, s.loss);
  });
  if (r.status != "finished") throw Error(phase + " " + r.status + (r.message.empty() ? "" : ": " + r.message));
  return tuned;
}

}  // namespace

void run_analyses(RecurrentLM& model, const AnalysesSpec& spec, const AnalysisContext& ctx, ExperimentFile& file,
                  const std::string& run) {
  auto tick = [&](const std::string& phase, int64_t done, int64_t total, double loss) {
    if (ctx.progress && !ctx.progress(phase, done, total, loss)) throw Error(phase + " cancelled");
  };
  const int64_t per_doc = examples_per_doc(ctx.policy);
  if (spec.effrem) {
    EffRemOptions o = *spec.effrem;
    if (o.Ts.empty()) o.Ts = default_effrem_contexts(ctx.T);
    auto r = effective_remembrance(model, *ctx.validation, o,
                                   [&](int64_t d, int64_t t) { tick("effrem", d, t, 0); return true; });
    write_effrem(file, run, r);
  }
  if (spec.states) {
    StateStatsOptions o = *spec.states;
    o.T = ctx.T;
    tick("states", 0, 1, 0);
    write_state_stats(file, run, state_statistics(model, *ctx.validation, o));
  }
  if (spec.unexplored) {
    UnexploredOptions o = *spec.unexplored;
    o.T = ctx.T;
    o.length = ctx.eval_length > 0 ? ctx.eval_length : default_eval_length(ctx.T);
    o.sequences = ctx.eval_sequences;
    if (o.train_steps == 0) o.train_steps = ctx.posttrain_steps > 0 ? ctx.posttrain_steps : 200;
    if (o.train_batch == 0) o.train_batch = ctx.posttrain_batch > 0 ? ctx.posttrain_batch : 16;
    if (!ctx.train) throw Error("unexplored states: no training text");
    // The baseline met zero-state windows only; a policy run its policy's states.
    const PolicySpec ps = ctx.baseline ? PolicySpec{} : ctx.policy;
    write_unexplored(file, run, unexplored_states(model, *ctx.train, *ctx.validation, ps, o, SeedStreams::envelope(ctx.seed), ctx.eval,
                                                 [&](int64_t d, int64_t t) { tick("unexplored", d, t, 0); return true; },
                                                 ctx.baseline ? nullptr : ctx.recorded_states,
                                                 ctx.common_envelopes ? ctx.common_envelopes(o) : nullptr));
  }
  if (spec.passkey) {
    auto lengths = spec.passkey->lengths;
    if (lengths.empty())
      for (int64_t m : {4, 8, 16, 32, 64}) lengths.push_back(std::max<int64_t>(128, m * ctx.T));
    RecurrentLM tuned{nullptr};
    if (spec.passkey->finetune && !ctx.baseline) {
      const auto& ft = *spec.passkey->finetune;
      tuned = finetuned(model, passkey_training_docs(ft.examples, ft.train.T, per_doc, SeedStreams::task_examples(ctx.seed), ctx.tokenizer), ft,
                        ctx, file, run + "/passkey", "passkey fine-tune");
    }
    tick("passkey", 0, 1, 0);
    write_passkey(file, run, evaluate_passkey(tuned ? tuned : model, lengths, spec.passkey->depths, spec.passkey->samples, SeedStreams::task_prompts(ctx.seed),
                                                    ctx.tokenizer));
  }
  if (spec.babi) {
    RecurrentLM tuned{nullptr};
    if (spec.babi->finetune && !ctx.baseline) {
      const auto& ft = *spec.babi->finetune;
      if (!ctx.train) throw Error("babi fine-tune: no training prose");
      tuned = finetuned(model,
                        babi_training_docs(ft.examples, ft.train.T, per_doc, prose_of(*ctx.train, size_t{16} << 20, ctx.tokenizer),
                                           spec.babi->facts, SeedStreams::task_examples(ctx.seed), ctx.tokenizer),
                        ft, ctx, file, run + "/babi", "bAbI fine-tune");
    }
    tick("babi", 0, 1, 0);  // questions seeded as the CLI verb's (task_prompts)
    write_babi(file, run, evaluate_babi(tuned ? tuned : model, spec.babi->lengths,
                                       prose_of(*ctx.validation, size_t{16} << 20, ctx.tokenizer), spec.babi->facts,
                                       spec.babi->samples, SeedStreams::task_prompts(ctx.seed), ctx.tokenizer));
  }
  if (spec.copying && !ctx.training_free) {
    auto o = spec.copying->options;
    o.seed = ctx.seed;
    auto r = run_copying(o, ctx.policy, spec.copying->train, [&](const StepInfo& s) {
      file.append_train(run + "/copying", s);
      return !ctx.progress || ctx.progress("copying", s.step, s.steps, s.loss);
    }, ctx.compute, ctx.validation);  // held-out prose: one of the foreign starting states
    if (r.train.status != "finished") throw Error("copying " + r.train.status + ": " + r.train.message);
    write_copying(file, run, r.result);
  }
  for (const auto& [key, options] : spec.more) {  // registered analyses, each by its step
    const AnalysisStep* step = find_analysis_step(key);
    if (!step) throw Error("analysis '" + key + "' has no experiment step (core/experiment/analysis_steps.cpp)");
    tick(key, 0, 1, 0);
    step->run(model, nlohmann::json::parse(options), ctx, file, run);
  }
}

}  // namespace statescope

// cmd_unexplored.cpp — `unexplored`: the unexplored-states detector on one model (unexplored.h): the
// envelope of the states it met in training (zero-state windows of T, or the windows of --policy),
// the fraction of evaluation states outside it per position, and, from an evaluation of the same
// sequences written beside it, the rank correlation with the excess loss.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "core/base/constants.h"
#include "app/cli/common.h"
#include "app/cli/interrupt.h"
#include "core/analyses/eval/evaluate.h"
#include "core/analyses/unexplored/unexplored.h"
#include "core/base/error.h"
#include "core/data/corpus.h"
#include "core/model/checkpoint.h"
#include "core/model/model_registry.h"
#include "core/store/experiment_store.h"
#include "core/analyses/eval/record.h"
#include "core/analyses/unexplored/record.h"

namespace statescope::cli {

Runner add_unexplored(CLI::App& app, const std::string& command) {
  struct O : RunArgs {
    std::string data = "embedded";
    UnexploredOptions u;
    PolicySpec ps;
    int64_t segment = 512;
    uint64_t seed = 0;
  };
  auto o = std::make_shared<O>();
  o->u.T = 0;
  add_run_options(app, *o, "unexplored");
  app.add_option("--data", o->data, "'embedded', a folder, .jsonl, .u16/.u32 token file or text file (.gz/.xz/.zst too) (see 'data')")
      ->capture_default_str();
  app.add_option("--T", o->u.T, "training context (default: the model's record)")->check(token_count());
  app.add_option("--policy", o->ps.kind, "whose training states: the policy the model was trained with (zero: a "
                 "checkpoint trained from zero states)")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kPolicyKinds), std::end(kPolicyKinds))))->capture_default_str();
  app.add_option("--sigma", o->ps.sigma, "random: std of the initial SSM state")->capture_default_str();
  app.add_option("--length", o->u.length, "positions per evaluation sequence (default 64T)");
  app.add_option("--sequences", o->u.sequences)->capture_default_str();
  app.add_option("--stride", o->u.stride, "score the state after every stride-th position (default T/2)");
  app.add_option("--train-steps", o->u.train_steps, "training batches replayed")->capture_default_str();
  app.add_option("--train-batch", o->u.train_batch, "rows per replayed batch")->capture_default_str();
  app.add_option("--samples", o->u.samples, "training states kept per layer")->capture_default_str();
  app.add_option("--components", o->u.components, "principal components of the envelope")->capture_default_str();
  app.add_option("--quantile", o->u.quantile, "held-out training states inside the envelope")->capture_default_str();
  app.add_option("--seed", o->seed)->capture_default_str();
  return [o, command]() {
    const std::string dir = resolve_model(o->model);
    if (o->u.T <= 0) o->u.T = read_model_record(dir).T;
    if (o->u.T <= 0) throw Error("--T is required: " + dir + " records no training context");
    if (o->u.length <= 0) o->u.length = default_eval_length(o->u.T);
    auto model = load_model_dir(dir, default_compute());
    const Corpus corpus = load_corpus(o->data, dir, model->vocab_size());
    nlohmann::json spec{{"command", command}, {"T", o->u.T}, {"length", o->u.length}, {"sequences", o->u.sequences},
                        {"policy", o->ps.label()}};
    auto file = start_run(*o, spec.dump(), dir, "none (analysis of " + o->ps.label() + " training states)", o->seed, o->data);
    ProgressLine line;
    const UnexploredResult r = measure_run(*file, o->run, [&] {
      EvalOptions e;
      e.T = o->u.T, e.length = o->u.length, e.sequences = o->u.sequences, e.segment = o->segment;
      const EvalResult eval = evaluate_positions(model, corpus.validation, e, [&](int64_t d, int64_t t) {
        line.update("eval " + std::to_string(d) + "/" + std::to_string(t), d == t);
        return !interrupted();
      });
      write_eval(*file, o->run, eval);
      return unexplored_states(model, corpus.train, corpus.validation, o->ps, o->u, o->seed, &eval, [&](int64_t d, int64_t t) {
        line.update("unexplored " + std::to_string(d) + "/" + std::to_string(t), d == t);
        return !interrupted();
      });
    });
    line.done();
    write_unexplored(*file, o->run, r);
    file->set_status(o->run, "finished");
    std::printf("states outside the envelope of the %s training states (mean over layers and heads):\n",
                o->ps.label().c_str());
    for (int64_t lo = 0, hi = r.T; lo < r.length; lo = hi, hi *= 2) {
      double sum = 0;
      int n = 0;
      for (size_t j = 0; j < r.positions.size(); ++j)
        if (r.positions[j] >= lo && r.positions[j] < hi) sum += r.outside_mean[j], ++n;
      if (n) std::printf("  positions [%lld, %lld): %.3f\n", (long long)lo, (long long)std::min(hi, r.length), sum / n);
    }
    double held = 0;
    for (double h : r.heldout_outside) held += h / static_cast<double>(r.heldout_outside.size());
    std::printf("held-out training states outside: %.3f (quantile %.3f)\nSpearman with the excess over positions >= T: "
                "%.3f (95%% %.3f to %.3f)\n-> %s\n",
                held, r.quantile, r.excess_rho, r.excess_rho_lo, r.excess_rho_hi, o->output.c_str());
    file->close();  // renamed into place here: a failure is this command's error
    return 0;
  };
}

}  // namespace statescope::cli

// cmd_unexplored.cpp — `unexplored`: the unexplored-states detector on one model (unexplored.h): the
// envelope of the states it met in training (zero-state windows of T, or the windows of --policy),
// the fraction of evaluation states outside it per position, and, from an evaluation of the same
// sequences written beside it, the rank correlation with the excess loss.
#include <cstdio>
#include <iostream>

#include "app/cli/analysis_verb.h"
#include "app/cli/commands.h"
#include "core/analyses/options.h"  // UnexploredOptions: the defaults
#include "core/base/constants.h"

namespace statescope::cli {

Runner add_unexplored(CLI::App& app, const std::string& command) {
  struct O : MeasureArgs {
    UnexploredOptions u;
    PolicySpec ps;
    int64_t segment = 512;
    uint64_t seed = 0;
  };
  auto o = std::make_shared<O>();
  o->u.T = 0;
  add_measure_options(app, *o, "unexplored");
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
    const int64_t T = o->u.T > 0 ? o->u.T : read_model_record(dir).T;
    if (T <= 0) throw Error("--T is required: " + dir + " records no training context");
    const int64_t length = o->u.length > 0 ? o->u.length : default_eval_length(T);
    VerbRun run;
    run.section = {{"stride", o->u.stride}, {"train_steps", o->u.train_steps}, {"train_batch", o->u.train_batch},
                   {"samples", o->u.samples}, {"components", o->u.components}, {"quantile", o->u.quantile}};
    run.seed = o->seed;
    run.policy = o->ps;
    run.baseline = o->ps.kind == "zero";  // the detector's training states: zero-state windows, or the policy's
    run.intervention = "none (analysis of " + o->ps.label() + " training states)";
    run.recorded = {{"T", T}, {"length", length}, {"sequences", o->u.sequences}, {"policy", o->ps.label()}};
    const AnalysisVerb verb{.key = "unexplored", .data = o->data, .T = T, .evaluate = true, .eval_length = length,
                            .eval_sequences = o->u.sequences, .eval_segment = o->segment};
    const auto runs = run_analysis_verb(*o, command, verb, {run});
    const UnexploredResult& r = *runs.at(0).unexplored;
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
    return 0;
  };
}

}  // namespace statescope::cli

// cmd_states.cpp — `states`: SSM state distributions at positions below and far beyond T, the
// Gaussian fitted at T-1, and the state change per token, into an experiment file, as a one-analysis
// run (analysis_verb.h: the spec's states step, section from the flags).
#include <iomanip>
#include <iostream>

#include "app/cli/analysis_verb.h"
#include "app/cli/commands.h"
#include "core/analyses/options.h"  // StateStatsOptions: the defaults

namespace statescope::cli {

Runner add_states(CLI::App& app, const std::string& command) {
  struct O : MeasureArgs {
    StateStatsOptions s;
  };
  auto o = std::make_shared<O>();
  o->s.T = 0;
  add_measure_options(app, *o, "states");
  app.add_option("--T", o->s.T, "training context (default: the model's record)")->check(token_count());
  app.add_option("--positions", o->s.positions, "positions (default T/2, T-1, 2T, 8T, 32T, 64T-1)")->delimiter(',');
  app.add_option("--layers", o->s.layers, "layers (default all)")->delimiter(',');
  app.add_option("--length", o->s.length, "positions scanned for the state change norm (default 64T)");
  app.add_option("--sequences", o->s.sequences)->capture_default_str();
  app.add_option("--bins", o->s.bins)->capture_default_str();
  app.add_option("--range", o->s.range, "histogram range [-r, r] (default: largest |entry|)");
  return [o, command]() {
    const std::string dir = resolve_model(o->model);
    const int64_t T = o->s.T > 0 ? o->s.T : read_model_record(dir).T;
    if (T <= 0) throw Error("--T is required: " + dir + " records no training context");
    VerbRun run;
    run.section = {{"positions", o->s.positions}, {"layers", o->s.layers}, {"length", o->s.length},
                   {"sequences", o->s.sequences}, {"bins", o->s.bins}, {"range", o->s.range}};
    run.recorded = {{"T", T}, {"sequences", o->s.sequences}};
    const auto runs = run_analysis_verb(*o, command, {.key = "states", .data = o->data, .T = T}, {run});
    const StateStatsResult& r = *runs.at(0).states;
    const int64_t H = r.nheads, np = r.positions.size();
    std::cout << "SSM state entries: std per position (mean over heads), and the fit at T-1 = " << r.T - 1 << "\n"
              << std::fixed << std::setprecision(4);
    for (size_t li = 0; li < r.layers.size(); ++li) {
      double fit = 0;
      for (int64_t h = 0; h < H; ++h) fit += r.fitted_std[li * H + h] / H;
      std::cout << "layer " << r.layers[li] << " (fit std " << fit << "):";
      for (int64_t k = 0; k < np; ++k) {
        double s = 0;
        for (int64_t h = 0; h < H; ++h) s += r.std[(li * np + k) * H + h] / H;
        std::cout << "  p" << r.positions[k] << " " << s;
      }
      std::cout << "\n";
    }
    std::cout << "-> " << o->output << "\n";
    return 0;
  };
}

}  // namespace statescope::cli

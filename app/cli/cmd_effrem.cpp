// cmd_effrem.cpp — `effrem`: Effective Remembrance curves/heatmap of one model into an experiment file,
// as a one-analysis run (analysis_verb.h: the spec's effrem step, section from the flags).
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>

#include "app/cli/analysis_verb.h"
#include "app/cli/commands.h"
#include "core/analyses/options.h"  // EffRemOptions: the defaults

namespace statescope::cli {

Runner add_effrem(CLI::App& app, const std::string& command) {
  struct O : MeasureArgs {
    EffRemOptions e;
    bool linear = false;
  };
  auto o = std::make_shared<O>();
  add_measure_options(app, *o, "effrem");
  app.add_option("--T", o->e.Ts, "context lengths (one curve each; several make the heatmap)")->delimiter(',')
      ->capture_default_str()->check(token_count());
  app.add_option("--points", o->e.points, "t grid points")->capture_default_str();
  app.add_flag("--linear", o->linear, "linear t grid (default: log-spaced)");
  app.add_option("--sequences", o->e.sequences, "validation sequences averaged")->capture_default_str();
  return [o, command]() {
    const auto t0 = std::chrono::steady_clock::now();
    VerbRun run;
    run.section = {{"T", o->e.Ts}, {"points", o->e.points}, {"log", !o->linear}, {"sequences", o->e.sequences}};
    run.recorded = {{"T", o->e.Ts}, {"points", o->e.points}, {"sequences", o->e.sequences}};
    const auto runs = run_analysis_verb(*o, command, {.key = "effrem", .data = o->data}, {run});
    const EffRemResult& r = *runs.at(0).effrem;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "EffRem_T(t), mean over " << r.sequences << " sequences (rows T, columns t):\n" << std::setw(7) << "T\\t";
    for (auto t : r.t) std::cout << std::setw(7) << t;
    std::cout << "\n" << std::fixed << std::setprecision(3);
    for (size_t i = 0; i < r.T.size(); ++i) {
      std::cout << std::setw(7) << r.T[i];
      for (size_t j = 0; j < r.t.size(); ++j) {
        const double v = r.value[i * r.t.size() + j];
        if (std::isnan(v)) std::cout << std::setw(7) << "";
        else std::cout << std::setw(7) << v;
      }
      std::cout << "\n";
    }
    std::cout << std::setprecision(1) << "cost: " << r.forward_tokens << " forward tokens in " << secs << " s -> "
              << o->output << "\n";
    return 0;
  };
}

}  // namespace statescope::cli

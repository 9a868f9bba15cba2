// cmd_effrem.cpp — `effrem`: Effective Remembrance curves/heatmap of one model into an experiment file.
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/interrupt.h"
#include "app/cli/commands.h"
#include "app/cli/common.h"
#include "app/cli/progress.h"
#include "core/model/checkpoint.h"
#include "core/data/corpus.h"
#include "core/analyses/effrem/effrem.h"
#include "core/base/error.h"
#include "core/store/experiment_store.h"
#include "core/model/model_registry.h"
#include "core/compute/runtime.h"
#include "core/analyses/effrem/record.h"

namespace statescope::cli {

Runner add_effrem(CLI::App& app, const std::string& command) {
  struct O : RunArgs {
    std::string data = "embedded";
    EffRemOptions e;
    bool linear = false;
  };
  auto o = std::make_shared<O>();
  add_run_options(app, *o, "effrem");
  app.add_option("--data", o->data, "'embedded', a folder, .jsonl, .u16/.u32 token file or text file (.gz/.xz/.zst too) (see 'data') (validation split)")->capture_default_str();
  app.add_option("--T", o->e.Ts, "context lengths (one curve each; several make the heatmap)")->delimiter(',')
      ->capture_default_str()->check(token_count());
  app.add_option("--points", o->e.points, "t grid points")->capture_default_str();
  app.add_flag("--linear", o->linear, "linear t grid (default: log-spaced)");
  app.add_option("--sequences", o->e.sequences, "validation sequences averaged")->capture_default_str();
  return [o, command]() {
    o->e.log_grid = !o->linear;
    const std::string dir = resolve_model(o->model);
    auto model = load_model_dir(dir, default_compute());
    const Corpus corpus = load_corpus(o->data, dir, model->vocab_size());
    nlohmann::json spec{{"command", command}, {"T", o->e.Ts}, {"points", o->e.points}, {"sequences", o->e.sequences}};
    auto file = start_run(*o, spec.dump(), dir, "none (analysis)", 0, o->data);
    ProgressLine line;
    const auto t0 = std::chrono::steady_clock::now();
    const EffRemResult r = measure_run(*file, o->run, [&] {
      return effective_remembrance(model, corpus.validation, o->e, [&](int64_t d, int64_t t) {
        line.update("effrem " + std::to_string(d) + "/" + std::to_string(t), d == t);
        return !interrupted();
      });
    });
    line.done();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    write_effrem(*file, o->run, r);
    file->set_status(o->run, "finished");
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
    file->close();  // renamed into place here: a failure is this command's error
    return 0;
  };
}

}  // namespace statescope::cli

// cmd_passkey.cpp — `passkey`: optional fine-tuning on passkey samples at length T with any
// initial-state policy, then the length x depth accuracy grid, into an experiment file, as a one-analysis run (analysis_verb.h: the spec's passkey step).
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/cli/analysis_verb.h"
#include "app/cli/commands.h"
#include "app/cli/finetune.h"       // the fine-tuning flags
#include "core/analyses/options.h"  // the defaults a spec's section has
#include "core/base/constants.h"

namespace statescope::cli {

Runner add_passkey(CLI::App& app, const std::string& command) {
  struct O : RunArgs {
    std::string save;
    std::vector<int64_t> lengths{128, 256, 512, 1024, 2048};  // the spec's default is relative to T (4T..64T)
    std::vector<double> depths = PasskeyOptions{}.depths;
    int64_t samples = PasskeyOptions{}.samples, examples = PasskeyOptions::default_finetune().examples;
    uint64_t seed = 0;
    TrainOptions t;
    PolicySpec ps;
  };
  auto o = std::make_shared<O>();
  add_run_options(app, *o, "passkey");
  app.add_option("--lengths", o->lengths, "prompt lengths of the grid (the model's tokens: bytes or BPE tokens)")->delimiter(',')->capture_default_str();
  app.add_option("--depths", o->depths, "key depths of the grid, 0..1")->delimiter(',')->capture_default_str();
  app.add_option("--samples", o->samples, "samples per grid cell")->capture_default_str();
  app.add_option("--seed", o->seed)->capture_default_str();
  app.add_option("--examples", o->examples, "distinct fine-tuning examples")->capture_default_str();
  add_finetune_options(app, o->t, o->ps, o->save, PasskeyOptions::default_finetune(), "passkey samples",
                       "fine-tuning window: prompt + answer tokens, one example per window");
  return [o, command]() {
    const VerbRun run = task_run({{"lengths", o->lengths}, {"depths", o->depths}, {"samples", o->samples}},
                                 nlohmann::json::object(), o->t, o->examples, o->ps, o->seed);
    const auto runs = run_analysis_verb(*o, command, {.key = "passkey", .save = o->save}, {run});
    const PasskeyResult& g = *runs.at(0).passkey;
    std::cout << "passkey accuracy (all 5 digits; digit accuracy in brackets), " << g.samples << " samples per cell\n"
              << std::setw(8) << "len\\dep";
    for (auto d : g.depths) std::cout << std::setw(14) << d;
    std::cout << "\n" << std::fixed << std::setprecision(2);
    for (size_t i = 0; i < g.lengths.size(); ++i) {
      std::cout << std::setw(8) << g.lengths[i];
      for (size_t j = 0; j < g.depths.size(); ++j) {
        const size_t k = i * g.depths.size() + j;
        std::ostringstream c;
        c << std::fixed << std::setprecision(2) << g.accuracy[k] << " (" << g.digit_accuracy[k] << ")";
        std::cout << std::setw(14) << c.str();
      }
      std::cout << "\n";
    }
    return 0;
  };
}

}  // namespace statescope::cli

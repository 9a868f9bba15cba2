// cmd_babi.cpp — `babi`: optional fine-tuning on single-supporting-fact questions at length T
// (prose from the training split) with any policy, then accuracy by context length (prose from the
// validation split), into an experiment file, as a one-analysis run (analysis_verb.h: the spec's babi step).
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

Runner add_babi(CLI::App& app, const std::string& command) {
  struct O : RunArgs {
    std::string data = "embedded", save;
    std::vector<int64_t> lengths{256, 512, 1024, 2048, 4096};  // the spec's, plus 4096
    int64_t samples = BabiOptions{}.samples, facts = BabiOptions{}.facts,
            examples = BabiOptions::default_finetune().examples;
    uint64_t seed = 0;
    TrainOptions t;
    PolicySpec ps;
  };
  auto o = std::make_shared<O>();
  add_run_options(app, *o, "babi");
  app.add_option("--data", o->data, "distractor prose: 'embedded', a folder, .jsonl, .u16/.u32 token file or text file (.gz/.xz/.zst too) (see 'data')")->capture_default_str();
  app.add_option("--lengths", o->lengths, "prompt lengths (tokens)")->delimiter(',')->capture_default_str();
  app.add_option("--samples", o->samples, "questions per length")->capture_default_str();
  app.add_option("--facts", o->facts, "fact sentences per prompt (4 people, 6 places)")->capture_default_str();
  app.add_option("--seed", o->seed)->capture_default_str();
  app.add_option("--examples", o->examples, "distinct fine-tuning examples")->capture_default_str();
  add_finetune_options(app, o->t, o->ps, o->save, BabiOptions::default_finetune(), "questions", "fine-tuning window (prompt + answer)");
  return [o, command]() {
    const VerbRun run = task_run({{"lengths", o->lengths}, {"samples", o->samples}, {"facts", o->facts}},
                                 {{"facts", o->facts}}, o->t, o->examples, o->ps, o->seed);
    const auto runs = run_analysis_verb(*o, command, {.key = "babi", .data = o->data, .save = o->save}, {run});
    const BabiResult& r = *runs.at(0).babi;
    std::printf("bAbI single supporting fact, %lld facts, %lld questions per length (choice chance %.2f; "
                "last-mentioned: the baseline answering the last fact's location)\n%8s %10s %10s %15s %14s\n",
                (long long)o->facts, (long long)r.samples, 1.0 / r.candidates, "length", "greedy", "choice",
                "last-mentioned", "fact distance");
    for (size_t i = 0; i < r.lengths.size(); ++i)
      std::printf("%8lld %10.2f %10.2f %15.2f %14.0f\n", (long long)r.lengths[i], r.accuracy[i], r.choice_accuracy[i],
                  r.last_mentioned_accuracy[i], r.mean_distance[i]);
    return 0;
  };
}

}  // namespace statescope::cli

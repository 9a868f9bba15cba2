// cmd_babi.cpp — `babi`: optional fine-tuning on single-supporting-fact questions at length T
// (prose from the training split) with any policy, then accuracy by context length (prose from the
// validation split), into an experiment file.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/base/constants.h"
#include "app/cli/commands.h"
#include "app/cli/common.h"
#include "app/cli/finetune.h"
#include "core/analyses/babi/babi.h"
#include "core/model/checkpoint.h"
#include "core/base/error.h"
#include "core/model/model_registry.h"
#include "core/data/tokenizer.h"

#include "core/analyses/options.h"  // BabiOptions: the defaults a spec's babi section has
#include "core/analyses/babi/record.h"

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
    const std::string dir = resolve_model(o->model);
    const auto tok = load_tokenizer(dir);  // prompts in the model's tokens (bytes or its BPE)
    auto model = load_model_dir(dir, default_compute());
    const Corpus corpus = load_corpus(o->data, dir, model->vocab_size());
    nlohmann::json spec{{"command", command}, {"finetune_steps", o->t.steps}, {"policy", o->ps.label()},
                        {"facts", o->facts}, {"loss_on", o->t.loss_mask ? "answer" : "all"}, {"T", o->t.T}};
    auto save = stage_save(o->save, o->overwrite, dir);  // refused before any work when it may not be written
    auto file = start_run(*o, spec.dump(), dir, o->t.steps ? o->ps.label() : "none", o->seed, o->data);
    if (o->t.steps > 0) {
      o->t.seed = o->seed;
      o->t.freeze_A_log = read_model_record(dir).freeze_A_log;
      auto docs = babi_training_docs(o->examples, o->t.T, examples_per_doc(o->ps),
                                     prose_of(corpus.train, size_t{16} << 20, tok.get()), o->facts, SeedStreams::task_examples(o->seed), tok.get());
      finetune(model, docs, o->ps, o->t, SeedStreams::task_policy(o->seed), *file, o->run, "bAbI fine-tune");
      save_finetuned(model, save);
    }
    auto r = evaluate_babi(model, o->lengths, prose_of(corpus.validation, size_t{16} << 20, tok.get()), o->facts,
                           o->samples, SeedStreams::task_prompts(o->seed), tok.get());
    write_babi(*file, o->run, r);
    file->set_status(o->run, "finished");
    std::printf("bAbI single supporting fact, %lld facts, %lld questions per length (choice chance %.2f; "
                "last-mentioned: the baseline answering the last fact's location)\n%8s %10s %10s %15s %14s\n",
                (long long)o->facts, (long long)r.samples, 1.0 / r.candidates, "length", "greedy", "choice",
                "last-mentioned", "fact distance");
    for (size_t i = 0; i < r.lengths.size(); ++i)
      std::printf("%8lld %10.2f %10.2f %15.2f %14.0f\n", (long long)r.lengths[i], r.accuracy[i], r.choice_accuracy[i],
                  r.last_mentioned_accuracy[i], r.mean_distance[i]);
    file->close();  // renamed into place here: a failure is this command's error
    return 0;
  };
}

}  // namespace statescope::cli

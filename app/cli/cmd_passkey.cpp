// cmd_passkey.cpp — `passkey`: optional fine-tuning on passkey samples at length T with any
// initial-state policy, then the length x depth accuracy grid, into an experiment file.
#include <iomanip>
#include <sstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/base/constants.h"
#include "app/cli/commands.h"
#include "app/cli/common.h"
#include "app/cli/finetune.h"
#include "core/model/checkpoint.h"
#include "core/base/error.h"
#include "core/data/tokenizer.h"
#include "core/store/experiment_store.h"
#include "core/model/model_registry.h"
#include "core/analyses/passkey/passkey.h"
#include "core/compute/runtime.h"
#include "core/train/trainer.h"

#include "core/analyses/options.h"  // PasskeyOptions: the defaults a spec's passkey section has
#include "core/analyses/passkey/record.h"

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
    const std::string dir = resolve_model(o->model);
    const auto tok = load_tokenizer(dir);  // prompts in the model's tokens (bytes or its BPE)
    auto model = load_model_dir(dir, default_compute());
    if (tok->vocab_size() > model->vocab_size())
      throw Error("passkey: " + dir + "/tokenizer.json has " + std::to_string(tok->vocab_size()) +
                  " ids but the model's vocab_size is " + std::to_string(model->vocab_size()));
    nlohmann::json spec{{"command", command}, {"finetune_steps", o->t.steps}, {"policy", o->ps.label()},
                        {"loss_on", o->t.loss_mask ? "answer" : "all"}, {"T", o->t.T}};
    auto save = stage_save(o->save, o->overwrite, dir);  // refused before any work when it may not be written
    auto file = start_run(*o, spec.dump(), dir, o->t.steps ? o->ps.label() : "none", o->seed, "");
    if (o->t.steps > 0) {
      o->t.seed = o->seed;
      o->t.freeze_A_log = read_model_record(dir).freeze_A_log;
      auto docs = passkey_training_docs(o->examples, o->t.T, examples_per_doc(o->ps), SeedStreams::task_examples(o->seed), tok.get());
      finetune(model, docs, o->ps, o->t, SeedStreams::task_policy(o->seed), *file, o->run, "passkey fine-tune");
      save_finetuned(model, save);
    }
    auto g = evaluate_passkey(model, o->lengths, o->depths, o->samples, SeedStreams::task_prompts(o->seed), tok.get());
    write_passkey(*file, o->run, g);
    file->set_status(o->run, "finished");
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
    file->close();  // renamed into place here: a failure is this command's error
    return 0;
  };
}

}  // namespace statescope::cli

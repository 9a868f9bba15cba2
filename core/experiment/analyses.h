// analyses.h — the "analyses" section of an experiment spec: which long-context measurements run
// on each run's model after its evaluation, with their knobs. Every key is optional; an absent key
// means that analysis is skipped. See docs/experiment-spec.md.
//
//   "analyses": {
//     "effrem":  {"T": [32, 128, 512], "points": 16, "log": true, "sequences": 16},
//     "states":  {"positions": [...], "layers": [...], "sequences": 16, "bins": 101, "length": 0},
//     "passkey": {"lengths": [...], "depths": [...], "samples": 10},
//     "babi":    {"lengths": [...], "samples": 50, "facts": 4},
//     "copying": {"L": 10, "alphabet": 10, "steps": 600, "batch": 32, "lr": 0.003, "samples": 100,
//                 "eval_lengths": [...]}
//   }
// passkey and babi evaluate the run's model as it is (zero-shot); copying trains a fresh model with
// the run's initial-state policy (the baseline run: zero), so one spec gives the copying table
// with and without state passing.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/analyses/babi.h"
#include "core/data/tokenizer.h"
#include "core/analyses/copying.h"
#include "core/analyses/effrem.h"
#include "core/store/experiment_store.h"
#include "core/analyses/state_stats.h"

namespace statescope {

struct AnalysesSpec {
  std::optional<EffRemOptions> effrem;
  std::optional<StateStatsOptions> states;
  struct Passkey {
    std::vector<int64_t> lengths;  // empty: 4T .. 64T
    std::vector<double> depths{0.0, 0.25, 0.5, 0.75, 1.0};
    int64_t samples = 10;
  };
  std::optional<Passkey> passkey;
  struct Babi {
    std::vector<int64_t> lengths{256, 512, 1024, 2048};
    int64_t samples = 50, facts = 4;
  };
  std::optional<Babi> babi;
  struct Copying {
    CopyOptions options;
    TrainOptions train;
  };
  std::optional<Copying> copying;
  bool any() const { return effrem || states || passkey || babi || copying; }
};

// Throws Error naming the field ("analyses.effrem.T", ...) on a bad or unknown entry.
AnalysesSpec parse_analyses(const nlohmann::json& j, const std::string& src);

struct AnalysisContext {
  const std::vector<Document>* validation = nullptr;
  int64_t T = 0;             // the model's training context
  uint64_t seed = 0;
  PolicySpec policy;         // the run's policy (copying trains with it)
  const Tokenizer* tokenizer = nullptr;  // the model's (passkey and bAbI prompts); null: bytes
  // (phase, done, total, loss) -> false cancels (throws Error "cancelled").
  std::function<bool(const std::string&, int64_t, int64_t, double)> progress;
};

// Runs every analysis in `spec` on `model`, writing each group into `run` of `file` as it finishes.
void run_analyses(Mamba2LM& model, const AnalysesSpec& spec, const AnalysisContext& ctx, ExperimentFile& file,
                  const std::string& run);

}  // namespace statescope

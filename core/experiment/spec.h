// spec.h — the experiment spec: every field with its default, JSON in and out, and validation that
// names the field at fault. The one place a spec's defaults are written: the runner, the CLI and
// the app's panel all read them from here. No LibTorch. Documented in docs/experiment-spec.md.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/analyses/options.h"
#include "core/experiment/pretrain_spec.h"
#include "core/model/intervention_spec.h"
#include "core/train/options.h"

namespace statescope {

// The "analyses" section: which long-context measurements run on each run's model after its
// evaluation, with their knobs. An absent key means that analysis is skipped.
struct AnalysesSpec {
  // Fine-tuning on a task's own examples before it is measured (passkey, bAbI): each policy run
  // fine-tunes a copy of its model with its own initial-state policy; the baseline run is measured
  // as loaded. One example per window (TBTT: streams of kTaskExamplesPerStream), loss on the answer
  // unless train.loss_mask is off.
  struct TaskFinetune {
    TrainOptions train;    // steps, T (the window), batch, lr, warmup, loss_mask
    int64_t examples = 0;  // distinct training examples
  };
  // The CLI verbs' and the spec's defaults: 300 steps, batch 16, lr 1e-3, warmup 10, the given
  // window and example count (passkey: 128 and 2000, bAbI: 256 and 4000).
  static TaskFinetune default_finetune(int64_t T, int64_t examples);
  std::optional<EffRemOptions> effrem;
  std::optional<StateStatsOptions> states;
  struct Passkey {
    std::vector<int64_t> lengths;  // empty: 4T .. 64T
    std::vector<double> depths{0.0, 0.25, 0.5, 0.75, 1.0};
    int64_t samples = 10;
    std::optional<TaskFinetune> finetune;  // absent: every run measured as it is (zero-shot)
    static TaskFinetune default_finetune() { return AnalysesSpec::default_finetune(128, 2000); }
  };
  std::optional<Passkey> passkey;
  struct Babi {
    std::vector<int64_t> lengths{256, 512, 1024, 2048};
    int64_t samples = 50, facts = 4;
    std::optional<TaskFinetune> finetune;  // absent: zero-shot
    static TaskFinetune default_finetune() { return AnalysesSpec::default_finetune(256, 4000); }
  };
  std::optional<Babi> babi;
  struct Copying {
    CopyOptions options;
    TrainOptions train = default_train();
    static TrainOptions default_train();  // 600 steps, batch 32, lr 3e-3, warmup 30
  };
  std::optional<Copying> copying;
  // The unexplored-states detector (unexplored.h); train_steps/train_batch 0 = posttrain's.
  std::optional<UnexploredOptions> unexplored;
  bool any() const { return effrem || states || passkey || babi || copying || unexplored || !more.empty(); }
  // Registered analyses whose spec section their record checks (analysis_record.h: options), by
  // key, each section as JSON text with its defaults filled in; run by their experiment step
  // (analysis_steps.h).
  std::map<std::string, std::string> more;
};

struct ExperimentSpec {
  std::string comment;
  std::string model = "embedded";   // "embedded" or a checkpoint directory
  // "models": several models side by side in one file (each with every run of the spec, run names
  // "<model label>:<run>", model_label below); empty: the one "model".
  std::vector<std::string> models;
  // "pretrain": no model is loaded; each cell trains a fresh byte-level model from scratch (its T and
  // seed) and runs the baseline and policies on it (pretrain_spec.h). Excludes model and models.
  std::optional<PretrainSpec> pretrain;
  std::string data = "embedded";    // "embedded" (Austen), a corpus path or a cached dataset id (docs/data.md)
  std::string text_field = "text";  // JSON Lines field / Parquet column holding each document
  // "" = the process-wide setting (CLI --device/--precision/--scan); held for this experiment only.
  std::string device, precision, scan;
  int64_t T = 0;                    // training context; 0 = the model directory's record
  uint64_t seed = 0;
  bool baseline = true;             // a run of the model as loaded, no post-training
  TrainOptions posttrain = default_posttrain();  // steps 0: no language-model post-training (a
                                                // task study: the policies act in the analyses only)
  bool freeze_set = false;          // posttrain.freeze_A_log given (else the model's record decides)
  std::vector<std::pair<std::string, PolicySpec>> policies;  // (run name, policy), names unique
  // Training-free runs: the model as loaded, run with an intervention (intervention_spec.h); names
  // unique among every run's.
  std::vector<std::pair<std::string, InterventionSpec>> interventions;
  EvalOptions eval = default_eval();
  std::string save_models;          // "" = post-trained models are not saved
  AnalysesSpec analyses;
  // "sweep": fields varied over a grid (sweep.h); empty: one run per policy.
  std::vector<std::pair<std::string, std::vector<double>>> sweep;
  bool sweep_list = false;  // "mode": "list": the i-th values of every field together (else the grid)

  static TrainOptions default_posttrain();  // 200 steps, batch 16, lr 5e-4, warmup 10, cosine to 0.1
  static EvalOptions default_eval();        // length 0 (= 64T), 32 sequences, segments of 512, batch 8
  int64_t eval_length(int64_t T_resolved) const { return eval.length > 0 ? eval.length : 64 * T_resolved; }
};

// The name a model's runs carry in a multi-model spec: a named model ("embedded", "embedded-mamba1")
// as it is, a folder by its last component.
std::string model_label(const std::string& model);

// Parses and validates a spec. Throws Error naming `src` and the field ("posttrain.steps",
// "policies[2]", "analyses.effrem.T", an unknown "posttrain.stpes", ...). Does not look at the
// model, the data or the hardware (check_spec adds the device, precision and scan names).
ExperimentSpec parse_spec(const std::string& text, const std::string& src);
ExperimentSpec parse_spec(const nlohmann::json& j, const std::string& src);
AnalysesSpec parse_analyses(const nlohmann::json& j, const std::string& src);

// parse_spec, then the device, precision and scan names against this machine (the runtime's own
// checks; the error names the field). Touches no model or data. Returns the checked spec.
ExperimentSpec check_spec(const std::string& text, const std::string& src);

}  // namespace statescope

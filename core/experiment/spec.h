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

#include "core/analyses/options.h"  // EvalOptions
#include "core/experiment/pretrain_spec.h"
#include "core/model/intervention_spec.h"
#include "core/train/options.h"

namespace statescope {

// The "analyses" section: which long-context measurements run on each run's model after its
// evaluation, with their knobs. An absent key means that analysis is skipped. Each section is
// checked by its analysis's record (analysis_record.h: options) and read by its experiment step
// (analysis_steps.h); the typed knobs are its record's reader's (e.g. effrem_options in
// core/analyses/effrem/record.h).
struct AnalysesSpec {
  std::map<std::string, std::string> sections;  // key -> its checked section, as JSON text
  bool any() const { return !sections.empty(); }
  bool has(const std::string& key) const { return sections.count(key) > 0; }
  // The section of `key`, parsed ({} when absent).
  nlohmann::json section(const std::string& key) const;
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
// Text as a literal: the text overload (a literal would otherwise also convert to JSON).
inline ExperimentSpec parse_spec(const char* text, const std::string& src) { return parse_spec(std::string(text), src); }
AnalysesSpec parse_analyses(const nlohmann::json& j, const std::string& src);

// parse_spec, then the device, precision and scan names against this machine (the runtime's own
// checks; the error names the field). Touches no model or data. Returns the checked spec.
ExperimentSpec check_spec(const std::string& text, const std::string& src);

}  // namespace statescope

// analysis_verb.h — one driver for the CLI's analysis verbs (effrem, states, unexplored, passkey, babi,
// copying): a verb turns its flags into its analysis's spec section (what a spec's "analyses": {key:
// {...}} holds) and runs it as a one-analysis run of an experiment file through the experiment step a
// spec's run uses (core/experiment/analysis_steps.h): the same groups in the file, the same seed
// streams, the same section checks, the same progress and cancel (Ctrl+C). A verb is its flags, its
// section and its table. (`attention` writes a plain matrix file for other tools, not an experiment
// run; `eval` is every run's evaluation, not an analysis of core/analyses/list.h.)
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/cli/common.h"
#include "core/store/analysis_record.h"
#include "core/train/options.h"

namespace statescope::cli {

// One run of a verb.
struct VerbRun {
  std::string run;                                     // its name in the file ("": the verb's --run)
  nlohmann::json section = nlohmann::json::object();  // the analysis's spec section, from the flags
  uint64_t seed = 0;                                   // the run's seed (the steps derive their streams)
  PolicySpec policy;     // task fine-tuning's, copying's, or whose training states the detector learns
  bool baseline = true;  // as loaded: no task fine-tuning; the detector's zero-state training states
  std::string intervention = "none (analysis)";       // the run's intervention attribute
  nlohmann::json recorded = nlohmann::json::object();  // the run's spec attribute, beside "command"
};

// What the verb's runs share.
struct AnalysisVerb {
  std::string key;         // its analysis (core/analyses/list.h)
  std::string data;        // the corpus whose splits the step reads ("": none)
  int64_t T = 0;           // the training context (0: the model's record; needed by some steps)
  bool evaluate = false;   // first the run's evaluation (its eval group), as every experiment run
  int64_t eval_length = 0, eval_sequences = 32, eval_segment = 512;  // (length 0: 64T)
  std::string save;        // --save: the fine-tuned model's folder ("": not kept)
};

// Runs each of `runs` into a.output (created, or with --append opened; the output rule as every verb)
// and returns each run as the readers give it back, for the verb's table. a.model "" : no model (copying
// trains its own). A failed or cancelled run is marked so in the file before the Error goes on.
std::vector<RunRecord> run_analysis_verb(const RunArgs& a, const std::string& command, const AnalysisVerb& v,
                                         const std::vector<VerbRun>& runs);

}  // namespace statescope::cli

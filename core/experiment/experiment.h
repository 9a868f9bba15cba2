// experiment.h — an experiment spec (JSON) becomes runs: load or build the model, post-train a copy
// with each initial-state policy, evaluate every model far past T, and write everything into one
// experiment file while it goes. Progress is reported through a callback that can cancel.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/base/results.h"
#include "core/experiment/spec.h"  // ExperimentSpec, parse_spec, check_spec
#include "core/store/run_summary.h"  // RunSummary

namespace statescope {

struct ExperimentProgress {
  std::string run;     // run name
  std::string phase;   // "tokenize" (run "data") | "queued" (each run once, in spec order, before any
                       // starts) | "train" | "eval" | an analysis: "effrem", "states", "passkey", "babi", "copying"
  int64_t done = 0, total = 0;
  double rate = 0;     // tokens/s (train) or sequences batches/s (eval)
  double eta_s = 0;
  double loss = 0;     // train only
};
// Return false to cancel: the current run is marked "cancelled" and the file stays valid.
using ExperimentProgressFn = std::function<bool(const ExperimentProgress&)>;
class H5File;
// Called on the running thread (one of them, with jobs > 1) after each run's status is written, with the open experiment file
// (for a live view: read the run's groups back with the experiment_store readers).
using RunDoneFn = std::function<void(const std::string& run, const H5File& file)>;


// Runs `spec_json` (see data/experiments/demo.json and docs/experiment-spec.md), writing `out_path`.
// Throws Error naming the spec field at fault before anything is written. An existing `out_path` is
// refused unless overwrite (then replaced only when the experiment ends, never when it fails), and
// it may not be one of the experiment's inputs (the model folder, the data, the spec file).
// jobs > 1: that many runs at once, on threads sharing the loaded data (clamped to the number of
// runs; the caller sets the intra-op threads, usually 1 per job). Each run's numbers are those of the
// serial experiment at the same intra-op thread count: seeds are per run, never per thread. The
// callbacks are called by one thread at a time; a cancel stops every running job at its next
// step, and a failed run stops the others (they end "cancelled") before its error is rethrown.
// Summaries come back in spec order. jobs < 1 is refused.
// The file follows the output rule (core/base/output_rule.h): written as "<out_path>.partial" and
// renamed when the experiment ends; an existing file is replaced only when every run finished.
// `written_to` receives where the results are: out_path, or the staging name beside an existing
// file that a cancelled or failed experiment left as it was.
// `only` (non-empty): run just these runs of the plan, by name, with the pretraining each uses: each
// with the seeds, data and yardstick it has in the whole experiment, so its numbers are the whole
// experiment's (at the same intra-op thread count). A name that is no run of the plan is refused,
// listing the runs, before anything is written.
std::vector<RunSummary> run_experiment(const std::string& spec_json, const std::string& spec_source,
                                       const std::string& out_path, const ExperimentProgressFn& progress = {},
                                       const RunDoneFn& run_done = {}, bool overwrite = false, int jobs = 1,
                                       std::string* written_to = nullptr, const std::vector<std::string>& only = {});


}  // namespace statescope

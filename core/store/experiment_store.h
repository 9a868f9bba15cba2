// experiment_store.h — the experiment file (DESIGN.md §4): one HDF5 file per experiment, one group
// per run, written while the run goes and readable if the process is killed (flushed after every
// write; the run's status attribute is written last). No LibTorch, no Qt.
//
// Root attributes: format, format_version, creator, created. Run group attributes: spec (JSON),
// model, checkpoint_hash, architecture, intervention, seed, order, versions, device, status, message.
// Datasets: train/{step, loss, lr, grad_norm} (growable); ppl/{position, nll, nll_stderr,
// windowed_nll, excess, excess_stderr}; state_norm/{position, layer, head, norm [layer, position],
// norm_per_head [layer, head, position], a hybrid's model_layer [layer]}; a hybrid's attention_stats/
// {position, layer, head, entropy, first_mass [layer, head, position]}; effrem/{T, t, value [T, t], stderr [T, t]};
// state_stats/{position, layer, head, bin_edges, histogram [layer, position, head, bin], mean, std,
// fitted_mean, fitted_std [layer, head], delta_norm [n_layer, position]}.
// Plottable groups carry NeXus signal/axes attributes.
#pragma once
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/store/h5file.h"
#include "core/base/output_rule.h"
#include "core/store/run_results.h"

namespace statescope {

struct RunInfo {
  std::string name;            // group name, e.g. "passing"
  std::string spec_json;       // the run's spec
  std::string model;           // model id / path
  std::string checkpoint_hash;
  std::string intervention;    // policy label
  uint64_t seed = 0;
  std::string versions;        // statescope, torch
  std::string device;
  std::string architecture;    // model_config.h architecture_line(); "" when not known
  int64_t order = -1;          // the run's place in its experiment's plan (attribute "order": the app's
                               // order and colours, live and reopened alike); -1: none written
};

// How an experiment file is written: under the output rule (core/base/output_rule.h). A new file or
// a replacement (`overwrite`) is written as "<path>.partial" and renamed onto the target when the
// writer closes; an output that is one of the run's `inputs` is refused; one writer per file. The
// target is replaced only when every run this writer began finished; a new file is put in place
// also when a run failed or was cancelled (it replaces nothing and says what happened); a failed
// write discards the staging copy. `in_place`: write the path itself (a training record inside a
// model folder that is itself staged).
struct WriteOptions {
  bool overwrite = false;
  std::vector<std::string> inputs;  // files and folders the run reads
  bool in_place = false;
};

class ExperimentFile {
 public:
  // Creates a new file, or opens one for appending runs. Throws Error naming the path. An append
  // works on a copy ("<path>.partial") renamed over the file when every new run finished, so a
  // failure at any point (disk full, a killed process) leaves the file as it was.
  static std::unique_ptr<ExperimentFile> create(const std::string& path, const WriteOptions& w = {});
  static std::unique_ptr<ExperimentFile> open(const std::string& path, const WriteOptions& w = {});
  ~ExperimentFile();  // close() unless called; its errors are printed (an error is already unwinding)
  // Closes the HDF5 file and ends the output as the rule says. Returns where the results are ("" when
  // a write failed and nothing was kept). Throws Error when closing or renaming fails.
  std::string close();
  const std::string& path() const { return path_; }  // the final name

  // Starts a run group with status "running". An existing run of that name is refused unless `replace`.
  void begin_run(const RunInfo& info, bool replace = false);
  void append_train(const std::string& run, const StepInfo& s);
  void set_status(const std::string& run, const std::string& status, const std::string& message = "");
  H5File& file() { return *f_; }
  // Runs `write` on the file, then flushes it (an analysis's writer, core/analyses/<name>/record.cpp).
  template <class F> void write_group(F&& write) { write(*f_); f_->flush(); }

 private:
  ExperimentFile(std::unique_ptr<H5File> f, std::unique_ptr<StagedOutput> out, std::string path);
  std::unique_ptr<StagedOutput> out_;  // released last (holds the lock); null when written in place
  std::unique_ptr<H5File> f_;
  std::string path_;
  std::map<std::string, std::string> begun_;  // runs this writer began -> their last status
  std::mutex begun_mu_;                       // parallel jobs start and end runs
  int uncaught_ = 0;                  // exceptions in flight when created (commit only on a normal close)
  bool closed_ = false;
};

// The readers of each analysis's group live beside it (core/analyses/<name>/record.h); one run's
// every result: read_run_record (core/store/run_record.h).
std::vector<StepInfo> read_train(const H5File& f, const std::string& run);  // empty if none
SweepCell read_sweep_cell(const H5File& f, const std::string& run);        // empty: not a sweep's run

// Throws Error naming the file unless it is a statescope experiment file this version can read: the
// root attribute 'format' is ours and 'format_version' is not newer than kFormatVersion.
void check_experiment_file(const H5File& f);
// The run groups of an experiment file (groups with a 'status' attribute), in file order.
std::vector<std::string> run_names(const H5File& f);

std::string iso8601_now();
constexpr const char* kFormatName = "statescope-experiment";
constexpr const char* kFormatVersion = "2";  // 2: NeXus attributes, numbers as numbers

}  // namespace statescope

// common.h — small helpers shared by the CLI verbs: the data argument, starting a run in an
// experiment file, and printing shapes.
#pragma once
#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/cli/interrupt.h"
#include "core/base/error.h"
#include "core/base/names.h"
#include "core/data/corpus.h"
#include "core/data/dataset.h"
#include "core/store/experiment_store.h"
#include "core/model/model_registry.h"
#include "core/compute/runtime.h"
#include "core/dist/comm.h"
#include "progress.h"
#include "core/base/version.h"

namespace statescope::cli {

// The data argument, tokenized with the model directory's tokenizer ("" = bytes, a model trained from
// scratch) through the token cache; first-time tokenization shows its progress.
// A token count flag (--T): a whole number in [lo, 2^40], said plainly ("-3" was once taken as unset).
inline CLI::Validator token_count(int64_t lo = 1) {
  return CLI::Validator(
      [lo](std::string& v) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || errno != 0 || n < lo || n > (1LL << 40))
          return "must be a whole number of tokens from " + std::to_string(lo) + " to 2^40, got " + v;
        return "";
      },
      "TOKENS");
}

inline Corpus load_corpus(const std::string& data, const std::string& model_dir, int64_t model_vocab) {
  ProgressLine line;
  auto c = load_model_data(data, model_dir, model_vocab, {}, tokenize_progress(line, data));
  line.done();
  return c;
}

// The options every measuring verb shares: the model, the experiment file, the run's name in it,
// and whether to add the run to an existing file instead of creating it.
struct RunArgs {
  std::string model, output, run;
  bool append = false, overwrite = false, replace_run = false;
};
inline void add_run_options(CLI::App& app, RunArgs& a, const std::string& default_run) {
  a.run = default_run;
  app.add_option("--model", a.model, "model directory, 'embedded', or a Hugging Face id (owner/name[@revision]) in the local cache ('models' lists them)")->required();
  app.add_option("--output,-o", a.output, "experiment file (HDF5) to write")->required();
  app.add_option("--run", a.run, "run (group) name in the file")->capture_default_str();
  app.add_flag("--append", a.append, "add the run to an existing experiment file instead of creating it");
  app.add_flag("--overwrite", a.overwrite, "replace an existing output file (renamed into place when the run ends)");
  app.add_flag("--replace-run", a.replace_run, "with --append: replace a run of the same name");
}

// A verb that measures a model on a corpus's validation split: the run's options and --data.
struct MeasureArgs : RunArgs {
  std::string data = "embedded";
};
inline void add_measure_options(CLI::App& app, MeasureArgs& a, const std::string& default_run) {
  add_run_options(app, a, default_run);
  app.add_option("--data", a.data,
                 "'embedded', a folder, .jsonl, .u16/.u32 token file or text file (.gz/.xz/.zst too); its "
                 "validation split is read (see 'data')")
      ->capture_default_str();
}

// Creates (or with --append, opens) the experiment file and starts run `run` with status "running".
// The output may not be one of the run's inputs (the model folder, the data).
inline std::unique_ptr<ExperimentFile> start_run(const RunArgs& a, const std::string& spec_json,
                                                 const std::string& model_dir, const std::string& intervention,
                                                 uint64_t seed, const std::string& data = "") {
  check_name(a.run, "--run", "run name");  // before any file is made
  WriteOptions w;
  w.overwrite = a.overwrite;
  w.inputs = {model_dir, data};
  // Data parallel: ranks other than 0 write a scratch file that is thrown away (dist::rank_output).
  const std::string out = dist::rank_output(a.output);
  auto file = a.append && out == a.output ? ExperimentFile::open(out, w)
                                          : ExperimentFile::create(out, out == a.output ? w : WriteOptions{});
  file->begin_run({a.run, spec_json, model_dir, weights_hash(model_dir), intervention, seed,
                   std::string(kVersionString) + ", " + runtime_summary(), compute_summary()},
                  a.replace_run);
  return file;
}


// Runs `measure` for run `run` of `file`; on an error the run's status becomes "failed" (with the
// message) before the error goes on, so the file never says "running" for a run that died.
template <class F>
auto measure_run(ExperimentFile& file, const std::string& run, F&& measure) {
  try {
    return measure();
  } catch (const Error& e) {
    if (!file.file().failed()) file.set_status(run, status_after("failed"), e.what());  // never after a failed write
    throw;
  }
}

inline std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace statescope::cli

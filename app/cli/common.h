// common.h — small helpers shared by the CLI verbs: the data argument, starting a run in an
// experiment file, and printing shapes.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/data/corpus.h"
#include "core/data/dataset.h"
#include "core/store/experiment_store.h"
#include "core/model/model_registry.h"
#include "core/compute/runtime.h"
#include "progress.h"
#include "core/base/version.h"

namespace statescope::cli {

// The data argument, tokenized with the model directory's tokenizer ("" = bytes, a model trained from
// scratch) through the token cache; first-time tokenization shows its progress.
inline Corpus load_corpus(const std::string& data, const std::string& model_dir, int64_t model_vocab) {
  ProgressLine line;
  auto c = load_model_data(data, model_dir, model_vocab, {}, tokenize_progress(line, data));
  line.done();
  return c;
}

// Creates (or with `append`, opens) the experiment file and starts run `run` with status "running".
inline std::unique_ptr<ExperimentFile> start_run(const std::string& output, bool append, const std::string& run,
                                                 const std::string& spec_json, const std::string& model_dir,
                                                 const std::string& intervention, uint64_t seed) {
  auto file = append ? ExperimentFile::open(output) : ExperimentFile::create(output);
  file->begin_run({run, spec_json, model_dir, weights_hash(model_dir), intervention, seed,
                   std::string(kVersionString) + ", " + runtime_summary(), compute_device() + " " + compute_precision()});
  return file;
}

inline std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace statescope::cli

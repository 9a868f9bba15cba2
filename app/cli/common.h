// common.h — small helpers shared by the CLI verbs: the data argument, starting a run in an
// experiment file, and printing shapes.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/corpus.h"
#include "core/experiment_store.h"
#include "core/model_registry.h"
#include "core/runtime.h"

namespace statescope::cli {

// "embedded" -> the Austen corpus; anything else -> a .txt file or folder.
inline Corpus load_corpus(const std::string& data) {
  return data == "embedded" ? load_austen(default_corpus_path()) : load_text(data);
}

// Creates (or with `append`, opens) the experiment file and starts run `run` with status "running".
inline std::unique_ptr<ExperimentFile> start_run(const std::string& output, bool append, const std::string& run,
                                                 const std::string& spec_json, const std::string& model_dir,
                                                 const std::string& intervention, uint64_t seed) {
  auto file = append ? ExperimentFile::open(output) : ExperimentFile::create(output);
  file->begin_run({run, spec_json, model_dir, weights_hash(model_dir), intervention, seed,
                   std::string("statescope 0.1.0, ") + runtime_summary(), "cpu"});
  return file;
}

inline std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

}  // namespace statescope::cli

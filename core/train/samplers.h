// samplers.h — training batches from a corpus, reproducible from a seed.
//
// WindowSampler: independent random windows (zero / noise / state-passing policies).
// StreamSampler: TBTT — each batch row walks one document in consecutive windows; a row that runs
// out of text starts a new document and is flagged `fresh` (its carried state must be reset).
// Both return tokens [B, T+1] int64: inputs are [:, :T], targets [:, 1:]; consecutive stream
// windows overlap by one token so no target is skipped.
#pragma once
#include <torch/types.h>

#include <random>
#include <string>

#include "core/data/corpus.h"

namespace statescope {

class WindowSampler {
 public:
  WindowSampler(const std::vector<Document>& docs, int64_t T, uint64_t seed);
  torch::Tensor next(int64_t batch);  // [batch, T+1] int64
  std::string rng_state() const;
  void set_rng_state(const std::string& s);

 private:
  const std::vector<Document>& docs_;
  int64_t T_;
  std::vector<int64_t> eligible_;  // documents longer than T
  std::vector<double> weights_;    // proportional to the number of windows in each
  std::mt19937_64 rng_;
};

class StreamSampler {
 public:
  StreamSampler(const std::vector<Document>& docs, int64_t T, int64_t batch, uint64_t seed);
  struct Batch {
    torch::Tensor tokens;  // [batch, T+1] int64
    torch::Tensor fresh;   // [batch] bool: the row starts a new document this step
  };
  Batch next();
  // Row r's (document, offset) — for tests and resume.
  std::pair<int64_t, int64_t> cursor(int64_t row) const { return {doc_[row], pos_[row]}; }
  std::string state() const;
  void set_state(const std::string& s);

 private:
  void start_new_document(int64_t row);
  const std::vector<Document>& docs_;
  int64_t T_, B_;
  std::vector<int64_t> eligible_, doc_, pos_;
  std::mt19937_64 rng_;
};

}  // namespace statescope

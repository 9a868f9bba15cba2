// samplers.h — training batches from a corpus, reproducible from a seed.
//
// WindowSampler: independent random windows (zero / noise / state-passing policies).
// StreamSampler: TBTT — each batch row walks one document in consecutive windows; a row that runs
// out of text starts a new document and is flagged `fresh` (its carried state must be reset).
// Both return tokens [B, T+1] int64: inputs are [:, :T], targets [:, 1:]; consecutive stream
// windows overlap by one token so no target is skipped. When any document has a loss_mask, they
// also return mask [B, T+1] float (1: the token counts as a target; documents without one: all 1).
#pragma once
#include <torch/types.h>

#include <random>
#include <string>

#include "core/data/corpus.h"

namespace statescope {

// Throws Error naming the document when a loss_mask's size differs from its tokens'; returns
// whether any document has one.
bool check_loss_masks(const std::vector<Document>& docs);

class WindowSampler {
 public:
  WindowSampler(const std::vector<Document>& docs, int64_t T, uint64_t seed);
  // [batch, T+1] int64; *mask (when given) = [batch, T+1] float, or undefined when no document masks.
  torch::Tensor next(int64_t batch, torch::Tensor* mask = nullptr);
  bool masked() const { return masked_; }
  std::string rng_state() const;
  void set_rng_state(const std::string& s);

 private:
  const std::vector<Document>& docs_;
  int64_t T_;
  std::vector<int64_t> eligible_;  // documents longer than T
  std::vector<double> weights_;    // proportional to the number of windows in each
  std::mt19937_64 rng_;
  bool masked_ = false;            // some document has a loss_mask
};

class StreamSampler {
 public:
  StreamSampler(const std::vector<Document>& docs, int64_t T, int64_t batch, uint64_t seed);
  struct Batch {
    torch::Tensor tokens;  // [batch, T+1] int64
    torch::Tensor fresh;   // [batch] bool: the row starts a new document this step
    torch::Tensor mask;    // [batch, T+1] float, undefined when no document masks
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
  bool masked_ = false;
};

}  // namespace statescope

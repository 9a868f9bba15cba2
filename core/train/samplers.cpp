// samplers.cpp — random windows and consecutive streams.
#include "core/train/samplers.h"

#include <torch/torch.h>

#include <sstream>

#include "core/base/error.h"

namespace statescope {
namespace {

// Copies doc's mask [from, from + n) into out (float), or ones when the document has none.
void copy_mask(const Document& doc, int64_t from, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = doc.loss_mask.empty() ? 1.f : static_cast<float>(doc.loss_mask[from + i] != 0);
}

}  // namespace

bool check_loss_masks(const std::vector<Document>& docs) {
  bool any = false;
  for (const auto& d : docs) {
    if (d.loss_mask.empty()) continue;
    if (d.loss_mask.size() != static_cast<size_t>(d.tokens.size()))
      throw Error("training document '" + d.name + "': loss_mask has " + std::to_string(d.loss_mask.size()) +
                  " entries for " + std::to_string(d.tokens.size()) + " tokens");
    any = true;
  }
  return any;
}

WindowSampler::WindowSampler(const std::vector<Document>& docs, int64_t T, uint64_t seed)
    : docs_(docs), T_(T), rng_(seed), masked_(check_loss_masks(docs)) {
  for (size_t i = 0; i < docs.size(); ++i) {
    const int64_t n = static_cast<int64_t>(docs[i].tokens.size());
    if (n > T) {
      eligible_.push_back(static_cast<int64_t>(i));
      weights_.push_back(static_cast<double>(n - T));
    }
  }
  if (eligible_.empty()) throw Error("training text has no document longer than T = " + std::to_string(T));
}

torch::Tensor WindowSampler::next(int64_t batch, torch::Tensor* mask) {
  auto out = torch::empty({batch, T_ + 1}, torch::kInt64);  // [batch, T+1]
  torch::Tensor m;
  if (mask && masked_) m = torch::empty({batch, T_ + 1}, torch::kFloat32);  // [batch, T+1]
  std::discrete_distribution<size_t> pick(weights_.begin(), weights_.end());
  for (int64_t b = 0; b < batch; ++b) {
    const auto& d = docs_[eligible_[pick(rng_)]];
    std::uniform_int_distribution<int64_t> start(0, static_cast<int64_t>(d.tokens.size()) - T_ - 1);
    const int64_t from = start(rng_);
    d.tokens.copy(from, T_ + 1, out.data_ptr<int64_t>() + b * (T_ + 1));
    if (m.defined()) copy_mask(d, from, T_ + 1, m.data_ptr<float>() + b * (T_ + 1));
  }
  if (mask) *mask = m;
  return out;
}

std::string WindowSampler::rng_state() const {
  std::ostringstream s;
  s << rng_;
  return s.str();
}

void WindowSampler::set_rng_state(const std::string& str) {
  std::istringstream s(str);
  s >> rng_;
}

StreamSampler::StreamSampler(const std::vector<Document>& docs, int64_t T, int64_t batch, uint64_t seed)
    : docs_(docs), T_(T), B_(batch), doc_(batch, -1), pos_(batch, 0), rng_(seed), masked_(check_loss_masks(docs)) {
  for (size_t i = 0; i < docs.size(); ++i)
    if (static_cast<int64_t>(docs[i].tokens.size()) > T) eligible_.push_back(static_cast<int64_t>(i));
  if (eligible_.empty()) throw Error("training text has no document longer than T = " + std::to_string(T));
}

void StreamSampler::start_new_document(int64_t row) {
  std::uniform_int_distribution<size_t> pick(0, eligible_.size() - 1);
  doc_[row] = eligible_[pick(rng_)];
  pos_[row] = 0;
}

StreamSampler::Batch StreamSampler::next() {
  Batch b{torch::empty({B_, T_ + 1}, torch::kInt64), torch::zeros({B_}, torch::kBool)};
  auto fresh = b.fresh.accessor<bool, 1>();
  if (masked_) b.mask = torch::empty({B_, T_ + 1}, torch::kFloat32);  // [B, T+1]
  for (int64_t r = 0; r < B_; ++r) {
    if (doc_[r] < 0 || pos_[r] + T_ + 1 > static_cast<int64_t>(docs_[doc_[r]].tokens.size())) {
      start_new_document(r);
      fresh[r] = true;
    }
    docs_[doc_[r]].tokens.copy(pos_[r], T_ + 1, b.tokens.data_ptr<int64_t>() + r * (T_ + 1));
    if (masked_) copy_mask(docs_[doc_[r]], pos_[r], T_ + 1, b.mask.data_ptr<float>() + r * (T_ + 1));
    pos_[r] += T_;  // next window starts at this window's last token: targets are contiguous
  }
  return b;
}

std::string StreamSampler::state() const {
  std::ostringstream s;
  s << rng_ << "\n";
  for (int64_t r = 0; r < B_; ++r) s << doc_[r] << " " << pos_[r] << " ";
  return s.str();
}

void StreamSampler::set_state(const std::string& str) {
  std::istringstream s(str);
  s >> rng_;
  for (int64_t r = 0; r < B_; ++r) s >> doc_[r] >> pos_[r];
  if (!s) throw Error("stream sampler state is corrupt");
}

}  // namespace statescope

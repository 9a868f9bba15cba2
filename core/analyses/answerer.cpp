// answerer.cpp — the model behind the Answerer interface: greedy decoding and candidate scoring.
#include "core/analyses/answerer.h"

#include <torch/torch.h>

#include "core/base/error.h"

namespace statescope {

torch::Tensor greedy_decode(RecurrentLM& model, const torch::Tensor& prompt, int64_t n, const ModelState* init) {
  torch::NoGradGuard ng;
  // With --scan fused on a GPU: the chunked scan kernel for the prompt, the step kernel per token.
  const ForwardOptions fo = model->forward_options();
  auto out = model->forward(prompt, init, fo);
  std::vector<torch::Tensor> toks;
  auto next = out.logits.select(1, prompt.size(1) - 1).argmax(-1, /*keepdim=*/true);  // [b, 1]
  ModelState st = out.final_state;
  for (int64_t i = 0; i < n; ++i) {
    toks.push_back(next);
    if (i + 1 == n) break;
    auto o = model->forward(next, &st, fo);
    st = o.final_state;
    next = o.logits.select(1, 0).argmax(-1, true);
  }
  return torch::cat(toks, 1);  // [b, n]
}

namespace {

torch::Tensor to_tensor(const TokenRows& rows) {
  const int64_t b = static_cast<int64_t>(rows.size());
  if (b == 0) throw Error("answerer: no prompts");
  const int64_t L = static_cast<int64_t>(rows[0].size());
  if (L == 0) throw Error("answerer: an empty prompt");
  auto t = torch::empty({b, L}, torch::kInt64);  // [b, L]
  auto a = t.accessor<int64_t, 2>();
  for (int64_t i = 0; i < b; ++i) {
    if (static_cast<int64_t>(rows[i].size()) != L) throw Error("answerer: prompts of one call must have one length");
    for (int64_t k = 0; k < L; ++k) a[i][k] = rows[i][k];
  }
  return t;
}

TokenRows to_rows(const torch::Tensor& t) {  // [b, n] -> rows
  auto c = t.cpu().to(torch::kInt64).contiguous();
  TokenRows rows(static_cast<size_t>(c.size(0)));
  auto a = c.accessor<int64_t, 2>();
  for (int64_t i = 0; i < c.size(0); ++i)
    for (int64_t k = 0; k < c.size(1); ++k) rows[i].push_back(static_cast<int32_t>(a[i][k]));
  return rows;
}

class ModelAnswerer : public Answerer {
 public:
  ModelAnswerer(RecurrentLM& model, const ModelState* init) : model_(model) {
    if (init) init_ = *init;
  }
  TokenRows greedy(const TokenRows& prompts, int64_t n) override {
    model_->eval();
    auto p = to_tensor(prompts).to(model_->output_weight().device());  // [b, L]
    return to_rows(greedy_decode(model_, p, n, init()));               // [b, n]
  }
  std::vector<std::vector<double>> loglik(const TokenRows& prompts, const TokenRows& candidates) override {
    torch::NoGradGuard ng;
    model_->eval();
    const auto dev = model_->output_weight().device();
    auto p = to_tensor(prompts).to(dev);  // [b, L]
    const int64_t b = p.size(0), L = p.size(1);
    auto out = model_->forward(p, init());
    auto last = torch::log_softmax(out.logits.select(1, L - 1).to(torch::kFloat64), -1).cpu();  // [b, V]
    std::vector<std::vector<double>> score(static_cast<size_t>(b), std::vector<double>(candidates.size()));
    for (size_t c = 0; c < candidates.size(); ++c) {
      const auto& w = candidates[c];
      if (w.empty()) throw Error("answerer: an empty candidate");
      auto sc = last.select(1, w[0]).clone();  // [b]
      if (w.size() > 1) {
        auto toks = torch::empty({b, static_cast<int64_t>(w.size())}, torch::kInt64);  // [b, |w|]
        for (size_t k = 0; k < w.size(); ++k) toks.select(1, static_cast<int64_t>(k)).fill_(w[k]);
        auto o = model_->forward(toks.to(dev), &out.final_state);
        auto lp = torch::log_softmax(o.logits.to(torch::kFloat64), -1).cpu();  // [b, |w|, V]
        for (size_t k = 1; k < w.size(); ++k) sc += lp.select(1, static_cast<int64_t>(k) - 1).select(1, w[k]);
      }
      for (int64_t i = 0; i < b; ++i) score[i][c] = sc[i].item<double>();
    }
    return score;
  }

 private:
  const ModelState* init() const { return init_.empty() ? nullptr : &init_; }
  RecurrentLM& model_;
  ModelState init_;
};

}  // namespace

std::unique_ptr<Answerer> model_answerer(RecurrentLM& model, const ModelState* init) {
  return std::make_unique<ModelAnswerer>(model, init);
}

}  // namespace statescope

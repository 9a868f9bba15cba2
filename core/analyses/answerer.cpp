// answerer.cpp — the model behind the Answerer interface: greedy decoding and candidate scoring.
#include "core/analyses/answerer.h"

#include <torch/torch.h>

#include <algorithm>

#include "core/base/error.h"

namespace statescope {

torch::Tensor greedy_decode(RecurrentLM& model, const torch::Tensor& prompt, int64_t n, const ModelState* init) {
  torch::NoGradGuard ng;
  // With --scan fused on a GPU: the chunked scan kernel for the prompt, the step kernel per token.
  // Positions count from the prompt's first token (position-dependent interventions read them).
  auto out = model->forward(prompt, init, model->forward_options());
  std::vector<torch::Tensor> toks;
  auto next = out.logits.select(1, prompt.size(1) - 1).argmax(-1, /*keepdim=*/true);  // [b, 1]
  ModelState st = out.final_state;
  for (int64_t i = 0; i < n; ++i) {
    toks.push_back(next);
    if (i + 1 == n) break;
    auto o = model->forward(next, &st, model->forward_options(prompt.size(1) + i));
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

// Rows of one forward: at most kAnswerElements prompt tokens x d_model, so a call's activations stay
// near a GiB whatever the number of prompts (200 passkey prompts of 2048 bytes in one forward took
// 13 GiB at d_model 64). Each row's answer does not depend on the other rows of its forward.
constexpr int64_t kAnswerElements = int64_t{1} << 22;

// Rows [r0, r0 + g) of an initial state that has one row per prompt.
ModelState rows_of(const ModelState& s, int64_t r0, int64_t g) {
  ModelState out;
  for (const auto& l : s)
    out.push_back({l.ssm.defined() ? l.ssm.narrow(0, r0, g) : l.ssm, l.conv.defined() ? l.conv.narrow(0, r0, g) : l.conv});
  return out;
}

class ModelAnswerer : public Answerer {
 public:
  ModelAnswerer(RecurrentLM& model, const ModelState* init, int64_t max_elements)
      : model_(model), max_elements_(max_elements > 0 ? max_elements : kAnswerElements) {
    if (init) init_ = *init;
  }
  TokenRows greedy(const TokenRows& prompts, int64_t n) override {
    model_->eval();
    TokenRows out;
    for_groups(prompts, [&](const TokenRows& part, const ModelState* init) {
      auto p = to_tensor(part).to(model_->output_weight().device());  // [g, L]
      for (auto& row : to_rows(greedy_decode(model_, p, n, init))) out.push_back(std::move(row));  // [g, n]
    });
    return out;  // [b, n]
  }
  std::vector<std::vector<double>> loglik(const TokenRows& prompts, const TokenRows& candidates) override {
    std::vector<std::vector<double>> out;
    for_groups(prompts, [&](const TokenRows& part, const ModelState* init) {
      for (auto& row : loglik_rows(part, candidates, init)) out.push_back(std::move(row));
    });
    return out;  // [b][c]
  }

 private:
  // Calls f(rows, their initial state) on consecutive groups of prompts, sized by max_elements_.
  template <class F>
  void for_groups(const TokenRows& prompts, F&& f) {
    if (prompts.empty()) throw Error("answerer: no prompts");
    const int64_t b = static_cast<int64_t>(prompts.size());
    const int64_t per_row = std::max<int64_t>(1, static_cast<int64_t>(prompts[0].size()) * d_model(model_->model_config()));
    const int64_t g = std::clamp<int64_t>(max_elements_ / per_row, 1, b);
    const bool row_init = !init_.empty() && init_[0].ssm.defined() && init_[0].ssm.size(0) == b && b > g;
    for (int64_t r0 = 0; r0 < b; r0 += g) {
      const int64_t k = std::min(g, b - r0);
      const TokenRows part(prompts.begin() + r0, prompts.begin() + r0 + k);
      if (row_init) {
        const ModelState s = rows_of(init_, r0, k);
        f(part, &s);
      } else {
        f(part, init());
      }
    }
  }
  std::vector<std::vector<double>> loglik_rows(const TokenRows& prompts, const TokenRows& candidates, const ModelState* init) {
    torch::NoGradGuard ng;
    model_->eval();
    const auto dev = model_->output_weight().device();
    auto p = to_tensor(prompts).to(dev);  // [b, L]
    const int64_t b = p.size(0), L = p.size(1);
    auto out = model_->forward(p, init);
    auto last = torch::log_softmax(out.logits.select(1, L - 1).to(torch::kFloat64), -1).cpu();  // [b, V]
    std::vector<std::vector<double>> score(static_cast<size_t>(b), std::vector<double>(candidates.size()));
    for (size_t c = 0; c < candidates.size(); ++c) {
      const auto& w = candidates[c];
      if (w.empty()) throw Error("answerer: an empty candidate");
      auto sc = last.select(1, w[0]).clone();  // [b]
      if (w.size() > 1) {
        auto toks = torch::empty({b, static_cast<int64_t>(w.size())}, torch::kInt64);  // [b, |w|]
        for (size_t k = 0; k < w.size(); ++k) toks.select(1, static_cast<int64_t>(k)).fill_(w[k]);
        auto o = model_->forward(toks.to(dev), &out.final_state, model_->forward_options(L));
        auto lp = torch::log_softmax(o.logits.to(torch::kFloat64), -1).cpu();  // [b, |w|, V]
        for (size_t k = 1; k < w.size(); ++k) sc += lp.select(1, static_cast<int64_t>(k) - 1).select(1, w[k]);
      }
      for (int64_t i = 0; i < b; ++i) score[i][c] = sc[i].item<double>();
    }
    return score;
  }

  const ModelState* init() const { return init_.empty() ? nullptr : &init_; }
  RecurrentLM& model_;
  int64_t max_elements_;
  ModelState init_;
};

}  // namespace

std::unique_ptr<Answerer> model_answerer(RecurrentLM& model, const ModelState* init, int64_t max_elements) {
  return std::make_unique<ModelAnswerer>(model, init, max_elements);
}

}  // namespace statescope

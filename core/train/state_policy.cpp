// state_policy.cpp — the five initial-state policies.
#include "core/train/state_policy.h"

#include <torch/torch.h>

#include <sstream>

#include "core/base/error.h"
#include "core/dist/comm.h"

namespace statescope {
namespace {

class ZeroPolicy : public InitialStatePolicy {
 public:
  explicit ZeroPolicy(PolicySpec s) : spec_(std::move(s)) {}
  const PolicySpec& spec() const override { return spec_; }
  ModelState initial(const RecurrentLM&, int64_t, const PolicyStep&) override { return {}; }

 private:
  PolicySpec spec_;
};

// Gaussian SSM state with mean/std per (layer, group) (Mamba-2: head); conv state zero.
ModelState gaussian_state(const RecurrentLM& model, int64_t batch, const torch::Tensor& mean, const torch::Tensor& std,
                          torch::Generator& gen) {
  ModelState s = model->zero_state(batch);
  const int64_t G = model->state_layout().groups;
  for (size_t i = 0; i < s.size(); ++i) {
    auto& ssm = s[i].ssm;  // [B, layout.ssm...], viewed [B, G, group entries]
    auto noise = at::normal(0.0, 1.0, ssm.sizes(), gen, ssm.options().device(torch::kCPU)).to(ssm.device());
    ssm = (mean[i].view({1, G, 1}).to(ssm) + std[i].view({1, G, 1}).to(ssm) * noise.view({batch, G, -1})).view(ssm.sizes());
  }
  return s;
}

class RandomNoisePolicy : public InitialStatePolicy {
 public:
  RandomNoisePolicy(PolicySpec s, uint64_t seed) : spec_(std::move(s)), gen_(at::detail::createCPUGenerator(seed)) {}
  const PolicySpec& spec() const override { return spec_; }
  ModelState initial(const RecurrentLM& model, int64_t batch, const PolicyStep&) override {
    const auto& c = model->state_layout();
    auto mean = torch::zeros({c.n_layer, c.groups}, torch::kFloat64);
    auto std = torch::full({c.n_layer, c.groups}, spec_.sigma, torch::kFloat64);
    return gaussian_state(model, batch, mean, std, gen_);
  }
  std::vector<torch::Tensor> save_state() const override { return {gen_.get_state()}; }
  void load_state(const std::vector<torch::Tensor>& s) override { gen_.set_state(s.at(0)); }

 private:
  PolicySpec spec_;
  torch::Generator gen_;
};

class FittedNoisePolicy : public InitialStatePolicy {
 public:
  FittedNoisePolicy(PolicySpec s, uint64_t seed) : spec_(std::move(s)), gen_(at::detail::createCPUGenerator(seed)) {}
  const PolicySpec& spec() const override { return spec_; }
  bool wants_calibration() const override { return true; }
  ModelState initial(const RecurrentLM& model, int64_t batch, const PolicyStep&) override {
    if (!mean_.defined()) return {};  // nothing fitted yet: zero, like the pretraining it follows
    return gaussian_state(model, batch, mean_, std_, gen_);
  }
  // EMA of first and second moments, so the std is of the pooled distribution over time.
  void observe(const ModelState& fin, const PolicyStep& step) override {
    if (spec_.fit_length > 0 && step.step > 0) return;  // fitted at fit_length in calibration, then fixed
    auto [m, sd] = ssm_state_moments(fin, step.groups);
    auto m2 = sd.square() + m.square();
    if (auto* g = dist::group()) {  // every rank the same pooled moments of the whole batch (equal rows per rank)
      std::vector<torch::Tensor> both{m, m2};
      g->all_reduce(both);
      m = both[0] / g->world();
      m2 = both[1] / g->world();
    }
    if (!m1_.defined()) {
      m1_ = m;
      m2_ = m2;
    } else {
      m1_ = spec_.ema * m1_ + (1 - spec_.ema) * m;
      m2_ = spec_.ema * m2_ + (1 - spec_.ema) * m2;
    }
    mean_ = m1_;
    std_ = (m2_ - m1_.square()).clamp_min(0).sqrt();
  }
  torch::Tensor fitted_mean() const override { return mean_; }
  torch::Tensor fitted_std() const override { return std_; }
  std::vector<torch::Tensor> save_state() const override { return {gen_.get_state(), m1_, m2_}; }
  void load_state(const std::vector<torch::Tensor>& s) override {
    gen_.set_state(s.at(0));
    m1_ = s.at(1);
    m2_ = s.at(2);
    if (m1_.defined() && m1_.numel() > 0) {
      mean_ = m1_;
      std_ = (m2_ - m1_.square()).clamp_min(0).sqrt();
    } else {
      m1_ = m2_ = mean_ = std_ = torch::Tensor();
    }
  }

 private:
  PolicySpec spec_;
  torch::Generator gen_;
  torch::Tensor m1_, m2_, mean_, std_;  // [n_layer, groups] float64
};

// State passing and TBTT: the previous batch's final states, detached. TBTT rows that start a new
// document get zeros instead (their previous segment belonged to another document).
class PassingPolicy : public InitialStatePolicy {
 public:
  explicit PassingPolicy(PolicySpec s) : spec_(std::move(s)) {}
  const PolicySpec& spec() const override { return spec_; }
  bool wants_stream() const override { return spec_.kind == "tbtt"; }
  bool per_row() const override { return true; }
  ModelState initial(const RecurrentLM& model, int64_t batch, const PolicyStep& step) override {
    if (last_.empty()) return {};
    if (last_[0].ssm.size(0) != batch)
      throw Error("state passing needs a constant batch size (" + std::to_string(last_[0].ssm.size(0)) + " then " +
                  std::to_string(batch) + ")");
    ModelState s = last_;
    const bool pass_conv = spec_.conv_passed();
    for (auto& l : s) {
      if (!pass_conv) l.conv = torch::Tensor();
      if (step.fresh.defined()) {
        auto keep = step.fresh.logical_not().to(l.ssm.device());
        auto rows = [&](const torch::Tensor& t) {  // keep [B] -> [B, 1, ...] against t
          std::vector<int64_t> shape(t.dim(), 1);
          shape[0] = -1;
          return keep.view(shape).to(t.scalar_type());
        };
        l.ssm = l.ssm * rows(l.ssm);
        if (l.conv.defined()) l.conv = l.conv * rows(l.conv);
      }
    }
    return s;
  }
  // A hybrid's attention caches are not passed: attention starts empty (state_policy.h).
  void observe(const ModelState& fin, const PolicyStep&) override {
    last_ = detach_state(fin);
    last_.attention.clear();
  }
  std::vector<torch::Tensor> save_state() const override {
    std::vector<torch::Tensor> out;
    for (auto& l : last_) {
      out.push_back(l.ssm);
      out.push_back(l.conv.defined() ? l.conv : torch::empty({0}));
    }
    return out;
  }
  void load_state(const std::vector<torch::Tensor>& s) override {
    last_.clear();
    for (size_t i = 0; i + 1 < s.size(); i += 2)
      last_.push_back({s[i], s[i + 1].numel() ? s[i + 1] : torch::Tensor()});
  }

 private:
  PolicySpec spec_;
  ModelState last_;
};

}  // namespace

std::pair<torch::Tensor, torch::Tensor> ssm_state_moments(const ModelState& s, int64_t groups) {
  std::vector<torch::Tensor> means, stds;
  for (auto& l : s) {
    const int64_t B = l.ssm.size(0), G = groups > 0 ? groups : l.ssm.size(1);
    auto x = l.ssm.detach().to(torch::kCPU, torch::kFloat64).reshape({B, G, -1}).transpose(0, 1).reshape({G, -1});  // [G, B * group entries]
    means.push_back(x.mean(1));
    stds.push_back(x.std(1, /*unbiased=*/false));
  }
  return {torch::stack(means), torch::stack(stds)};
}

std::unique_ptr<InitialStatePolicy> make_policy(const PolicySpec& spec, uint64_t seed) {
  check_policy(spec);
  if (spec.kind == "zero") return std::make_unique<ZeroPolicy>(spec);
  if (spec.kind == "random") return std::make_unique<RandomNoisePolicy>(spec, seed);
  if (spec.kind == "fitted") return std::make_unique<FittedNoisePolicy>(spec, seed);
  return std::make_unique<PassingPolicy>(spec);  // passing | tbtt (check_policy knows no other kind)
}

}  // namespace statescope

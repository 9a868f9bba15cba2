// residual_lm_of.h — what the architectures' LMs share beyond ResidualLMImpl, written once: the
// config type, the mixers in layer order, the parameters that take no weight decay (every norm's
// weight and the names ending in what the architecture says), make_empty, and mix() handing layer
// i's input to its mixer. An architecture's LM is its constructor (build the layers) and its
// reset_parameters.
#pragma once
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/model/residual_lm.h"

namespace statescope {

template <class Derived, class Config, class Mixer>
class ResidualLMOf : public ResidualLMImpl {
 public:
  const Config& config() const { return std::get<Config>(mc_); }
  Mixer mixer(int64_t i) const { return mixers_.at(i); }
  std::vector<std::string> no_weight_decay() const override { return norms_and_names_ending(no_decay_endings_); }
  std::shared_ptr<RecurrentLMImpl> make_empty() const override { return std::make_shared<Derived>(config()); }

 protected:
  // `what` names the config in errors; `no_decay_endings`: the parameter names (besides norms) that
  // take no weight decay, e.g. {"A_log", ".bias"}.
  ResidualLMOf(const Config& c, const std::string& what, std::vector<std::string> no_decay_endings)
      : ResidualLMImpl(c, what), no_decay_endings_(std::move(no_decay_endings)) {}
  torch::Tensor mix(int64_t i, const torch::Tensor& u, const LayerState* init, const ForwardOptions& opt,
                    LayerState& final_state, torch::Tensor* norms, torch::Tensor* delta_norms,
                    torch::Tensor* log_decay) override {
    return mixers_[i]->forward(u, init, opt, final_state, norms, delta_norms, log_decay);
  }
  // Under no_grad, from one generator seeded with `seed`: the backbone (embeddings, head and MLPs
  // normal(0, backbone_std), norms 1), then init(mixer_impl, gen) for each layer in order.
  template <class F>
  void reset_layers(uint64_t seed, double backbone_std, F&& init) {
    torch::NoGradGuard ng;
    auto gen = at::detail::createCPUGenerator(seed);
    reset_backbone(gen, backbone_std);
    for (auto& mixer : mixers_) init(*mixer, gen);
  }
  std::vector<Mixer> mixers_;

 private:
  std::vector<std::string> no_decay_endings_;
};

}  // namespace statescope

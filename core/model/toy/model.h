// toy/model.h — the toy architecture behind RecurrentLM (config.h). Names: backbone.layers.{i}.mixer.
// {in_proj, out_proj, a_logit}. State per layer: ssm [b, d_model].
#pragma once
#include "core/model/residual_lm_of.h"
#include "core/model/toy/config.h"

namespace statescope {

class ToyMixerImpl : public torch::nn::Module {
 public:
  explicit ToyMixerImpl(const ToyConfig& cfg);
  // u [b, L, d_model] -> [b, L, d_model]; norms [b, L, 1], delta_norm [b, L], log_decay [b, L, 1].
  torch::Tensor forward(const torch::Tensor& u, const LayerState* init, const ForwardOptions& opt, LayerState& final_state,
                        torch::Tensor* norms, torch::Tensor* delta_norm, torch::Tensor* log_decay);
  ToyConfig cfg;
  ParamHolder in_proj{nullptr}, out_proj{nullptr}, a_logit{nullptr};
};
TORCH_MODULE(ToyMixer);

class ToyLMImpl : public ResidualLMOf<ToyLMImpl, ToyConfig, ToyMixer> {
 public:
  explicit ToyLMImpl(const ToyConfig& cfg);
  void reset_parameters(uint64_t seed, double a_min = 1.0, double a_max = 16.0) override;
};
TORCH_MODULE(ToyLM);

}  // namespace statescope

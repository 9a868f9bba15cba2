// gla/model.h — gated linear attention (GLA) behind RecurrentLM, as flash-linear-attention 0.6.0
// builds GLAForCausalLM (fla/models/gla, fla/layers/gla.py).
//
// Names are fla's keys: model.embeddings.weight, model.layers.{i}.attn_norm, model.layers.{i}.attn.
// {q_proj, k_proj, v_proj, g_proj, gk_proj.0, gk_proj.1, o_proj, q_conv1d, k_conv1d, v_conv1d,
// g_norm_swish_gate | g_norm}, model.layers.{i}.mlp_norm, model.layers.{i}.mlp.{gate,up,down}_proj,
// model.norm, lm_head. State per layer: ssm [b, heads, head_k_dim, head_v_dim] (key first; fla's cache
// holds the transpose), conv [b, q|k|v channels, conv_size-1] (oldest first) when use_short_conv.
#pragma once
#include "core/model/gla/config.h"
#include "core/model/residual_lm_of.h"

namespace statescope {

class GLAMixerImpl : public torch::nn::Module {
 public:
  explicit GLAMixerImpl(const GLAConfig& cfg);
  // u [b, L, d_model] (already normed) -> [b, L, d_model]; writes the final state. norms: per head
  // ||S_t||_F [b, L, heads] and ||S_t - S_{t-1}||_F [b, L] when not null; log_decay: the mean over the
  // key dim of the log gate [b, L, heads].
  torch::Tensor forward(const torch::Tensor& u, const LayerState* init, const ForwardOptions& opt, LayerState& final_state,
                        torch::Tensor* norms, torch::Tensor* delta_norm, torch::Tensor* log_decay);
  GLAConfig cfg;
  ParamHolder q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, g_proj{nullptr}, o_proj{nullptr};
  ParamHolder gk_down{nullptr}, gk_up{nullptr};             // gk_proj.0 [16, D], gk_proj.1 [Kg, 16] + bias
  ParamHolder q_conv{nullptr}, k_conv{nullptr}, v_conv{nullptr};  // [C, 1, conv_size] when use_short_conv
  ParamHolder out_norm{nullptr};                            // [head_v_dim] when elementwise_affine
};
TORCH_MODULE(GLAMixer);

class GLALMImpl : public ResidualLMOf<GLALMImpl, GLAConfig, GLAMixer> {
 public:
  explicit GLALMImpl(const GLAConfig& cfg);
  // fla's _init_weights: every linear and conv normal(0, initializer_range), biases 0, embeddings
  // normal(0, initializer_range), norms 1. a_min/a_max must stay at their defaults (GLA has no A).
  void reset_parameters(uint64_t seed, double a_min = 1.0, double a_max = 16.0) override;
};
TORCH_MODULE(GLALM);

}  // namespace statescope

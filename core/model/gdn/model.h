// gdn/model.h — Gated DeltaNet behind RecurrentLM, as flash-linear-attention 0.6.0 builds
// GatedDeltaNetForCausalLM (fla/models/gated_deltanet, fla/layers/gated_deltanet.py).
//
// Names are fla's keys: model.embeddings.weight, model.layers.{i}.attn_norm, model.layers.{i}.attn.
// {A_log, dt_bias, q_proj, k_proj, v_proj, a_proj, b_proj, q_conv1d, k_conv1d, v_conv1d, g_proj,
// o_norm, o_proj}, model.layers.{i}.mlp_norm, model.layers.{i}.mlp.{gate,up,down}_proj, model.norm,
// lm_head. State per layer: ssm [b, value heads, head_dim, head_v_dim] (key first; fla's cache holds
// the transpose [b, HV, V, K]), conv [b, q|k|v channels, conv_size-1] (oldest first) when use_short_conv.
#pragma once
#include "core/model/gdn/config.h"
#include "core/model/residual_lm_of.h"

namespace statescope {

class GatedDeltaNetMixerImpl : public torch::nn::Module {
 public:
  explicit GatedDeltaNetMixerImpl(const GatedDeltaNetConfig& cfg);
  // u [b, L, d_model] (already normed) -> [b, L, d_model]; writes the final state. norms: per value
  // head ||S_t||_F [b, L, HV] and ||S_t - S_{t-1}||_F [b, L] when not null; log_decay: g [b, L, HV].
  torch::Tensor forward(const torch::Tensor& u, const LayerState* init, const ForwardOptions& opt, LayerState& final_state,
                        torch::Tensor* norms, torch::Tensor* delta_norm, torch::Tensor* log_decay);
  GatedDeltaNetConfig cfg;
  torch::Tensor A_log, dt_bias;                                        // [HV] each
  ParamHolder q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr};      // [K, D], [K, D], [V, D]
  ParamHolder a_proj{nullptr}, b_proj{nullptr};                       // [HV, D] each
  ParamHolder q_conv{nullptr}, k_conv{nullptr}, v_conv{nullptr};      // [C, 1, conv_size] when use_short_conv
  ParamHolder g_proj{nullptr}, o_norm{nullptr}, o_proj{nullptr};      // [V, D] (use_gate), [head_v_dim], [D, V]
};
TORCH_MODULE(GatedDeltaNetMixer);

class GatedDeltaNetLMImpl : public ResidualLMOf<GatedDeltaNetLMImpl, GatedDeltaNetConfig, GatedDeltaNetMixer> {
 public:
  explicit GatedDeltaNetLMImpl(const GatedDeltaNetConfig& cfg);
  // fla's init: every linear and conv normal(0, initializer_range), embeddings likewise, norms 1;
  // A = U(a_min, a_max) per value head (fla: U(0, 16); statescope's defaults 1..16 keep A > 0 away
  // from 0), dt = exp(U(log 1e-3, log 1e-1)) floored at 1e-4, dt_bias its inverse softplus.
  void reset_parameters(uint64_t seed, double a_min = 1.0, double a_max = 16.0) override;
};
TORCH_MODULE(GatedDeltaNetLM);

}  // namespace statescope

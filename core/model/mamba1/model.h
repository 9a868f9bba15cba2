// mamba1/model.h — the Mamba-1 language model (selective scan, DESIGN.md §1b) behind RecurrentLM.
//
// Names are transformers' MambaForCausalLM keys (backbone.embeddings.weight, backbone.layers.{i}.norm,
// backbone.layers.{i}.mixer.{in_proj, conv1d, x_proj, dt_proj, A_log, D, out_proj}, backbone.norm_f,
// lm_head when untied). State per layer: ssm [b, d_inner, d_state], conv [b, d_inner, d_conv-1].
#pragma once
#include "core/model/mamba1/config.h"
#include "core/model/residual_lm_of.h"

namespace statescope {

// What the selective scan of one layer reads, in >= fp32: x [b, L, d_inner] (after the conv and
// SiLU), dt [b, L, d_inner] (after softplus), A [d_inner, N] (= -exp(A_log)), B and C [b, L, N].
struct Mamba1ScanInputs {
  torch::Tensor x, dt, A, B, C;
};

class Mamba1MixerImpl : public torch::nn::Module {
 public:
  explicit Mamba1MixerImpl(const Mamba1Config& cfg);
  // The scan's inputs for mixer input u [b, L, d_model] from `init`'s conv state; the forward's own
  // steps 1-3 (also giving it the gate z and the final conv state when asked).
  Mamba1ScanInputs scan_inputs(const torch::Tensor& u, const LayerState* init, torch::Tensor* z = nullptr,
                               torch::Tensor* conv_final = nullptr);
  // u [b, L, d_model] (already normed) -> [b, L, d_model]; writes the final state. norms: per channel
  // group (channel_groups(d_inner) of them) ||h_t|| and ||h_t - h_{t-1}|| [b, L, groups] when not null.
  torch::Tensor forward(const torch::Tensor& u, const LayerState* init, const ForwardOptions& opt,
                        LayerState& final_state, torch::Tensor* norm_per_group, torch::Tensor* delta_norm,
                        torch::Tensor* log_decay = nullptr);  // [b, L, groups] when not null
  Mamba1Config cfg;
  ParamHolder in_proj{nullptr}, conv1d{nullptr}, x_proj{nullptr}, dt_proj{nullptr}, out_proj{nullptr};
  torch::Tensor A_log;  // [d_inner, d_state]
  torch::Tensor D;      // [d_inner]
};
TORCH_MODULE(Mamba1Mixer);

class Mamba1LMImpl : public ResidualLMOf<Mamba1LMImpl, Mamba1Config, Mamba1Mixer> {
 public:
  explicit Mamba1LMImpl(const Mamba1Config& cfg);
  // mamba_ssm's initialisation: A = 1..d_state per channel (S4D real), D = 1, dt_proj's bias the
  // inverse softplus of dt log-uniform in [dt_min, dt_max] (floored), dt_proj's weight uniform in
  // +-dt_scale/sqrt(dt_rank); projections and embeddings normal(0, 0.02), out_proj scaled by
  // 1/sqrt(2 n_layer); conv uniform like PyTorch's default. a_min/a_max must stay at their defaults.
  void reset_parameters(uint64_t seed, double a_min = 1.0, double a_max = 16.0) override;
  // dt [b, L, d_inner], A [d_inner, N] (per channel and state entry), B, C [b, L, N].
  SelectiveScanTerms scan_terms(const torch::Tensor& mixer_input, int64_t layer, const LayerState* init) override;
};
TORCH_MODULE(Mamba1LM);

}  // namespace statescope

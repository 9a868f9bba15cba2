// mamba2/model.h — the Mamba-2 language model in LibTorch: forward from any initial state to logits
// and the final state, with optional per-token SSM state norms.
//
// Module and parameter names are the Hugging Face checkpoint keys (backbone.embeddings.weight,
// backbone.layers.{i}.mixer.in_proj.weight, ...), so a state dict maps one to one. Only core/ and
// app/ (outside Qt-visible headers) include this file.
#pragma once
#include <vector>

#include "core/model/mamba2/config.h"
#include "core/model/residual_lm_of.h"

namespace statescope {

// What the SSD scan of one layer reads, in >= fp32: x [b, L, H, P], dt [b, L, H] (after softplus and
// the clamp), A [H] (= -exp(A_log)), B and C [b, L, G, N] (head h reads group h / (H / G)).
struct Mamba2ScanInputs {
  torch::Tensor x, dt, A, B, C;
};

class Mamba2MixerImpl : public torch::nn::Module {
 public:
  explicit Mamba2MixerImpl(const Mamba2Config& cfg);
  // The scan's inputs for mixer input u [b, L, d_model] from `init`'s conv state (ATen, as the
  // forward computes them), for the analyses that open the scan up (effective attention).
  Mamba2ScanInputs scan_inputs(const torch::Tensor& u, const LayerState* init);
  // u [b, L, d_model] (already normed) -> [b, L, d_model]; writes the final state.
  torch::Tensor forward(const torch::Tensor& u, const LayerState* init, const ForwardOptions& opt,
                        LayerState& final_state, torch::Tensor* norm_per_head, torch::Tensor* delta_norm = nullptr,
                        torch::Tensor* log_decay = nullptr);  // [b, L, H] dt_t * A when not null
  Mamba2Config cfg;
  ParamHolder in_proj{nullptr}, conv1d{nullptr}, norm{nullptr}, out_proj{nullptr};
  torch::Tensor dt_bias, A_log, D;  // [nheads] each

 private:
  // Causal depthwise conv of xBC [b, L, conv_dim] from the initial conv state, then SiLU; the newest
  // K-1 inputs go to conv_final; the initial state and zeros in `dtype` (the mixer input's).
  torch::Tensor conv_silu(const torch::Tensor& xBC, const LayerState* init, torch::Tensor& conv_final, torch::Dtype dtype);
  Mamba2ScanInputs split_scan_inputs(const torch::Tensor& xbc, const torch::Tensor& dt_raw, torch::Dtype sdt);
};
TORCH_MODULE(Mamba2Mixer);

class Mamba2LMImpl : public ResidualLMOf<Mamba2LMImpl, Mamba2Config, Mamba2Mixer> {
 public:
  explicit Mamba2LMImpl(const Mamba2Config& cfg);
  // Mamba-2 initialisation: dt log-uniform in [dt_min, dt_max] (floored), dt_bias its inverse
  // softplus; A uniform in [a_min, a_max], A_log = log A; D = 1; norms 1; projections and
  // embeddings normal(0, 0.02), conv uniform like PyTorch's default.
  void reset_parameters(uint64_t seed, double a_min = 1.0, double a_max = 16.0) override;
  // dt [b, L, H], A [H], B, C [b, L, G, N]; H / G heads share one B and C.
  SelectiveScanTerms scan_terms(const torch::Tensor& mixer_input, int64_t layer, const LayerState* init) override;
};
TORCH_MODULE(Mamba2LM);

}  // namespace statescope

// mamba2_model.h — the Mamba-2 language model in LibTorch: forward from any initial state to logits
// and the final state, with optional per-token SSM state norms.
//
// Module and parameter names are the Hugging Face checkpoint keys (backbone.embeddings.weight,
// backbone.layers.{i}.mixer.in_proj.weight, ...), so a state dict maps one to one. Only core/ and
// app/ (outside Qt-visible headers) include this file.
#pragma once
#include <torch/nn/module.h>
#include <torch/types.h>

#include <vector>

#include "core/model/config.h"

namespace statescope {

// State of one layer between tokens.
struct LayerState {
  torch::Tensor ssm;   // [b, nheads, headdim, d_state]
  torch::Tensor conv;  // [b, conv_dim, d_conv-1]: the last d_conv-1 pre-conv xBC inputs, oldest first
};
using ModelState = std::vector<LayerState>;  // one per layer

ModelState detach_state(const ModelState& s);

// Sequential: the reference recurrence. Chunked: the SSD chunked algorithm in ATen (any device,
// autograd). Fused: the chunk-parallel CUDA scan kernels, forward and backward (core/model/fused_scan.h),
// on a GPU in fp32 state; without autograd also the conv1d kernel and, for one
// token (decoding), the step kernel (core/model/fused_infer.h). Anywhere else it falls back to Chunked (on
// the CPU, ForwardOptions::cpu_twins runs the kernels' CPU twins instead, to test the wiring).
enum class ScanImpl { Sequential, Chunked, Fused };

struct ForwardOptions {
  ScanImpl scan = ScanImpl::Chunked;
  int64_t chunk_size = 0;     // 0: the config's chunk_size
  bool state_norms = false;   // also return per-token SSM state norms
  bool cpu_twins = false;     // Fused on the CPU: the kernels' CPU twins (slow loops) instead of ATen
};

struct ForwardOutput {
  torch::Tensor logits;          // [b, L, vocab]
  ModelState final_state;        // state after the last token
  torch::Tensor norm_per_head;   // [n_layer, b, L, nheads] ||S_t||_F per head (if requested)
  torch::Tensor norm;            // [n_layer, b, L] ||S_t||_F over all heads of a layer (if requested)
  torch::Tensor delta_norm;      // [n_layer, b, L] ||S_t - S_{t-1}||_F over all heads (with the norms)
};

// A module holding a "weight" (and optionally a "bias") parameter, so names match checkpoints.
class ParamHolderImpl : public torch::nn::Module {
 public:
  ParamHolderImpl(std::vector<int64_t> weight_shape, bool with_bias, int64_t bias_size = 0);
  torch::Tensor weight, bias;
};
TORCH_MODULE(ParamHolder);

class Mamba2MixerImpl : public torch::nn::Module {
 public:
  explicit Mamba2MixerImpl(const Mamba2Config& cfg);
  // u [b, L, d_model] (already normed) -> [b, L, d_model]; writes the final state.
  torch::Tensor forward(const torch::Tensor& u, const LayerState* init, const ForwardOptions& opt,
                        LayerState& final_state, torch::Tensor* norm_per_head, torch::Tensor* delta_norm = nullptr);
  Mamba2Config cfg;
  ParamHolder in_proj{nullptr}, conv1d{nullptr}, norm{nullptr}, out_proj{nullptr};
  torch::Tensor dt_bias, A_log, D;  // [nheads] each
};
TORCH_MODULE(Mamba2Mixer);

class Mamba2BlockImpl : public torch::nn::Module {
 public:
  explicit Mamba2BlockImpl(const Mamba2Config& cfg);
  ParamHolder norm{nullptr};
  Mamba2Mixer mixer{nullptr};
};
TORCH_MODULE(Mamba2Block);

class Mamba2LMImpl : public torch::nn::Module {
 public:
  explicit Mamba2LMImpl(const Mamba2Config& cfg);

  // tokens [b, L] int64 in [0, vocab); init: one LayerState per layer (either tensor of a layer may
  // be undefined = zeros), or nullptr for the zero state. Autograd flows through init too.
  // Without options: forward_options(), i.e. the run's scan.
  ForwardOutput forward(const torch::Tensor& tokens, const ModelState* init = nullptr);
  ForwardOutput forward(const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt);

  ModelState zero_state(int64_t batch) const;
  const Mamba2Config& config() const { return cfg_; }

  // Mixed precision: forward runs under bf16 autocast on the weights' device (matmuls and convs in
  // bf16; master weights, SSM state, A, dt, norms and the residual stream stay fp32; logits are
  // returned in fp32). Set by place_model from the run's Compute.
  bool mixed_bf16 = false;
  // The scan that training and the analyses ask for: the CUDA kernels (ScanImpl::Fused, which falls
  // back to Chunked off the GPU) or ATen's chunked scan. Set by place_model from the run's Compute.
  bool fused_scan = false;
  ScanImpl scan_impl() const { return fused_scan ? ScanImpl::Fused : ScanImpl::Chunked; }
  // Options for a forward of this run: its scan, nothing else asked (no state norms).
  ForwardOptions forward_options() const {
    ForwardOptions o;
    o.scan = scan_impl();
    return o;
  }
  // The embedding matrix used as output projection when tied, else lm_head.weight.  [vocab, d_model]
  torch::Tensor output_weight() const;

  // Mamba-2 initialisation: dt log-uniform in [dt_min, dt_max] (floored), dt_bias its inverse
  // softplus; A uniform in [a_min, a_max], A_log = log A; D = 1; norms 1; projections and
  // embeddings normal(0, 0.02), conv uniform like PyTorch's default.
  void reset_parameters(uint64_t seed, double a_min = 1.0, double a_max = 16.0);

  // Checks a [b, L] token tensor against the vocabulary; throws Error naming `source`.
  void check_tokens(const torch::Tensor& tokens, const std::string& source) const;
  // Checks a state against the config and batch size; throws Error naming `source`.
  void check_state(const ModelState& s, int64_t batch, const std::string& source) const;

 private:
  Mamba2Config cfg_;
  torch::nn::Module* backbone_ = nullptr;
  ParamHolder embeddings_{nullptr}, norm_f_{nullptr}, lm_head_{nullptr};
  std::vector<Mamba2Block> layers_;
};
TORCH_MODULE(Mamba2LM);

}  // namespace statescope

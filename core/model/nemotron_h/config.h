// nemotron_h/config.h — NVIDIA's Nemotron-H as transformers 5.25 defines it (model_type "nemotron_h",
// configuration_nemotron_h.py; docs/hybrids-transformers.md section 2): a stack of blocks, each one
// RMSNorm and one mixer, the mixer per layer from layers_block_type (or the legacy
// hybrid_override_pattern string: M Mamba-2, * attention, - relu^2 MLP, E mixture of experts).
// Every field transformers reads is honoured; what it does not build (multi-token prediction layers)
// or what statescope does not implement (biases on the MLPs, other activations) is refused by name.
// Registered in nemotron_h/arch.h. No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/model/blocks/kinds.h"
#include "core/model/mamba2/config.h"

namespace statescope {

struct NemotronHConfig {
  int64_t d_model = 0, vocab_size = 0;  // [hidden_size], [vocab_size]
  std::vector<LayerKind> layers;        // [layers_block_type]
  int64_t n_layer = 0;                  // layers.size()
  bool tie_embeddings = false;          // lm_head is its own tensor
  double norm_eps = 1e-5;         // [layer_norm_epsilon]: every RMSNorm, the gated one too
  // Mamba-2: mamba_num_heads x mamba_head_dim wide (not expand x hidden), n_groups groups of d_state.
  int64_t mamba_heads = 0, mamba_head_dim = 0, d_state = 0, n_groups = 1, conv_kernel = 4, chunk_size = 128;
  bool conv_bias = true, proj_bias = false;  // [use_conv_bias], [use_bias]: in_proj and out_proj
  double dt_limit_lo = 0, dt_limit_hi = 0;   // [time_step_limit]; hi 0: none
  // Attention: no positional encoding, no biases (transformers ignores attention_bias).
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  // MLP and experts (relu^2).
  int64_t intermediate = 0;
  int64_t experts = 0, top_k = 0, moe_intermediate = 0, shared_intermediate = 0, latent = 0, n_group = 1,
          topk_group = 1;
  double routed_scaling = 1.0;
  bool norm_topk_prob = true;

  // The config.json it was read from (to_hf_config_json writes it back as it was).
  std::string json;

  int64_t count(LayerKind k) const;
  int64_t parameter_count() const;
  void validate(const std::string& source) const;
};

NemotronHConfig parse_nemotron_h(const nlohmann::json& j, const std::string& source);
// The Mamba-2 layers' config (n_layer: how many there are).
Mamba2Config mamba_layers(const NemotronHConfig& c);
// The config.json it was read from; Error for a config that was not read from one.
std::string to_hf_config_json(const NemotronHConfig& c);

}  // namespace statescope

// granite_h/config.h — IBM's Granite 4.0-H as transformers 5.25 defines it (model_type
// "granitemoehybrid", configuration_granitemoehybrid.py; docs/hybrids-transformers.md section 3): every
// layer one mixer (Mamba-2 or attention, from layer_types) and one feed-forward part (a mixture of
// SwiGLU experts plus the shared SwiGLU MLP, or the shared MLP alone when num_local_experts is 0),
// with Granite's muP multipliers: the embedding's, the attention score scale (replacing
// head_dim^-0.5), the residual branches' and the logits' divisor. Attention has RoPE only when
// position_embedding_type is "rope" (NoPE otherwise, as transformers reads it). Every field
// transformers reads is honoured; what statescope does not implement (other activations, other rotary
// types, dropout) is refused by name. Registered in granite_h/arch.h. No LibTorch.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/model/blocks/kinds.h"
#include "core/model/mamba2/config.h"

namespace statescope {

struct GraniteHConfig {
  int64_t d_model = 0, vocab_size = 0;  // [hidden_size], [vocab_size]
  std::vector<LayerKind> layers;        // each layer's mixer [layer_types]: Mamba2 or Attention
  int64_t n_layer = 0;                  // layers.size()
  bool tie_embeddings = false;          // [tie_word_embeddings]
  double norm_eps = 1e-6;               // [rms_norm_eps]: every RMSNorm, the gated one too
  // Mamba-2: mamba_n_heads heads of mamba_d_head (mamba_expand x hidden wide), mamba_n_groups groups.
  int64_t mamba_heads = 0, mamba_head_dim = 0, mamba_expand = 2, d_state = 0, n_groups = 1, conv_kernel = 4, chunk_size = 256;
  bool conv_bias = true, proj_bias = false;  // [mamba_conv_bias], [mamba_proj_bias]
  double dt_limit_lo = 0, dt_limit_hi = 0;   // [time_step_limit]
  // Attention: head_dim = hidden / heads; RoPE (theta) or none.
  int64_t heads = 0, kv_heads = 0;
  bool attention_bias = false;
  double rope_theta = 0;  // 0: no positional encoding (position_embedding_type not "rope")
  // Feed-forward: experts (0: none) of intermediate_size, the shared MLP of shared_intermediate_size.
  int64_t experts = 0, top_k = 0, intermediate = 0, shared_intermediate = 0;
  // muP multipliers.
  double embedding_multiplier = 1, attention_multiplier = 1, residual_multiplier = 1, logits_scaling = 1;

  // The config.json it was read from (to_hf_config_json writes it back as it was).
  std::string json;

  int64_t count(LayerKind k) const;
  int64_t head_dim() const { return heads > 0 ? d_model / heads : 0; }
  int64_t parameter_count() const;
  void validate(const std::string& source) const;
};

GraniteHConfig parse_granite_h(const nlohmann::json& j, const std::string& source);
// The Mamba-2 layers' config (n_layer: how many there are).
Mamba2Config mamba_layers(const GraniteHConfig& c);
// The config.json it was read from; Error for a config that was not read from one.
std::string to_hf_config_json(const GraniteHConfig& c);

}  // namespace statescope

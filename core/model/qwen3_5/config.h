// qwen3_5/config.h — Qwen3.5's text model as transformers 5.25 defines it (model_type "qwen3_5_text", or
// "qwen3_5" with it inside "text_config"; configuration_qwen3_5.py; docs/hybrids-transformers.md
// section 5): per layer Gated DeltaNet ("linear_attention") or gated attention ("full_attention"),
// each followed by the SwiGLU MLP; zero-centred RMSNorms. The multimodal checkpoint's vision tower is
// left out (its weights are not read). Not yet an architecture of the ModelConfig variant. No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/model/blocks/kinds.h"

namespace statescope {

struct Qwen35Config {
  int64_t hidden = 0, vocab_size = 0, intermediate = 0;
  std::vector<LayerKind> layers;  // [layer_types]: GatedDeltaNet or Attention
  double norm_eps = 1e-6;         // [rms_norm_eps]
  bool tie_embeddings = false;
  // Gated DeltaNet: key heads of key_head_dim serve value heads of value_head_dim.
  int64_t key_heads = 16, value_heads = 32, key_head_dim = 128, value_head_dim = 128, conv_kernel = 4;
  // Attention.
  int64_t heads = 16, kv_heads = 4, head_dim = 256;
  bool attention_bias = false;
  double rope_theta = 10000, partial_rotary = 0.25;
  bool multimodal = false;        // read from a "qwen3_5" config's text_config: weights under model.language_model.

  void validate(const std::string& source) const;
};

Qwen35Config parse_qwen3_5(const nlohmann::json& j, const std::string& source);

}  // namespace statescope

// qwen3_5/config.h — Qwen3.5's text model as transformers 5.25 defines it (model_type "qwen3_5_text", or
// "qwen3_5" with it inside "text_config"; configuration_qwen3_5.py; docs/hybrids-transformers.md
// section 5): per layer Gated DeltaNet ("linear_attention") or gated attention ("full_attention"),
// each followed by the SwiGLU MLP; zero-centred RMSNorms. The multimodal checkpoint's vision tower is
// left out (its weights are not read; a model statescope saves is the text model alone). Registered in
// qwen3_5/arch.h. No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/model/blocks/kinds.h"
#include "core/model/gdn/config.h"

namespace statescope {

struct Qwen35Config {
  int64_t d_model = 0, vocab_size = 0, intermediate = 0;  // [hidden_size], [vocab_size], [intermediate_size]
  std::vector<LayerKind> layers;  // [layer_types]: GatedDeltaNet or Attention
  int64_t n_layer = 0;            // [num_hidden_layers] = layers.size()
  double norm_eps = 1e-6;         // [rms_norm_eps]
  bool tie_embeddings = false;
  // Gated DeltaNet: key heads of key_head_dim serve value heads of value_head_dim.
  int64_t key_heads = 16, value_heads = 32, key_head_dim = 128, value_head_dim = 128, conv_kernel = 4;
  // Attention.
  int64_t heads = 16, kv_heads = 4, head_dim = 256;
  bool attention_bias = false;
  double rope_theta = 10000, partial_rotary = 0.25;
  bool multimodal = false;        // read from a "qwen3_5" config's text_config: weights under model.language_model.
  // The text model's config.json ("qwen3_5_text"; a multimodal config's text_config with the top
  // level's tie_word_embeddings): what to_hf_config_json writes.
  std::string json;

  int64_t count(LayerKind k) const;
  int64_t parameter_count() const;
  void validate(const std::string& source) const;
};

Qwen35Config parse_qwen3_5(const nlohmann::json& j, const std::string& source);
// The Gated DeltaNet layers' config (n_layer: how many there are).
GatedDeltaNetConfig gdn_layers(const Qwen35Config& c);
// The text model's config.json (see `json`); Error for a config that was not read from one.
std::string to_hf_config_json(const Qwen35Config& c);

}  // namespace statescope

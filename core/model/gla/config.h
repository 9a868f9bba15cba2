// gla/config.h — gated linear attention (GLA, Yang et al. 2024) as flash-linear-attention 0.6.0
// defines it (fla/models/gla, fla/layers/gla.py), read from its config.json (model_type "gla").
//
// Field names are statescope's; fla's are in brackets. Every field fla's GLAConfig carries is either
// honoured here or refused by name when set to a value statescope does not implement (a feature map,
// hybrid attention layers, attention residuals, an activation other than swish). No LibTorch here.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace statescope {

struct GLAConfig {
  int64_t d_model = 64;            // [hidden_size]
  int64_t n_layer = 2;             // [num_hidden_layers]
  int64_t num_heads = 4;
  int64_t num_kv_heads = 0;        // 0: num_heads (no grouped keys/values)
  double expand_k = 0.5, expand_v = 1.0;  // key_dim = d_model * expand_k, value_dim = d_model * expand_v
  int64_t hidden_ratio = 4;        // the MLP's size when intermediate_size is not given
  int64_t intermediate_size = 0;   // 0: 2/3 * d_model * hidden_ratio rounded up to a multiple of 256
  bool use_short_conv = false;     // depthwise causal convolutions (SiLU) on q, k and v
  int64_t conv_size = 4;
  bool use_output_gate = true;     // o = RMSNorm(o) * swish(g_proj(x)) per head; else RMSNorm(o)
  bool fuse_norm = true;           // only names the output norm: g_norm_swish_gate or g_norm
  bool elementwise_affine = true;  // the output norm has a weight
  double norm_eps = 1e-6;
  double clamp_min = 0.0;          // floor of the log gate; 0 = none (fla: null)
  bool has_clamp_min = false;
  int64_t vocab_size = 256;
  bool tie_embeddings = false;     // [tie_word_embeddings]; fla defaults to false
  double initializer_range = 0.02;
  // Fixed by fla's layer (not config fields): the log gate is logsigmoid(gk) / 16, gk from a rank-16
  // projection; the short convolutions have no bias.
  static constexpr int64_t kGateLowRank = 16;
  static constexpr double kGateLogitNormalizer = 16.0;

  int64_t kv_heads() const { return num_kv_heads > 0 ? num_kv_heads : num_heads; }
  int64_t kv_groups() const { return num_heads / kv_heads(); }
  int64_t key_dim() const;    // d_model * expand_k (an integer, checked)
  int64_t value_dim() const;  // d_model * expand_v
  int64_t head_k_dim() const { return key_dim() / num_heads; }
  int64_t head_v_dim() const { return value_dim() / num_heads; }
  int64_t key_dim_per_group() const { return key_dim() / kv_groups(); }    // k_proj, gk_proj rows
  int64_t value_dim_per_group() const { return value_dim() / kv_groups(); }  // v_proj rows
  int64_t mlp_size() const;
  // The short convolutions' channels, q then k then v (the conv state's layout).
  int64_t conv_channels() const { return key_dim() + key_dim_per_group() + value_dim_per_group(); }

  int64_t parameter_count() const;
  // Throws Error naming `source` and the field when a size is inconsistent or above the limits.
  void validate(const std::string& source) const;
};

// From a parsed fla config.json (the caller has decided it is GLA: model_type "gla").
GLAConfig parse_gla_hf(const nlohmann::json& j, const std::string& source);

// A config.json (model_type gla) that fla's GLAConfig loads.
std::string to_hf_config_json(const GLAConfig& cfg);

}  // namespace statescope

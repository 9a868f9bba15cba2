// gdn/config.h — Gated DeltaNet (Yang, Kautz & Hatamizadeh 2025) as flash-linear-attention 0.6.0
// defines it (fla/models/gated_deltanet, fla/layers/gated_deltanet.py), read from its config.json
// (model_type "gated_deltanet").
//
// Field names are statescope's; fla's are in brackets. Every field fla's GatedDeltaNetConfig carries
// is honoured here or refused by name when set to what statescope does not implement (hybrid
// attention layers, attention residuals, an MLP activation other than swish). No LibTorch here.
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace statescope {

struct GatedDeltaNetConfig {
  int64_t d_model = 64;             // [hidden_size]
  int64_t n_layer = 2;              // [num_hidden_layers]
  int64_t num_heads = 4;            // query/key heads
  int64_t num_v_heads = 0;          // 0: num_heads; more: each q/k head serves num_v_heads/num_heads value heads
  int64_t head_dim = 16;            // the key dim per head
  double expand_v = 2.0;            // head_v_dim = head_dim * expand_v (an integer, checked)
  int64_t hidden_ratio = 4;         // the MLP's size when intermediate_size is not given
  int64_t intermediate_size = 0;    // 0: 2/3 * d_model * hidden_ratio rounded up to a multiple of 256
  bool use_short_conv = true;       // depthwise causal convolutions (SiLU) on q, k, v; else SiLU alone
  int64_t conv_size = 4;
  bool use_gate = true;             // o = RMSNorm(o) * act(g_proj(x)) per head; else RMSNorm(o)
  bool sigmoid_gate = false;        // [output_gate_activation] "sigmoid" (else "swish"/"silu")
  bool allow_neg_eigval = false;    // beta = 2 sigmoid(b) in (0, 2): the transition may have negative eigenvalues
  double norm_eps = 1e-6;
  int64_t vocab_size = 256;
  bool tie_embeddings = false;      // [tie_word_embeddings]; fla defaults to false
  double initializer_range = 0.02;
  // Fixed by fla's kernels (not config fields): q and k are L2-normalised per head with this eps
  // inside the square root, then q is scaled by head_dim^-1/2; the convolutions have no bias.
  static constexpr double kL2NormEps = 1e-6;

  int64_t v_heads() const { return num_v_heads > 0 ? num_v_heads : num_heads; }
  int64_t v_per_k() const { return v_heads() / num_heads; }  // value heads per query/key head
  int64_t head_v_dim() const;
  int64_t key_dim() const { return num_heads * head_dim; }     // q_proj, k_proj rows
  int64_t value_dim() const { return v_heads() * head_v_dim(); }  // v_proj, g_proj rows
  int64_t mlp_size() const;
  // The short convolutions' channels, q then k then v (the conv state's layout).
  int64_t conv_channels() const { return 2 * key_dim() + value_dim(); }

  int64_t parameter_count() const;
  // Throws Error naming `source` and the field when a size is inconsistent or above the limits.
  void validate(const std::string& source) const;
};

// From a parsed fla config.json (the caller has decided: model_type "gated_deltanet").
GatedDeltaNetConfig parse_gated_deltanet_hf(const nlohmann::json& j, const std::string& source);

// A config.json (model_type gated_deltanet) that fla's GatedDeltaNetConfig loads.
std::string to_hf_config_json(const GatedDeltaNetConfig& cfg);

}  // namespace statescope

// gdn/config.cpp — fla's Gated DeltaNet config.json into GatedDeltaNetConfig and back.
#include "core/model/gdn/config.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/model/config_json.h"
#include "core/model/mamba2/config.h"  // the size limits every architecture shares

namespace statescope {

using nlohmann::json;

int64_t GatedDeltaNetConfig::head_v_dim() const {
  return static_cast<int64_t>(static_cast<double>(head_dim) * expand_v);  // fla: int(head_dim * expand_v)
}

int64_t GatedDeltaNetConfig::mlp_size() const {
  if (intermediate_size > 0) return intermediate_size;
  const auto m = static_cast<int64_t>(static_cast<double>(d_model * hidden_ratio) * 2.0 / 3.0);  // fla's GatedMLP
  return 256 * ((m + 255) / 256);
}

int64_t GatedDeltaNetConfig::parameter_count() const {
  const int64_t D = d_model, K = key_dim(), V = value_dim(), HV = v_heads(), M = mlp_size();
  const int64_t mixer = 2 * D * K + D * V          // q, k, v
                        + 2 * D * HV + 2 * HV      // a_proj, b_proj; A_log, dt_bias
                        + (use_gate ? D * V : 0)   // g_proj
                        + head_v_dim()             // o_norm (shared by the heads)
                        + V * D                    // o_proj
                        + (use_short_conv ? conv_channels() * conv_size : 0);
  const int64_t per_layer = 2 * D + mixer + 3 * D * M;  // attn_norm, mlp_norm; gate, up, down
  return vocab_size * D * (tie_embeddings ? 1 : 2) + n_layer * per_layer + D;
}

void GatedDeltaNetConfig::validate(const std::string& source) const {
  require_size(d_model, Mamba2Config::kMaxDModel, source, "hidden_size");
  require_size(n_layer, Mamba2Config::kMaxLayers, source, "num_hidden_layers");
  require_size(num_heads, 4096, source, "num_heads");
  require_size(v_heads(), 4096, source, "num_v_heads");
  require_size(head_dim, 4096, source, "head_dim");
  require_size(vocab_size, Mamba2Config::kMaxVocab, source, "vocab_size");
  require_size(mlp_size(), 16 * Mamba2Config::kMaxDModel, source, "intermediate_size");
  const double hv = static_cast<double>(head_dim) * expand_v;
  if (!(hv >= 1) || std::abs(hv - std::round(hv)) > 1e-5 * hv || hv > 4096)
    throw Error(source + ": field 'expand_v' (" + std::to_string(expand_v) + ") times 'head_dim' (" +
                std::to_string(head_dim) + ") must be a positive integer (the value dim per head)");
  if (v_heads() < num_heads || v_heads() % num_heads != 0)
    throw Error(source + ": field 'num_v_heads' (" + std::to_string(v_heads()) + ") must be a multiple of 'num_heads' (" +
                std::to_string(num_heads) + ") and not fewer");
  if (use_short_conv) require_size(conv_size, 64, source, "conv_size");
  if (use_short_conv && conv_size < 2) throw Error(source + ": field 'conv_size' must be at least 2");
  if (!(norm_eps > 0)) throw Error(source + ": field 'norm_eps' must be positive");
  if (parameter_count() > Mamba2Config::kMaxParameters)
    throw Error(source + ": describes " + std::to_string(parameter_count()) +
                " parameters, above statescope's limit of " + std::to_string(Mamba2Config::kMaxParameters));
}

GatedDeltaNetConfig parse_gated_deltanet_hf(const json& j, const std::string& source) {
  ConfigReader r{j, source, ""};
  // What statescope does not implement is refused by name, never ignored.
  if (r.has("attn"))
    r.fail("attn", "is set: hybrid Gated DeltaNet models with softmax attention layers are not supported "
                   "(statescope loads pure recurrent models)");
  if (r.has("attnres_block_size")) r.fail("attnres_block_size", "is set: attention residuals are not supported");
  if (r.opt_bool("use_l2warp", false)) r.fail("use_l2warp", "is true: the L2-warp training loss is not supported");
  const std::string act = r.opt_string("hidden_act", "swish");
  if (act != "swish") r.fail("hidden_act", "is \"" + act + "\"; only swish is supported");
  const std::string mode = r.opt_string("attn_mode", "chunk");
  if (mode != "chunk" && mode != "fused_recurrent")
    r.fail("attn_mode", "is \"" + mode + "\"; fla's Gated DeltaNet knows chunk and fused_recurrent");
  const std::string gate = r.opt_string("output_gate_activation", "swish");
  if (gate != "swish" && gate != "silu" && gate != "sigmoid")
    r.fail("output_gate_activation", "is \"" + gate + "\"; fla knows swish, silu and sigmoid");
  if (r.has("conv_bias") && r.opt_bool("conv_bias", false))
    r.fail("conv_bias", "is true, but fla's Gated DeltaNet block never builds a conv bias (the field would be ignored)");
  GatedDeltaNetConfig c;  // fla's GatedDeltaNetConfig defaults throughout
  c.d_model = r.opt_int("hidden_size", 2048);
  c.n_layer = r.opt_int("num_hidden_layers", 21);
  c.num_heads = r.opt_int("num_heads", 6);
  c.num_v_heads = r.has("num_v_heads") ? r.req_int("num_v_heads") : 0;
  c.head_dim = r.opt_int("head_dim", 256);
  c.expand_v = r.opt_num("expand_v", 2.0);
  c.hidden_ratio = r.has("hidden_ratio") ? r.req_int("hidden_ratio") : 4;
  c.intermediate_size = r.has("intermediate_size") ? r.req_int("intermediate_size") : 0;
  c.use_short_conv = r.opt_bool("use_short_conv", true);
  c.conv_size = r.opt_int("conv_size", 4);
  c.use_gate = r.opt_bool("use_gate", true);
  c.sigmoid_gate = gate == "sigmoid";
  c.allow_neg_eigval = r.opt_bool("allow_neg_eigval", false);
  c.norm_eps = r.opt_num("norm_eps", 1e-6);
  c.vocab_size = r.opt_int("vocab_size", 32000);
  c.tie_embeddings = r.opt_bool("tie_word_embeddings", false);
  c.initializer_range = r.opt_num("initializer_range", 0.02);
  if (c.num_v_heads < 0) r.fail("num_v_heads", "must be positive");
  return c;
}

std::string to_hf_config_json(const GatedDeltaNetConfig& c) {
  json j;
  j["architectures"] = {"GatedDeltaNetForCausalLM"};
  j["model_type"] = "gated_deltanet";
  j["hidden_size"] = c.d_model;
  j["num_hidden_layers"] = c.n_layer;
  j["num_heads"] = c.num_heads;
  j["num_v_heads"] = c.num_v_heads > 0 ? json(c.num_v_heads) : json(nullptr);
  j["head_dim"] = c.head_dim;
  j["expand_v"] = c.expand_v;
  j["hidden_ratio"] = c.hidden_ratio;
  j["intermediate_size"] = c.mlp_size();
  j["use_short_conv"] = c.use_short_conv;
  j["conv_size"] = c.conv_size;
  j["use_gate"] = c.use_gate;
  j["output_gate_activation"] = c.sigmoid_gate ? "sigmoid" : "swish";
  j["allow_neg_eigval"] = c.allow_neg_eigval;
  j["norm_eps"] = c.norm_eps;
  j["attn"] = nullptr;
  j["attn_mode"] = "chunk";
  j["hidden_act"] = "swish";
  j["vocab_size"] = c.vocab_size;
  j["tie_word_embeddings"] = c.tie_embeddings;
  j["initializer_range"] = c.initializer_range;
  j["fuse_cross_entropy"] = false;  // transformers-style loss on any device
  j["fuse_swiglu"] = true;
  return dump_with_infinity(j);
}

}  // namespace statescope

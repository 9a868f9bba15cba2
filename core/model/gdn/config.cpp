// gdn/config.cpp — fla's Gated DeltaNet config.json into GatedDeltaNetConfig and back.
#include "core/model/gdn/config.h"
#include "core/model/gdn/arch.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/model/config_json.h"
#include "core/model/mamba2/config.h"  // the size limits every architecture shares
#include "core/model/pretrain_shape.h"

namespace statescope {

using nlohmann::json;

int64_t GatedDeltaNetConfig::head_v_dim() const {
  return static_cast<int64_t>(static_cast<double>(head_dim) * expand_v);  // fla: int(head_dim * expand_v)
}

int64_t GatedDeltaNetConfig::mlp_size() const { return fla_mlp_size(d_model, hidden_ratio, intermediate_size); }

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
  if (!(norm_eps > 0 && norm_eps <= 1))  // finite: Infinity would zero every logit
    throw Error(source + ": field 'norm_eps' must be in (0, 1], got " + std::to_string(norm_eps));
  if (parameter_count() > Mamba2Config::kMaxParameters)
    throw Error(source + ": describes " + std::to_string(parameter_count()) +
                " parameters, above statescope's limit of " + std::to_string(Mamba2Config::kMaxParameters));
}

GatedDeltaNetConfig parse_gated_deltanet_hf(const json& j, const std::string& source) {
  ConfigReader r{j, source, ""};
  // What statescope does not implement is refused by name, never ignored.
  refuse_fla_extras(r, "Gated DeltaNet", {"chunk", "fused_recurrent"});
  const std::string gate = r.opt_string("output_gate_activation", "swish");
  if (gate != "swish" && gate != "silu" && gate != "sigmoid")
    r.fail("output_gate_activation", "is \"" + gate + "\"; fla knows swish, silu and sigmoid");
  if (r.has("conv_bias") && r.opt_bool("conv_bias", false))
    r.fail("conv_bias", "is true, but fla's Gated DeltaNet block never builds a conv bias (the field would be ignored)");
  GatedDeltaNetConfig c;  // fla's GatedDeltaNetConfig defaults throughout
  c.use_short_conv = true;
  read_fla_common(r, c, /*default_layers=*/21);
  c.num_heads = r.opt_int("num_heads", 6);
  c.num_v_heads = r.has("num_v_heads") ? r.req_int("num_v_heads") : 0;
  c.head_dim = r.opt_int("head_dim", 256);
  c.expand_v = r.opt_num("expand_v", 2.0);
  c.use_gate = r.opt_bool("use_gate", true);
  c.sigmoid_gate = gate == "sigmoid";
  c.allow_neg_eigval = r.opt_bool("allow_neg_eigval", false);
  if (c.num_v_heads <= 0 && r.has("num_v_heads")) r.fail("num_v_heads", "must be positive (null or absent: num_heads), got " + std::to_string(c.num_v_heads));
  return c;
}

std::string to_hf_config_json(const GatedDeltaNetConfig& c) {
  json j;
  j["architectures"] = {"GatedDeltaNetForCausalLM"};
  j["model_type"] = "gated_deltanet";
  write_fla_common(j, c);
  j["num_heads"] = c.num_heads;
  j["num_v_heads"] = c.num_v_heads > 0 ? json(c.num_v_heads) : json(nullptr);
  j["head_dim"] = c.head_dim;
  j["expand_v"] = c.expand_v;
  j["use_gate"] = c.use_gate;
  j["output_gate_activation"] = c.sigmoid_gate ? "sigmoid" : "swish";
  j["allow_neg_eigval"] = c.allow_neg_eigval;
  return dump_with_infinity(j);
}

// The registration's layout and description (arch.h).
StateLayout Arch<GatedDeltaNetConfig>::layout(const GatedDeltaNetConfig& m) {
  StateLayout l;
  l.n_layer = m.n_layer;
  l.ssm = {{"heads", m.v_heads()}, {"head_k_dim", m.head_dim}, {"head_v_dim", m.head_v_dim()}};
  if (m.use_short_conv) l.conv = {{"qkv_channels", m.conv_channels()}, {"conv_size-1", m.conv_size - 1}};
  l.groups = m.v_heads();
  l.group_name = "head";
  return l;
}

Description Arch<GatedDeltaNetConfig>::describe(const GatedDeltaNetConfig& m) {
  auto n = [](int64_t v) { return std::to_string(v); };
  return {{"num_heads", n(m.num_heads)}, {"num_v_heads", n(m.v_heads())}, {"head_k_dim", n(m.head_dim)},
          {"head_v_dim", n(m.head_v_dim())}, {"mlp_size", n(m.mlp_size())},
          {"short_conv", m.use_short_conv ? n(m.conv_size) : "no"},
          {"output_gate", !m.use_gate ? "no" : m.sigmoid_gate ? "sigmoid" : "swish"},
          {"beta", m.allow_neg_eigval ? "2 sigmoid (negative eigenvalues)" : "sigmoid"}};
}

GatedDeltaNetConfig Arch<GatedDeltaNetConfig>::from_pretrain(const PretrainShape& s) {
  GatedDeltaNetConfig d;
  d.d_model = s.d_model, d.n_layer = s.n_layer, d.num_heads = s.num_heads, d.num_v_heads = s.v_heads, d.head_dim = s.head_dim;
  d.expand_v = s.expand_v_set ? s.expand_v : 2.0, d.intermediate_size = s.mlp_size, d.use_short_conv = !s.no_short_conv;
  d.conv_size = s.d_conv, d.vocab_size = 256, d.tie_embeddings = true;
  return d;
}

std::string Arch<GatedDeltaNetConfig>::pretrain_flags(const PretrainShape& s) {
  const auto n = pretrain_number;
  return " --heads " + std::to_string(s.num_heads) + " --head-dim " + std::to_string(s.head_dim) + " --v-heads " +
         std::to_string(s.v_heads) + " --mlp-size " + std::to_string(s.mlp_size) +
         (s.expand_v_set ? " --expand-v " + n(s.expand_v) : std::string()) + (s.no_short_conv ? " --no-short-conv" : "") +
         " --a-min " + n(s.a_min) + " --a-max " + n(s.a_max) + (s.freeze_A ? " --freeze-A" : "");
}

}  // namespace statescope

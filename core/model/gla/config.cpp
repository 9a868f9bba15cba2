// gla/config.cpp — fla's GLA config.json into GLAConfig and back.
#include "core/model/gla/config.h"
#include "core/model/gla/arch.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/model/config_json.h"
#include "core/model/mamba2/config.h"  // the size limits every architecture shares
#include "core/model/pretrain_shape.h"

namespace statescope {

using nlohmann::json;

namespace {

// hidden_size * expand as fla computes it: round(), and it must be an integer.
int64_t expanded(int64_t d, double e) { return std::llround(static_cast<double>(d) * e); }

}  // namespace

int64_t GLAConfig::key_dim() const { return expanded(d_model, expand_k); }
int64_t GLAConfig::value_dim() const { return expanded(d_model, expand_v); }

int64_t GLAConfig::mlp_size() const { return fla_mlp_size(d_model, hidden_ratio, intermediate_size); }

int64_t GLAConfig::parameter_count() const {
  const int64_t D = d_model, K = key_dim(), V = value_dim(), Kg = key_dim_per_group(), Vg = value_dim_per_group();
  const int64_t R = kGateLowRank, M = mlp_size();
  const int64_t mixer = D * K + D * Kg + D * Vg                // q, k, v
                        + (use_output_gate ? D * V : 0)      // g_proj
                        + D * R + R * Kg + Kg                // gk_proj (low rank, bias on the second)
                        + V * D                              // o_proj
                        + (elementwise_affine ? head_v_dim() : 0)
                        + (use_short_conv ? conv_channels() * conv_size : 0);
  const int64_t per_layer = 2 * D + mixer + 3 * D * M;       // attn_norm, mlp_norm; gate, up, down
  return vocab_size * D * (tie_embeddings ? 1 : 2) + n_layer * per_layer + D;
}

void GLAConfig::validate(const std::string& source) const {
  require_size(d_model, Mamba2Config::kMaxDModel, source, "hidden_size");
  require_size(n_layer, Mamba2Config::kMaxLayers, source, "num_hidden_layers");
  require_size(num_heads, 4096, source, "num_heads");
  require_size(kv_heads(), 4096, source, "num_kv_heads");
  require_size(vocab_size, Mamba2Config::kMaxVocab, source, "vocab_size");
  require_size(mlp_size(), 16 * Mamba2Config::kMaxDModel, source, "intermediate_size");
  auto integral = [&](double e, const char* field) {
    const double x = static_cast<double>(d_model) * e;
    if (!(x >= 1) || std::abs(x - std::round(x)) > 1e-9 || x > 16.0 * Mamba2Config::kMaxDModel)
      throw Error(source + ": field '" + field + "' (" + std::to_string(e) + ") times hidden_size (" +
                  std::to_string(d_model) + ") must be a positive integer");
  };
  integral(expand_k, "expand_k");
  integral(expand_v, "expand_v");
  if (num_heads % kv_heads() != 0)
    throw Error(source + ": field 'num_heads' (" + std::to_string(num_heads) + ") must be a multiple of 'num_kv_heads' (" +
                std::to_string(kv_heads()) + ")");
  if (key_dim() % num_heads != 0 || value_dim() % num_heads != 0)
    throw Error(source + ": key dim " + std::to_string(key_dim()) + " and value dim " + std::to_string(value_dim()) +
                " (hidden_size * expand_k, expand_v) must be multiples of 'num_heads' (" + std::to_string(num_heads) + ")");
  if (use_short_conv) require_size(conv_size, 64, source, "conv_size");
  if (use_short_conv && conv_size < 2) throw Error(source + ": field 'conv_size' must be at least 2");
  if (!(norm_eps > 0 && norm_eps <= 1))  // finite: Infinity would zero every logit
    throw Error(source + ": field 'norm_eps' must be in (0, 1], got " + std::to_string(norm_eps));
  if (has_clamp_min && !(clamp_min <= 0)) throw Error(source + ": field 'clamp_min' must be <= 0 (a floor of the log gate)");
  if (parameter_count() > Mamba2Config::kMaxParameters)
    throw Error(source + ": describes " + std::to_string(parameter_count()) +
                " parameters, above statescope's limit of " + std::to_string(Mamba2Config::kMaxParameters));
}

GLAConfig parse_gla_hf(const json& j, const std::string& source) {
  ConfigReader r{j, source, ""};
  auto is_set = [&](const char* k) { return r.has(k); };  // present and not null
  // What statescope does not implement is refused by name, never ignored.
  if (is_set("feature_map")) r.fail("feature_map", "is " + j["feature_map"].dump() + "; statescope implements GLA without a feature map (null)");
  refuse_fla_extras(r, "GLA", {"chunk", "fused_recurrent", "fused_chunk"});
  GLAConfig c;  // fla's GLAConfig defaults throughout
  c.use_short_conv = false;
  read_fla_common(r, c, /*default_layers=*/24);
  c.num_heads = r.opt_int("num_heads", 4);
  c.num_kv_heads = is_set("num_kv_heads") ? r.req_int("num_kv_heads") : 0;
  c.expand_k = r.opt_num("expand_k", 0.5);
  c.expand_v = r.opt_num("expand_v", 1.0);
  c.use_output_gate = r.opt_bool("use_output_gate", true);
  c.fuse_norm = r.opt_bool("fuse_norm", true);
  // Absent: true (fla's default); null: fla's `if elementwise_affine` reads it as false.
  c.elementwise_affine = !j.contains("elementwise_affine") || r.opt_bool("elementwise_affine", false);
  if (is_set("clamp_min")) {
    c.has_clamp_min = true;
    c.clamp_min = r.opt_num("clamp_min", 0.0);
  }
  if (c.num_kv_heads <= 0 && is_set("num_kv_heads")) r.fail("num_kv_heads", "must be positive (null or absent: num_heads), got " + std::to_string(c.num_kv_heads));
  return c;
}

std::string to_hf_config_json(const GLAConfig& c) {
  json j;
  j["architectures"] = {"GLAForCausalLM"};
  j["model_type"] = "gla";
  write_fla_common(j, c);
  j["num_heads"] = c.num_heads;
  j["num_kv_heads"] = c.num_kv_heads > 0 ? json(c.num_kv_heads) : json(nullptr);
  j["expand_k"] = c.expand_k;
  j["expand_v"] = c.expand_v;
  j["use_output_gate"] = c.use_output_gate;
  j["fuse_norm"] = c.fuse_norm;
  j["elementwise_affine"] = c.elementwise_affine;
  j["clamp_min"] = c.has_clamp_min ? json(c.clamp_min) : json(nullptr);
  j["feature_map"] = nullptr;
  return dump_with_infinity(j);
}

// The registration's layout and description (arch.h).
StateLayout Arch<GLAConfig>::layout(const GLAConfig& m) {
  StateLayout l;
  l.n_layer = m.n_layer;
  l.ssm = {{"heads", m.num_heads}, {"head_k_dim", m.head_k_dim()}, {"head_v_dim", m.head_v_dim()}};
  if (m.use_short_conv) l.conv = {{"qkv_channels", m.conv_channels()}, {"conv_size-1", m.conv_size - 1}};
  l.groups = m.num_heads;
  l.group_name = "head";
  return l;
}

Description Arch<GLAConfig>::describe(const GLAConfig& m) {
  auto n = [](int64_t v) { return std::to_string(v); };
  return {{"num_heads", n(m.num_heads)}, {"num_kv_heads", n(m.kv_heads())}, {"head_k_dim", n(m.head_k_dim())},
          {"head_v_dim", n(m.head_v_dim())}, {"mlp_size", n(m.mlp_size())},
          {"short_conv", m.use_short_conv ? n(m.conv_size) : "no"}, {"output_gate", m.use_output_gate ? "yes" : "no"}};
}

GLAConfig Arch<GLAConfig>::from_pretrain(const PretrainShape& s) {
  GLAConfig g;
  g.d_model = s.d_model, g.n_layer = s.n_layer, g.num_heads = s.num_heads, g.expand_k = s.expand_k, g.expand_v = s.expand_v;
  g.use_short_conv = s.short_conv, g.conv_size = s.d_conv, g.intermediate_size = s.mlp_size, g.vocab_size = 256;
  g.tie_embeddings = true;
  g.has_clamp_min = s.clamp_min < 0, g.clamp_min = s.clamp_min;
  return g;
}

std::string Arch<GLAConfig>::pretrain_flags(const PretrainShape& s) {
  return " --heads " + std::to_string(s.num_heads) + " --expand-k " + pretrain_number(s.expand_k) + " --expand-v " +
         pretrain_number(s.expand_v) + " --mlp-size " + std::to_string(s.mlp_size) + (s.short_conv ? " --short-conv" : "") +
         (s.clamp_min < 0 ? " --clamp-min " + pretrain_number(s.clamp_min) : std::string());
}

}  // namespace statescope

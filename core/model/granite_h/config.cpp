// granite_h/config.cpp — Granite 4.0-H's config.json (config.h).
#include "core/model/granite_h/config.h"
#include "core/model/granite_h/arch.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/model/blocks/hybrid_mamba2.h"
#include "core/model/config_json.h"
#include "core/model/mamba2/arch.h"
#include "core/model/pretrain_shape.h"

namespace statescope {

int64_t GraniteHConfig::count(LayerKind k) const { return count_kind(layers, k); }

void GraniteHConfig::validate(const std::string& source) const {
  if (n_layer != static_cast<int64_t>(layers.size()))
    throw Error(source + ": n_layer " + std::to_string(n_layer) + " for " + std::to_string(layers.size()) + " layer kinds");
  require_sizes(source, {{"hidden_size", d_model, 65536}, {"vocab_size", vocab_size, 4194304},
                         {"layer_types", int64_t(layers.size()), 1024},
                         {"shared_intermediate_size", shared_intermediate, 1 << 22}});
  for (auto k : layers)
    if (k != LayerKind::Mamba2 && k != LayerKind::Attention)
      throw Error(source + ": a Granite 4.0-H layer's mixer is Mamba-2 or attention, got " + layer_kind_name(k));
  if (count(LayerKind::Mamba2) > 0) {
    require_sizes(source, {{"mamba_n_heads", mamba_heads, 65536}, {"mamba_d_head", mamba_head_dim, 4096},
                           {"mamba_d_state", d_state, 4096}, {"mamba_n_groups", n_groups, 4096},
                           {"mamba_d_conv", conv_kernel, 64}, {"mamba_chunk_size", chunk_size, 1 << 16},
                           {"mamba_expand", mamba_expand, 64}});
    if (mamba_heads * mamba_head_dim != mamba_expand * d_model)
      throw Error(source + ": fields 'mamba_d_head' x 'mamba_n_heads' (" + std::to_string(mamba_head_dim) + " x " +
                  std::to_string(mamba_heads) + ") must equal 'mamba_expand' x 'hidden_size' (" +
                  std::to_string(mamba_expand * d_model) + ")");
    if (mamba_heads % n_groups != 0)
      throw Error(source + ": field 'mamba_n_heads' (" + std::to_string(mamba_heads) + ") must be a multiple of 'mamba_n_groups' (" +
                  std::to_string(n_groups) + ")");
  }
  if (count(LayerKind::Attention) > 0) {
    require_sizes(source, {{"num_attention_heads", heads, 65536}, {"num_key_value_heads", kv_heads, 65536}});
    if (d_model % heads != 0)
      throw Error(source + ": field 'hidden_size' (" + std::to_string(d_model) + ") must be a multiple of 'num_attention_heads' (" +
                  std::to_string(heads) + "): Granite's head_dim is their quotient");
    if (heads % kv_heads != 0)
      throw Error(source + ": field 'num_attention_heads' (" + std::to_string(heads) +
                  ") must be a multiple of 'num_key_value_heads' (" + std::to_string(kv_heads) + ")");
  }
  if (experts > 0) require_sizes(source, {{"num_experts_per_tok", top_k, experts}, {"intermediate_size", intermediate, 1 << 22}});
  if (!(norm_eps > 0 && norm_eps <= 1)) throw Error(source + ": field 'rms_norm_eps' must be in (0, 1]");
  for (auto [name, v] : {std::pair{"embedding_multiplier", embedding_multiplier}, {"attention_multiplier", attention_multiplier},
                         {"residual_multiplier", residual_multiplier}, {"logits_scaling", logits_scaling}})
    if (!(std::isfinite(v) && v != 0))
      throw Error(source + ": field '" + name + "' must be a finite non-zero number");
}

GraniteHConfig parse_granite_h(const nlohmann::json& j, const std::string& source) {
  ConfigReader r{j, source, ""};
  GraniteHConfig c;
  c.d_model = r.req_int("hidden_size");
  c.vocab_size = r.opt_int("vocab_size", 32000);
  // The mixers: layer_types (or its alias layers_block_type); transformers' legacy names mamba and
  // attention mean the same. Without either, every layer is Mamba-2 (transformers' default).
  const char* key = r.has("layer_types") ? "layer_types" : r.has("layers_block_type") ? "layers_block_type" : nullptr;
  const int64_t n = r.opt_int("num_hidden_layers", 32);
  if (key) {
    if (!j[key].is_array()) r.fail(key, "must be a list of layer kinds");
    for (const auto& k : j[key]) {
      const std::string s = k.is_string() ? k.get<std::string>() : k.dump();
      if (s == "linear_attention" || s == "mamba") c.layers.push_back(LayerKind::Mamba2);
      else if (s == "full_attention" || s == "attention") c.layers.push_back(LayerKind::Attention);
      else r.fail(key, "holds \"" + s + "\"; Granite 4.0-H's kinds are linear_attention (Mamba-2) and full_attention");
    }
    if (r.has("num_hidden_layers") && n != static_cast<int64_t>(c.layers.size()))
      r.fail("num_hidden_layers", "is " + std::to_string(n) + " but '" + key + "' lists " + std::to_string(c.layers.size()) + " layers");
  } else {
    require_size(n, 1024, source, "num_hidden_layers");
    c.layers.assign(static_cast<size_t>(n), LayerKind::Mamba2);
  }
  c.n_layer = static_cast<int64_t>(c.layers.size());
  c.norm_eps = r.opt_num("rms_norm_eps", 1e-6);
  c.tie_embeddings = r.opt_bool("tie_word_embeddings", false);
  // The Mamba-2 layers (transformers' defaults throughout).
  c.mamba_heads = r.opt_int("mamba_n_heads", 128), c.n_groups = r.opt_int("mamba_n_groups", 1);
  c.d_state = r.opt_int("mamba_d_state", 256), c.conv_kernel = r.opt_int("mamba_d_conv", 4);
  c.mamba_expand = r.opt_int("mamba_expand", 2), c.chunk_size = r.opt_int("mamba_chunk_size", 256);
  c.conv_bias = r.opt_bool("mamba_conv_bias", true), c.proj_bias = r.opt_bool("mamba_proj_bias", false);
  const bool auto_head = !r.has("mamba_d_head") || (j["mamba_d_head"].is_string() && j["mamba_d_head"] == "auto");
  c.mamba_head_dim = auto_head ? (c.mamba_heads > 0 ? c.mamba_expand * c.d_model / c.mamba_heads : 0) : r.opt_int("mamba_d_head", 0);
  c.dt_limit_lo = 0, c.dt_limit_hi = std::numeric_limits<double>::infinity();
  r.opt_pair("time_step_limit", c.dt_limit_lo, c.dt_limit_hi);
  // Attention.
  c.heads = r.opt_int("num_attention_heads", 32);
  c.kv_heads = r.has("num_key_value_heads") ? r.req_int("num_key_value_heads") : c.heads;
  c.attention_bias = r.opt_bool("attention_bias", false);
  if (r.opt_num("attention_dropout", 0.0) != 0.0)
    r.fail("attention_dropout", "is not 0; statescope's attention has no dropout (it evaluates and post-trains without it)");
  if (r.opt_string("position_embedding_type", "") == "rope") {
    c.rope_theta = r.opt_num("rope_theta", 10000);
    if (r.has("rope_parameters")) {
      ConfigReader rp{j["rope_parameters"], source, "rope_parameters."};
      const std::string type = rp.opt_string("rope_type", "default");
      if (type != "default") rp.fail("rope_type", "is \"" + type + "\"; statescope implements the default rotary embedding");
      c.rope_theta = rp.opt_num("rope_theta", c.rope_theta);
    }
    if (!(c.rope_theta > 0)) r.fail("rope_theta", "must be positive");
  }
  // Feed-forward: the experts and the shared MLP.
  c.experts = r.opt_int("num_local_experts", 8), c.top_k = r.opt_int("num_experts_per_tok", 2);
  if (c.experts < 0) r.fail("num_local_experts", "must be 0 (no experts) or more");
  c.intermediate = r.opt_int("intermediate_size", 11008), c.shared_intermediate = r.opt_int("shared_intermediate_size", 1024);
  // muP.
  c.embedding_multiplier = r.opt_num("embedding_multiplier", 1.0), c.attention_multiplier = r.opt_num("attention_multiplier", 1.0);
  c.residual_multiplier = r.opt_num("residual_multiplier", 1.0), c.logits_scaling = r.opt_num("logits_scaling", 1.0);
  if (r.opt_string("hidden_act", "silu") != "silu") r.fail("hidden_act", "must be \"silu\" (the one statescope implements)");
  c.json = j.dump(2);
  c.validate(source);
  return c;
}

Mamba2Config mamba_layers(const GraniteHConfig& c) {
  Mamba2Config m = hybrid_mamba2_layers(c);
  m.expand = c.mamba_expand;
  return m;
}

int64_t GraniteHConfig::parameter_count() const {
  const int64_t H = d_model, V = vocab_size, hd = head_dim();
  const Mamba2Config m = mamba_layers(*this);
  const int64_t mamba = mamba2_mixer_parameters(m);
  const int64_t attention = 2 * H * heads * hd + 2 * H * kv_heads * hd + (attention_bias ? heads * hd + 2 * kv_heads * hd + H : 0);
  const int64_t ffn = 3 * H * shared_intermediate + (experts > 0 ? experts * H + experts * 3 * H * intermediate : 0);
  return (tie_embeddings ? 1 : 2) * V * H + H + n_layer * (2 * H + ffn) + count(LayerKind::Mamba2) * mamba +
         count(LayerKind::Attention) * attention;
}

std::string to_hf_config_json(const GraniteHConfig& c) { return stored_config_json(c.json, "Granite 4.0-H"); }

// The registration (arch.h): the Mamba-2 layers' layout with every layer's kind and the attention caches.
StateLayout Arch<GraniteHConfig>::layout(const GraniteHConfig& c) {
  return hybrid_layout(Arch<Mamba2Config>::layout(mamba_layers(c)), c.layers, c.heads, c.kv_heads, c.head_dim());
}

Description Arch<GraniteHConfig>::describe(const GraniteHConfig& c) {
  auto n = [](int64_t v) { return std::to_string(v); };
  auto num = [](double v) { return pretrain_number(v); };
  Description d{{"layers", layer_pattern(c.layers)},
                {"mamba2_layers", n(c.count(LayerKind::Mamba2))},
                {"attention_layers", n(c.count(LayerKind::Attention))}};
  for (auto& f : Arch<Mamba2Config>::describe(mamba_layers(c))) d.push_back({"mamba." + f.first, f.second});
  if (c.count(LayerKind::Attention) > 0)
    d.insert(d.end(), {{"attention.heads", n(c.heads)}, {"attention.kv_heads", n(c.kv_heads)}, {"attention.head_dim", n(c.head_dim())},
                       {"attention.rope", c.rope_theta > 0 ? num(c.rope_theta) : "none (NoPE)"},
                       {"attention.scale", num(c.attention_multiplier)}});
  d.push_back({"mlp.shared_intermediate", n(c.shared_intermediate)});
  if (c.experts > 0)
    d.insert(d.end(), {{"moe.experts", n(c.experts)}, {"moe.top_k", n(c.top_k)}, {"moe.intermediate", n(c.intermediate)}});
  d.insert(d.end(), {{"multipliers", "embedding " + num(c.embedding_multiplier) + ", residual " + num(c.residual_multiplier) +
                                         ", logits / " + num(c.logits_scaling)}});
  return d;
}

// A fresh byte-level Granite 4.0-H: the config.json transformers would write for the shape (no experts,
// NoPE, every multiplier 1), read back.
GraniteHConfig Arch<GraniteHConfig>::from_pretrain(const PretrainShape& s) {
  const std::string where = "pretrain --arch granite_h";
  nlohmann::json kinds = nlohmann::json::array();
  for (auto k : parse_layer_pattern(s.layers, s.n_layer, "M*", where))
    kinds.push_back(k == LayerKind::Mamba2 ? "linear_attention" : "full_attention");
  if (s.headdim <= 0 || (s.expand * s.d_model) % s.headdim != 0)
    throw Error(where + ": field 'headdim' (" + std::to_string(s.headdim) + ") must divide expand x d_model (" +
                std::to_string(s.expand * s.d_model) + ")");
  if (s.attention_head_dim > 0 && s.attention_heads > 0 && s.attention_heads * s.attention_head_dim != s.d_model)
    throw Error(where + ": Granite's attention heads split d_model: attention_heads x attention_head_dim (" +
                std::to_string(s.attention_heads) + " x " + std::to_string(s.attention_head_dim) + ") must be d_model (" +
                std::to_string(s.d_model) + ")");
  nlohmann::json j{{"architectures", {"GraniteMoeHybridForCausalLM"}}, {"model_type", "granitemoehybrid"},
                   {"hidden_size", s.d_model}, {"vocab_size", 256}, {"num_hidden_layers", s.n_layer}, {"layer_types", kinds},
                   {"mamba_n_heads", s.expand * s.d_model / s.headdim}, {"mamba_d_head", s.headdim}, {"mamba_expand", s.expand},
                   {"mamba_d_state", s.d_state}, {"mamba_n_groups", s.ngroups}, {"mamba_d_conv", s.d_conv},
                   {"mamba_chunk_size", s.chunk_size}, {"mamba_conv_bias", true}, {"mamba_proj_bias", false},
                   {"num_attention_heads", s.attention_heads}, {"num_key_value_heads", s.kv_heads},
                   {"position_embedding_type", nullptr}, {"num_local_experts", 0},
                   {"shared_intermediate_size", s.mlp_size > 0 ? s.mlp_size : 4 * s.d_model}, {"rms_norm_eps", 1e-6},
                   {"tie_word_embeddings", true}, {"hidden_act", "silu"}, {"embedding_multiplier", 1.0},
                   {"attention_multiplier", 1.0 / std::sqrt(static_cast<double>(s.d_model / std::max<int64_t>(1, s.attention_heads)))},
                   {"residual_multiplier", 1.0}, {"logits_scaling", 1.0}};
  if (s.dt_limit > 0) j["time_step_limit"] = {0.0, s.dt_limit};
  return parse_granite_h(j, where);
}

std::string Arch<GraniteHConfig>::pretrain_flags(const PretrainShape& s) {
  auto n = [](int64_t v) { return std::to_string(v); };
  return " --layers '" + s.layers + "' --d-state " + n(s.d_state) + " --expand " + n(s.expand) + " --headdim " + n(s.headdim) +
         " --ngroups " + n(s.ngroups) + " --chunk-size " + n(s.chunk_size) + " --attention-heads " + n(s.attention_heads) +
         " --kv-heads " + n(s.kv_heads) + " --attention-head-dim " + n(s.attention_head_dim) + " --mlp-size " + n(s.mlp_size) + " --a-min " + pretrain_number(s.a_min) + " --a-max " +
         pretrain_number(s.a_max) + (s.dt_limit > 0 ? " --dt-limit " + pretrain_number(s.dt_limit) : std::string());
}

}  // namespace statescope

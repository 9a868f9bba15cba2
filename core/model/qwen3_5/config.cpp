// qwen3_5/config.cpp — Qwen3.5's config.json (config.h).
#include "core/model/qwen3_5/config.h"
#include "core/model/qwen3_5/arch.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/base/error.h"
#include "core/model/config_json.h"
#include "core/model/gdn/arch.h"
#include "core/model/pretrain_shape.h"

namespace statescope {

int64_t Qwen35Config::count(LayerKind k) const { return count_kind(layers, k); }

void Qwen35Config::validate(const std::string& source) const {
  if (n_layer != static_cast<int64_t>(layers.size()))
    throw Error(source + ": n_layer " + std::to_string(n_layer) + " for " + std::to_string(layers.size()) + " layer kinds");
  require_sizes(source, {{"hidden_size", d_model, 65536}, {"vocab_size", vocab_size, 4194304},
                         {"intermediate_size", intermediate, 1 << 22}, {"layer_types", int64_t(layers.size()), 1024},
                         {"linear_num_key_heads", key_heads, 4096}, {"linear_num_value_heads", value_heads, 4096},
                         {"linear_key_head_dim", key_head_dim, 4096}, {"linear_value_head_dim", value_head_dim, 4096},
                         {"linear_conv_kernel_dim", conv_kernel, 64}, {"num_attention_heads", heads, 4096},
                         {"num_key_value_heads", kv_heads, 4096}, {"head_dim", head_dim, 4096}});
  if (value_heads % key_heads != 0)
    throw Error(source + ": field 'linear_num_value_heads' (" + std::to_string(value_heads) +
                ") must be a multiple of 'linear_num_key_heads' (" + std::to_string(key_heads) + ")");
  if (!(norm_eps > 0 && norm_eps <= 1)) throw Error(source + ": field 'rms_norm_eps' must be in (0, 1]");
}

Qwen35Config parse_qwen3_5(const nlohmann::json& top, const std::string& source) {
  Qwen35Config c;
  const bool mm = top.contains("text_config") && top["text_config"].is_object();
  const nlohmann::json& j = mm ? top["text_config"] : top;
  ConfigReader r{j, source, mm ? "text_config." : ""};
  c.multimodal = mm;
  c.d_model = r.req_int("hidden_size");
  c.vocab_size = r.req_int("vocab_size");
  c.intermediate = r.req_int("intermediate_size");
  const int64_t n_layer = r.req_int("num_hidden_layers");
  c.n_layer = n_layer;
  c.norm_eps = r.opt_num("rms_norm_eps", 1e-6);
  // The multimodal class ties by the top-level flag, the text class by its own (transformers).
  c.tie_embeddings = mm ? ConfigReader{top, source, ""}.opt_bool("tie_word_embeddings", false)
                        : r.opt_bool("tie_word_embeddings", false);
  if (r.has("layer_types")) {
    for (const auto& k : j["layer_types"]) {
      const std::string s = k.is_string() ? k.get<std::string>() : k.dump();
      if (s == "linear_attention") c.layers.push_back(LayerKind::GatedDeltaNet);
      else if (s == "full_attention") c.layers.push_back(LayerKind::Attention);
      else r.fail("layer_types", "holds \"" + s + "\"; Qwen3.5's kinds are linear_attention and full_attention");
    }
    if (static_cast<int64_t>(c.layers.size()) != n_layer)
      r.fail("layer_types", "lists " + std::to_string(c.layers.size()) + " layers for num_hidden_layers " + std::to_string(n_layer));
  } else {  // transformers' default: every full_attention_interval-th layer is attention
    const int64_t every = r.opt_int("full_attention_interval", 4);
    for (int64_t i = 0; i < n_layer; ++i) c.layers.push_back((i + 1) % every == 0 ? LayerKind::Attention : LayerKind::GatedDeltaNet);
  }
  c.key_heads = r.opt_int("linear_num_key_heads", 16), c.value_heads = r.opt_int("linear_num_value_heads", 32);
  c.key_head_dim = r.opt_int("linear_key_head_dim", 128), c.value_head_dim = r.opt_int("linear_value_head_dim", 128);
  c.conv_kernel = r.opt_int("linear_conv_kernel_dim", 4);
  c.heads = r.opt_int("num_attention_heads", 16), c.kv_heads = r.opt_int("num_key_value_heads", 4);
  c.head_dim = r.opt_int("head_dim", 256), c.attention_bias = r.opt_bool("attention_bias", false);
  // RoPE: rope_parameters (or the older top-level rope_theta / partial_rotary_factor).
  c.rope_theta = r.opt_num("rope_theta", 10000), c.partial_rotary = r.opt_num("partial_rotary_factor", 0.25);
  if (r.has("rope_parameters")) {
    ConfigReader rp{j["rope_parameters"], source, r.prefix + "rope_parameters."};
    const std::string type = rp.opt_string("rope_type", "default");
    if (type != "default" && type != "mrope")
      rp.fail("rope_type", "is \"" + type + "\"; statescope implements the default rotary embedding (mrope equals it on text)");
    c.rope_theta = rp.opt_num("rope_theta", c.rope_theta), c.partial_rotary = rp.opt_num("partial_rotary_factor", c.partial_rotary);
  }
  if (r.opt_string("hidden_act", "silu") != "silu") r.fail("hidden_act", "must be \"silu\" (the one statescope implements)");
  nlohmann::json text = j;
  text["model_type"] = "qwen3_5_text";
  text["tie_word_embeddings"] = c.tie_embeddings;
  c.json = text.dump(2);
  c.validate(source);
  return c;
}

GatedDeltaNetConfig gdn_layers(const Qwen35Config& c) {
  GatedDeltaNetConfig g;
  g.n_layer = c.count(LayerKind::GatedDeltaNet), g.vocab_size = c.vocab_size;
  g.d_model = c.d_model, g.num_heads = c.key_heads, g.num_v_heads = c.value_heads, g.head_dim = c.key_head_dim;
  g.expand_v = static_cast<double>(c.value_head_dim) / static_cast<double>(c.key_head_dim);
  g.use_short_conv = true, g.conv_size = c.conv_kernel, g.use_gate = true, g.sigmoid_gate = false;
  g.allow_neg_eigval = false, g.norm_eps = c.norm_eps;
  return g;
}

int64_t Qwen35Config::parameter_count() const {
  const int64_t H = d_model, V = vocab_size;
  const int64_t K = key_heads * key_head_dim, Vd = value_heads * value_head_dim;
  // in_proj_qkv, conv1d (no bias), in_proj_z, in_proj_a, in_proj_b, A_log, dt_bias, norm, out_proj
  const int64_t gdn = (2 * K + Vd) * H + (2 * K + Vd) * conv_kernel + Vd * H + 2 * value_heads * H + 2 * value_heads +
                      value_head_dim + Vd * H;
  // q_proj (query and gate), k_proj, v_proj, o_proj, q_norm, k_norm
  const int64_t attention = 2 * heads * head_dim * H + 2 * kv_heads * head_dim * H + heads * head_dim * H + 2 * head_dim +
                            (attention_bias ? 2 * heads * head_dim + 2 * kv_heads * head_dim + H : 0);
  return V * H * (tie_embeddings ? 1 : 2) + H + n_layer * (2 * H + 3 * H * intermediate) +
         count(LayerKind::GatedDeltaNet) * gdn + count(LayerKind::Attention) * attention;
}

std::string to_hf_config_json(const Qwen35Config& c) {
  return stored_config_json(c.json, "Qwen3.5");
}

// The registration (arch.h): the Gated DeltaNet layers' layout with every layer's kind and the attention caches.
StateLayout Arch<Qwen35Config>::layout(const Qwen35Config& c) {
  return hybrid_layout(Arch<GatedDeltaNetConfig>::layout(gdn_layers(c)), c.layers, c.heads, c.kv_heads, c.head_dim);
}

Description Arch<Qwen35Config>::describe(const Qwen35Config& c) {
  auto n = [](int64_t v) { return std::to_string(v); };
  std::ostringstream rope;
  rope << c.rope_theta << " over " << c.partial_rotary * 100 << "% of head_dim";
  Description d{{"layers", layer_pattern(c.layers)},
                {"gated_deltanet_layers", n(c.count(LayerKind::GatedDeltaNet))},
                {"attention_layers", n(c.count(LayerKind::Attention))},
                {"intermediate_size", n(c.intermediate)}};
  for (auto& f : Arch<GatedDeltaNetConfig>::describe(gdn_layers(c))) d.push_back({"gated_deltanet." + f.first, f.second});
  d.insert(d.end(), {{"attention.heads", n(c.heads)}, {"attention.kv_heads", n(c.kv_heads)},
                     {"attention.head_dim", n(c.head_dim)}, {"attention.rope", rope.str()}});
  if (c.multimodal) d.push_back({"vision", "the checkpoint's vision tower is left out (text model only)"});
  return d;
}

// A fresh byte-level Qwen3.5 (tied embeddings): the config.json transformers would write for the shape, read back.
Qwen35Config Arch<Qwen35Config>::from_pretrain(const PretrainShape& s) {
  const std::string where = "pretrain --arch qwen3_5";
  nlohmann::json kinds = nlohmann::json::array();
  for (auto k : parse_layer_pattern(s.layers, s.n_layer, "G*", where))
    kinds.push_back(k == LayerKind::GatedDeltaNet ? "linear_attention" : "full_attention");
  const double ev = s.expand_v_set ? s.expand_v : 2.0;
  const auto v_dim = static_cast<int64_t>(ev * static_cast<double>(s.head_dim));
  if (static_cast<double>(v_dim) != ev * static_cast<double>(s.head_dim))
    throw Error(where + ": field 'expand_v' x head_dim must be a whole number of value dims, got " + pretrain_number(ev * static_cast<double>(s.head_dim)));
  nlohmann::json j{{"architectures", {"Qwen3_5ForCausalLM"}}, {"model_type", "qwen3_5_text"}, {"hidden_size", s.d_model},
                   {"vocab_size", 256}, {"num_hidden_layers", s.n_layer}, {"layer_types", kinds},
                   {"intermediate_size", s.mlp_size > 0 ? s.mlp_size : 4 * s.d_model}, {"rms_norm_eps", 1e-6},
                   {"linear_num_key_heads", s.num_heads}, {"linear_num_value_heads", s.v_heads > 0 ? s.v_heads : s.num_heads},
                   {"linear_key_head_dim", s.head_dim}, {"linear_value_head_dim", v_dim}, {"linear_conv_kernel_dim", s.d_conv},
                   {"num_attention_heads", s.attention_heads}, {"num_key_value_heads", s.kv_heads},
                   {"head_dim", s.attention_head_dim}, {"attention_bias", false}, {"hidden_act", "silu"},
                   {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 10000.0}, {"partial_rotary_factor", 0.25}}},
                   {"tie_word_embeddings", true}};
  return parse_qwen3_5(j, where);
}

std::string Arch<Qwen35Config>::pretrain_flags(const PretrainShape& s) {
  auto n = [](int64_t v) { return std::to_string(v); };
  return " --layers '" + s.layers + "' --heads " + n(s.num_heads) + " --head-dim " + n(s.head_dim) + " --v-heads " + n(s.v_heads) +
         (s.expand_v_set ? " --expand-v " + pretrain_number(s.expand_v) : std::string()) + " --attention-heads " +
         n(s.attention_heads) + " --kv-heads " + n(s.kv_heads) + " --attention-head-dim " + n(s.attention_head_dim) +
         " --mlp-size " + n(s.mlp_size) + " --a-min " + pretrain_number(s.a_min) + " --a-max " + pretrain_number(s.a_max);
}

}  // namespace statescope

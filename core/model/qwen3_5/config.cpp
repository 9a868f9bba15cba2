// qwen3_5/config.cpp — Qwen3.5's config.json (config.h).
#include "core/model/qwen3_5/config.h"

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/model/config_json.h"

namespace statescope {

void Qwen35Config::validate(const std::string& source) const {
  require_sizes(source, {{"hidden_size", hidden, 65536}, {"vocab_size", vocab_size, 4194304},
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
  c.hidden = r.req_int("hidden_size");
  c.vocab_size = r.req_int("vocab_size");
  c.intermediate = r.req_int("intermediate_size");
  const int64_t n_layer = r.req_int("num_hidden_layers");
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
  c.validate(source);
  return c;
}

}  // namespace statescope

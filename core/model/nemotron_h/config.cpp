// nemotron_h/config.cpp — Nemotron-H's config.json (config.h).
#include "core/model/nemotron_h/config.h"
#include "core/model/nemotron_h/arch.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/model/blocks/hybrid_mamba2.h"
#include "core/model/config_json.h"
#include "core/model/mamba2/arch.h"
#include "core/model/pretrain_shape.h"

namespace statescope {

int64_t NemotronHConfig::count(LayerKind k) const { return count_kind(layers, k); }

void NemotronHConfig::validate(const std::string& source) const {
  if (n_layer != static_cast<int64_t>(layers.size()))
    throw Error(source + ": n_layer " + std::to_string(n_layer) + " for " + std::to_string(layers.size()) + " layer kinds");
  require_sizes(source, {{"hidden_size", d_model, 65536}, {"vocab_size", vocab_size, 4194304},
                         {"layers_block_type", int64_t(layers.size()), 1024}});
  if (count(LayerKind::Mamba2) > 0) {
    require_sizes(source, {{"mamba_num_heads", mamba_heads, 65536}, {"mamba_head_dim", mamba_head_dim, 4096},
                           {"ssm_state_size", d_state, 4096}, {"n_groups", n_groups, 4096},
                           {"conv_kernel", conv_kernel, 64}, {"chunk_size", chunk_size, 1 << 16}});
    if (mamba_heads % n_groups != 0)
      throw Error(source + ": field 'mamba_num_heads' (" + std::to_string(mamba_heads) + ") must be a multiple of 'n_groups' (" +
                  std::to_string(n_groups) + ")");
  }
  if (count(LayerKind::Attention) > 0) {
    require_sizes(source, {{"num_attention_heads", heads, 65536}, {"num_key_value_heads", kv_heads, 65536},
                           {"head_dim", head_dim, 4096}});
    if (heads % kv_heads != 0)
      throw Error(source + ": field 'num_attention_heads' (" + std::to_string(heads) +
                  ") must be a multiple of 'num_key_value_heads' (" + std::to_string(kv_heads) + ")");
  }
  if (count(LayerKind::Mlp) > 0) require_size(intermediate, 1 << 22, source, "intermediate_size");
  if (count(LayerKind::Moe) > 0)
    require_sizes(source, {{"n_routed_experts", experts, 1 << 16}, {"moe_intermediate_size", moe_intermediate, 1 << 22},
                           {"moe_shared_expert_intermediate_size", shared_intermediate, 1 << 22}});
  if (!(norm_eps > 0 && norm_eps <= 1)) throw Error(source + ": field 'layer_norm_epsilon' must be in (0, 1]");
}

NemotronHConfig parse_nemotron_h(const nlohmann::json& j, const std::string& source) {
  ConfigReader r{j, source, ""};
  NemotronHConfig c;
  c.d_model = r.req_int("hidden_size");
  c.vocab_size = r.req_int("vocab_size");
  // The layer pattern: layers_block_type, else the legacy hybrid_override_pattern string.
  if (r.has("layers_block_type")) {
    if (!j["layers_block_type"].is_array()) r.fail("layers_block_type", "must be a list of layer kinds");
    for (const auto& k : j["layers_block_type"]) {
      const std::string s = k.is_string() ? k.get<std::string>() : k.dump();
      if (s == "linear_attention" || s == "mamba") c.layers.push_back(LayerKind::Mamba2);
      else if (s == "full_attention" || s == "attention") c.layers.push_back(LayerKind::Attention);
      else if (s == "mlp") c.layers.push_back(LayerKind::Mlp);
      else if (s == "moe") c.layers.push_back(LayerKind::Moe);
      else r.fail("layers_block_type", "holds \"" + s + "\"; Nemotron-H's kinds are linear_attention, full_attention, mlp and moe");
    }
  } else if (r.has("hybrid_override_pattern")) {
    for (char ch : r.opt_string("hybrid_override_pattern", "")) {
      if (ch == 'M') c.layers.push_back(LayerKind::Mamba2);
      else if (ch == '*') c.layers.push_back(LayerKind::Attention);
      else if (ch == '-') c.layers.push_back(LayerKind::Mlp);
      else if (ch == 'E') c.layers.push_back(LayerKind::Moe);
      else r.fail("hybrid_override_pattern", std::string("holds '") + ch + "'; its letters are M, *, - and E");
    }
  } else {
    r.fail("layers_block_type", "is missing (nor is there a hybrid_override_pattern): the layers are not said");
  }
  c.n_layer = static_cast<int64_t>(c.layers.size());
  c.norm_eps = r.opt_num("layer_norm_epsilon", 1e-5);
  // transformers' defaults throughout. The Mamba-2 layers:
  c.mamba_heads = r.opt_int("mamba_num_heads", 128), c.mamba_head_dim = r.opt_int("mamba_head_dim", 64);
  c.d_state = r.opt_int("ssm_state_size", 128), c.n_groups = r.opt_int("n_groups", 8);
  c.conv_kernel = r.opt_int("conv_kernel", 4), c.chunk_size = r.opt_int("chunk_size", 128);
  c.conv_bias = r.opt_bool("use_conv_bias", true), c.proj_bias = r.opt_bool("use_bias", false);
  c.dt_limit_lo = 0, c.dt_limit_hi = std::numeric_limits<double>::infinity();
  r.opt_pair("time_step_limit", c.dt_limit_lo, c.dt_limit_hi);
  // Attention (transformers builds it without biases whatever attention_bias says) and the MLPs:
  c.heads = r.opt_int("num_attention_heads", 32), c.kv_heads = r.opt_int("num_key_value_heads", 8);
  c.head_dim = r.opt_int("head_dim", 128), c.intermediate = r.opt_int("intermediate_size", 21504);
  // The mixture of experts:
  c.experts = r.opt_int("n_routed_experts", 8), c.top_k = r.opt_int("num_experts_per_tok", 2);
  c.moe_intermediate = r.opt_int("moe_intermediate_size", 7688);
  c.shared_intermediate = r.opt_int("moe_shared_expert_intermediate_size", 7688);
  c.latent = r.has("moe_latent_size") ? r.req_int("moe_latent_size") : 0;
  c.n_group = r.opt_int("n_group", 1), c.topk_group = r.opt_int("topk_group", 1);
  c.routed_scaling = r.opt_num("routed_scaling_factor", 1.0), c.norm_topk_prob = r.opt_bool("norm_topk_prob", true);
  // What statescope does not implement, by name (transformers honours these).
  if (r.opt_string("mamba_hidden_act", "silu") != "silu") r.fail("mamba_hidden_act", "must be \"silu\" (the one statescope implements)");
  if (r.opt_string("mlp_hidden_act", "relu2") != "relu2") r.fail("mlp_hidden_act", "must be \"relu2\" (the one statescope implements)");
  if (r.opt_bool("mlp_bias", false)) r.fail("mlp_bias", "is true; statescope implements Nemotron-H's MLPs and experts without biases");
  if (r.opt_bool("tie_word_embeddings", false)) r.fail("tie_word_embeddings", "is true; Nemotron-H's lm_head is its own tensor");
  c.json = j.dump(2);
  c.validate(source);
  return c;
}

Mamba2Config mamba_layers(const NemotronHConfig& c) { return hybrid_mamba2_layers(c); }

int64_t NemotronHConfig::parameter_count() const {
  const int64_t H = d_model, V = vocab_size;
  const Mamba2Config m = mamba_layers(*this);
  const int64_t mamba = mamba2_mixer_parameters(m);
  const int64_t attention = 2 * H * heads * head_dim + 2 * H * kv_heads * head_dim;
  const int64_t mlp = 2 * H * intermediate;
  const int64_t X = latent > 0 ? latent : H;
  const int64_t moe = experts * H + experts * 2 * X * moe_intermediate + (shared_intermediate > 0 ? 2 * H * shared_intermediate : 0) +
                      (latent > 0 ? 2 * latent * H : 0);
  return 2 * V * H + H + n_layer * H + count(LayerKind::Mamba2) * mamba + count(LayerKind::Attention) * attention +
         count(LayerKind::Mlp) * mlp + count(LayerKind::Moe) * moe;
}

std::string to_hf_config_json(const NemotronHConfig& c) {
  return stored_config_json(c.json, "Nemotron-H");
}

// The registration (arch.h): the Mamba-2 layers' layout with every layer's kind and the attention caches.
StateLayout Arch<NemotronHConfig>::layout(const NemotronHConfig& c) {
  return hybrid_layout(Arch<Mamba2Config>::layout(mamba_layers(c)), c.layers, c.heads, c.kv_heads, c.head_dim);
}

Description Arch<NemotronHConfig>::describe(const NemotronHConfig& c) {
  auto n = [](int64_t v) { return std::to_string(v); };
  Description d{{"layers", layer_pattern(c.layers)},
                {"mamba2_layers", n(c.count(LayerKind::Mamba2))},
                {"attention_layers", n(c.count(LayerKind::Attention))},
                {"mlp_layers", n(c.count(LayerKind::Mlp))},
                {"moe_layers", n(c.count(LayerKind::Moe))}};
  for (auto& f : Arch<Mamba2Config>::describe(mamba_layers(c))) d.push_back({"mamba." + f.first, f.second});
  if (c.count(LayerKind::Attention) > 0)
    d.insert(d.end(), {{"attention.heads", n(c.heads)}, {"attention.kv_heads", n(c.kv_heads)}, {"attention.head_dim", n(c.head_dim)}});
  if (c.count(LayerKind::Moe) > 0)
    d.insert(d.end(), {{"moe.experts", n(c.experts)}, {"moe.top_k", n(c.top_k)}, {"moe.intermediate", n(c.moe_intermediate)}});
  return d;
}

// A fresh byte-level Nemotron-H: the config.json transformers would write for the shape, read back.
NemotronHConfig Arch<NemotronHConfig>::from_pretrain(const PretrainShape& s) {
  const std::string where = "pretrain --arch nemotron_h";
  nlohmann::json kinds = nlohmann::json::array();
  for (auto k : parse_layer_pattern(s.layers, s.n_layer, "M*-", where))
    kinds.push_back(k == LayerKind::Mamba2 ? "linear_attention" : k == LayerKind::Attention ? "full_attention" : "mlp");
  if (s.headdim <= 0 || (s.expand * s.d_model) % s.headdim != 0)
    throw Error(where + ": field 'headdim' (" + std::to_string(s.headdim) + ") must divide expand x d_model (" +
                std::to_string(s.expand * s.d_model) + ")");
  nlohmann::json j{{"architectures", {"NemotronHForCausalLM"}}, {"model_type", "nemotron_h"}, {"hidden_size", s.d_model},
                   {"vocab_size", 256}, {"num_hidden_layers", s.n_layer}, {"layers_block_type", kinds},
                   {"mamba_num_heads", s.expand * s.d_model / s.headdim}, {"mamba_head_dim", s.headdim},
                   {"ssm_state_size", s.d_state}, {"n_groups", s.ngroups}, {"conv_kernel", s.d_conv},
                   {"chunk_size", s.chunk_size}, {"use_conv_bias", true}, {"use_bias", false},
                   {"num_attention_heads", s.attention_heads}, {"num_key_value_heads", s.kv_heads},
                   {"head_dim", s.attention_head_dim}, {"intermediate_size", s.mlp_size > 0 ? s.mlp_size : 4 * s.d_model},
                   {"layer_norm_epsilon", 1e-5}, {"tie_word_embeddings", false}, {"mamba_hidden_act", "silu"},
                   {"mlp_hidden_act", "relu2"}, {"residual_in_fp32", false}};
  if (s.dt_limit > 0) j["time_step_limit"] = {0.0, s.dt_limit};
  return parse_nemotron_h(j, where);
}

std::string Arch<NemotronHConfig>::pretrain_flags(const PretrainShape& s) {
  auto n = [](int64_t v) { return std::to_string(v); };
  return " --layers '" + s.layers + "' --d-state " + n(s.d_state) + " --expand " + n(s.expand) + " --headdim " + n(s.headdim) +
         " --ngroups " + n(s.ngroups) + " --chunk-size " + n(s.chunk_size) + " --attention-heads " + n(s.attention_heads) +
         " --kv-heads " + n(s.kv_heads) + " --attention-head-dim " + n(s.attention_head_dim) + " --mlp-size " + n(s.mlp_size) +
         " --a-min " + pretrain_number(s.a_min) + " --a-max " + pretrain_number(s.a_max) +
         (s.dt_limit > 0 ? " --dt-limit " + pretrain_number(s.dt_limit) : std::string());
}

}  // namespace statescope

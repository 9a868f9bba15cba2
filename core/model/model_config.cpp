// model_config.cpp — dispatch by architecture: config.json in and out, sizes, the state layout.
#include "core/model/model_config.h"

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/model/config_json.h"

namespace statescope {

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

std::string architecture(const ModelConfig& c) {
  return std::visit(Overloaded{[](const Mamba2Config&) { return "mamba2"; }, [](const Mamba1Config&) { return "mamba1"; },
                               [](const GLAConfig&) { return "gla"; },
                               [](const GatedDeltaNetConfig&) { return "gated_deltanet"; }},
                    c);
}

std::string architecture_title(const ModelConfig& c) {
  return std::visit(Overloaded{[](const Mamba2Config&) { return "Mamba-2"; }, [](const Mamba1Config&) { return "Mamba-1"; },
                               [](const GLAConfig&) { return "GLA"; },
                               [](const GatedDeltaNetConfig&) { return "Gated DeltaNet"; }},
                    c);
}

std::string known_architectures() { return "mamba2 (Mamba-2), mamba1 (Mamba-1), gla (GLA), gated_deltanet (Gated DeltaNet)"; }

int64_t vocab_size(const ModelConfig& c) {
  return std::visit([](const auto& x) { return x.vocab_size; }, c);
}
int64_t n_layer(const ModelConfig& c) {
  return std::visit([](const auto& x) { return x.n_layer; }, c);
}
int64_t d_model(const ModelConfig& c) {
  return std::visit([](const auto& x) { return x.d_model; }, c);
}
int64_t parameter_count(const ModelConfig& c) {
  return std::visit([](const auto& x) { return x.parameter_count(); }, c);
}
void validate(const ModelConfig& c, const std::string& source) {
  std::visit([&](const auto& x) { x.validate(source); }, c);
}

StateLayout state_layout(const ModelConfig& c) {
  return std::visit(Overloaded{
                        [](const Mamba2Config& m) {
                          StateLayout l;
                          l.architecture = "mamba2";
                          l.n_layer = m.n_layer;
                          l.ssm = {{"heads", m.nheads()}, {"headdim", m.headdim}, {"d_state", m.d_state}};
                          l.conv = {{"conv_dim", m.conv_dim()}, {"d_conv-1", m.d_conv - 1}};
                          l.groups = m.nheads();
                          l.group_name = "head";
                          return l;
                        },
                        [](const Mamba1Config& m) {
                          StateLayout l;
                          l.architecture = "mamba1";
                          l.n_layer = m.n_layer;
                          l.ssm = {{"d_inner", m.d_inner()}, {"d_state", m.d_state}};
                          l.conv = {{"d_inner", m.d_inner()}, {"d_conv-1", m.d_conv - 1}};
                          l.groups = channel_groups(m.d_inner());
                          l.group_name = "channel group";
                          return l;
                        },
                        [](const GLAConfig& m) {
                          StateLayout l;
                          l.architecture = "gla";
                          l.n_layer = m.n_layer;
                          l.ssm = {{"heads", m.num_heads}, {"head_k_dim", m.head_k_dim()}, {"head_v_dim", m.head_v_dim()}};
                          if (m.use_short_conv) l.conv = {{"qkv_channels", m.conv_channels()}, {"conv_size-1", m.conv_size - 1}};
                          l.groups = m.num_heads;
                          l.group_name = "head";
                          return l;
                        },
                        [](const GatedDeltaNetConfig& m) {
                          StateLayout l;
                          l.architecture = "gated_deltanet";
                          l.n_layer = m.n_layer;
                          l.ssm = {{"heads", m.v_heads()}, {"head_k_dim", m.head_dim}, {"head_v_dim", m.head_v_dim()}};
                          if (m.use_short_conv) l.conv = {{"qkv_channels", m.conv_channels()}, {"conv_size-1", m.conv_size - 1}};
                          l.groups = m.v_heads();
                          l.group_name = "head";
                          return l;
                        }},
                    c);
}

std::string architecture_line(const ModelConfig& c) {
  const StateLayout l = state_layout(c);
  std::string sizes;
  for (const auto& a : l.ssm) sizes += (sizes.empty() ? "" : " \u00d7 ") + std::to_string(a.size);
  return architecture_title(c) + " \u00b7 " + std::to_string(l.n_layer) + " layers \u00b7 state " + l.ssm_axes() + " " +
         sizes + " \u00b7 " + std::to_string(l.groups) + " " + l.group_name + "s";
}

std::vector<std::pair<std::string, std::string>> describe(const ModelConfig& c) {
  using S = std::vector<std::pair<std::string, std::string>>;
  auto n = [](int64_t v) { return std::to_string(v); };
  return std::visit(Overloaded{[&](const Mamba2Config& m) {
                                 return S{{"architecture", "Mamba-2 (mamba2)"}, {"d_model", n(m.d_model)},
                                          {"n_layer", n(m.n_layer)}, {"d_state", n(m.d_state)},
                                          {"headdim", n(m.headdim)}, {"nheads", n(m.nheads())},
                                          {"ngroups", n(m.ngroups)}, {"d_conv", n(m.d_conv)},
                                          {"chunk_size", n(m.chunk_size)}, {"vocab_size", n(m.vocab_size)}};
                               },
                               [&](const Mamba1Config& m) {
                                 return S{{"architecture", "Mamba-1 (mamba1)"}, {"d_model", n(m.d_model)},
                                          {"n_layer", n(m.n_layer)}, {"d_state", n(m.d_state)},
                                          {"d_inner", n(m.d_inner())}, {"dt_rank", n(m.rank())},
                                          {"d_conv", n(m.d_conv)}, {"vocab_size", n(m.vocab_size)}};
                               },
                               [&](const GLAConfig& m) {
                                 return S{{"architecture", "GLA (gla)"}, {"d_model", n(m.d_model)},
                                          {"n_layer", n(m.n_layer)}, {"num_heads", n(m.num_heads)},
                                          {"num_kv_heads", n(m.kv_heads())}, {"head_k_dim", n(m.head_k_dim())},
                                          {"head_v_dim", n(m.head_v_dim())}, {"mlp_size", n(m.mlp_size())},
                                          {"short_conv", m.use_short_conv ? n(m.conv_size) : "no"},
                                          {"output_gate", m.use_output_gate ? "yes" : "no"}, {"vocab_size", n(m.vocab_size)}};
                               },
                               [&](const GatedDeltaNetConfig& m) {
                                 return S{{"architecture", "Gated DeltaNet (gated_deltanet)"}, {"d_model", n(m.d_model)},
                                          {"n_layer", n(m.n_layer)}, {"num_heads", n(m.num_heads)},
                                          {"num_v_heads", n(m.v_heads())}, {"head_k_dim", n(m.head_dim)},
                                          {"head_v_dim", n(m.head_v_dim())}, {"mlp_size", n(m.mlp_size())},
                                          {"short_conv", m.use_short_conv ? n(m.conv_size) : "no"},
                                          {"output_gate", !m.use_gate ? "no" : m.sigmoid_gate ? "sigmoid" : "swish"},
                                          {"beta", m.allow_neg_eigval ? "2 sigmoid (negative eigenvalues)" : "sigmoid"},
                                          {"vocab_size", n(m.vocab_size)}};
                               }},
                    c);
}

ModelConfig parse_model_config(const std::string& text, const std::string& source) try {
  const nlohmann::json j = parse_config_text(text, source);
  ModelConfig c;
  if (j.contains("model_type")) {
    const auto& t = j["model_type"];
    if (t == "mamba2") c = parse_mamba2_hf(j, source);
    else if (t == "mamba") c = parse_mamba1_hf(j, source);
    else if (t == "gla") c = parse_gla_hf(j, source);
    else if (t == "gated_deltanet") c = parse_gated_deltanet_hf(j, source);
    else
      throw Error(source + ": field 'model_type' is " + t.dump() +
                  "; statescope knows \"mamba2\" (Mamba-2), \"mamba\" (Mamba-1), \"gla\" (GLA) and "
                  "\"gated_deltanet\" (Gated DeltaNet)");
  } else if (j.contains("d_model") || j.contains("ssm_cfg")) {
    // mamba_ssm builds Mamba-1 when ssm_cfg names no layer.
    const bool has_layer = j.contains("ssm_cfg") && j["ssm_cfg"].is_object() && j["ssm_cfg"].contains("layer");
    const auto layer = has_layer ? j["ssm_cfg"]["layer"] : nlohmann::json("Mamba1");
    if (layer == "Mamba2") c = parse_mamba2_mamba_ssm(j, source);
    else if (layer == "Mamba1") c = parse_mamba1_mamba_ssm(j, source);
    else
      throw Error(source + ": field 'ssm_cfg.layer' is " + layer.dump() +
                  "; statescope knows \"Mamba2\" and \"Mamba1\" (or no layer, which mamba_ssm builds as Mamba-1)");
  } else {
    throw Error(source + ": neither a Hugging Face config (model_type) nor a mamba_ssm config "
                "(d_model, n_layer, ssm_cfg)");
  }
  validate(c, source);
  return c;
} catch (const nlohmann::json::exception& e) {  // a field of the wrong JSON type
  throw Error(source + ": a field has the wrong JSON type (" + e.what() + ")");
}

ModelConfig load_model_config(const std::string& path) {
  return parse_model_config(read_file_bounded(path, kMaxJsonBytes, "config file"), path);
}

std::string to_hf_config_json(const ModelConfig& c) {
  return std::visit([](const auto& x) { return to_hf_config_json(x); }, c);
}

}  // namespace statescope

// model_config.cpp — dispatch by architecture: config.json in and out, sizes, the state layout.
#include "core/model/model_config.h"
#include "core/model/pretrain_shape.h"

#include <algorithm>
#include <sstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/model/config_json.h"

namespace statescope {

namespace {

template <class C>
using ArchOf = Arch<std::decay_t<C>>;

// "\"mamba2\" (Mamba-2), \"mamba\" (Mamba-1), ..." for the values of one dialect's field.
template <class Field>
std::string quoted_list(Field field) {
  std::vector<std::string> parts;
  for_each_architecture([&](auto t) {
    using A = Arch<typename decltype(t)::type>;
    const std::string v = field(A{});
    if (!v.empty()) parts.push_back("\"" + v + "\" (" + A::names.title + ")");
  });
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

}  // namespace

std::string architecture(const ModelConfig& c) {
  return std::visit([](const auto& x) -> std::string { return ArchOf<decltype(x)>::names.key; }, c);
}

std::string architecture_title(const ModelConfig& c) {
  return std::visit([](const auto& x) -> std::string { return ArchOf<decltype(x)>::names.title; }, c);
}

std::string known_architectures() {
  std::string out;
  for_each_architecture([&](auto t) {
    using A = Arch<typename decltype(t)::type>;
    out += (out.empty() ? "" : ", ") + std::string(A::names.key) + " (" + A::names.title + ")";
  });
  return out;
}

bool is_architecture(const std::string& key) {
  bool found = false;
  for_each_architecture([&](auto t) { found = found || key == Arch<typename decltype(t)::type>::names.key; });
  return found;
}

Capabilities capabilities(const ModelConfig& c) {
  return std::visit([](const auto& x) { return ArchOf<decltype(x)>::capabilities; }, c);
}

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
  return std::visit(
      [](const auto& x) {
        StateLayout l = ArchOf<decltype(x)>::layout(x);
        l.architecture = ArchOf<decltype(x)>::names.key;
        return l;
      },
      c);
}

std::string architecture_line(const ModelConfig& c) {
  const StateLayout l = state_layout(c);
  std::string sizes;
  for (const auto& a : l.ssm) sizes += (sizes.empty() ? "" : " \u00d7 ") + std::to_string(a.size);
  std::string layers = std::to_string(l.n_layer) + " layers";
  if (!l.layer_kinds.empty()) {  // a hybrid: every kind counted, the state being its recurrent layers'
    std::vector<std::pair<std::string, int>> counts;
    for (const auto& k : l.layer_kinds) {
      auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == k; });
      if (it == counts.end()) counts.push_back({k, 1});
      else ++it->second;
    }
    layers = std::to_string(l.layer_kinds.size()) + " layers (";
    for (size_t i = 0; i < counts.size(); ++i) layers += (i ? ", " : "") + std::to_string(counts[i].second) + " " + counts[i].first;
    layers += ")";
  }
  return architecture_title(c) + " \u00b7 " + layers + " \u00b7 " + (l.layer_kinds.empty() ? "" : "recurrent ") + "state " +
         l.ssm_axes() + " " + sizes + " \u00b7 " + std::to_string(l.groups) + " " + l.group_name + "s";
}

Description describe(const ModelConfig& c) {
  return std::visit(
      [](const auto& x) {
        using A = ArchOf<decltype(x)>;
        auto n = [](int64_t v) { return std::to_string(v); };
        Description d{{"architecture", std::string(A::names.title) + " (" + A::names.key + ")"},
                      {"d_model", n(x.d_model)},
                      {"n_layer", n(x.n_layer)}};
        for (auto& field : A::describe(x)) d.push_back(std::move(field));  // the architecture's own fields
        d.push_back({"vocab_size", n(x.vocab_size)});
        return d;
      },
      c);
}

ModelConfig parse_model_config(const std::string& text, const std::string& source) try {
  const nlohmann::json j = parse_config_text(text, source);
  std::optional<ModelConfig> c;
  if (j.contains("model_type")) {
    const auto& t = j["model_type"];
    for_each_architecture([&](auto a) {
      using A = Arch<typename decltype(a)::type>;
      const std::string alt = A::names.hf_model_type_alt;
      if (!c && (t == A::names.hf_model_type || (!alt.empty() && t == alt))) c = A::parse_hf(j, source);
    });
    if (!c)
      throw Error(source + ": field 'model_type' is " + t.dump() + "; statescope knows " +
                  quoted_list([](auto a) {
                    const std::string alt = decltype(a)::names.hf_model_type_alt;
                    return std::string(decltype(a)::names.hf_model_type) + (alt.empty() ? "" : "\" or \"" + alt);
                  }));
  } else if (j.contains("d_model") || j.contains("ssm_cfg")) {
    // mamba_ssm builds Mamba-1 when ssm_cfg names no layer.
    const bool has_layer = j.contains("ssm_cfg") && j["ssm_cfg"].is_object() && j["ssm_cfg"].contains("layer");
    const auto layer = has_layer ? j["ssm_cfg"]["layer"] : nlohmann::json("Mamba1");
    for_each_architecture([&](auto a) {
      using A = Arch<typename decltype(a)::type>;
      if constexpr (A::names.mamba_ssm_layer[0] != '\0')
        if (!c && layer == A::names.mamba_ssm_layer) c = A::parse_mamba_ssm(j, source);
    });
    if (!c)
      throw Error(source + ": field 'ssm_cfg.layer' is " + layer.dump() + "; statescope knows " +
                  quoted_list([](auto a) { return std::string(decltype(a)::names.mamba_ssm_layer); }) +
                  " (or no layer, which mamba_ssm builds as Mamba-1)");
  } else {
    throw Error(source + ": neither a Hugging Face config (model_type) nor a mamba_ssm config "
                "(d_model, n_layer, ssm_cfg)");
  }
  validate(*c, source);
  return *c;
} catch (const nlohmann::json::exception& e) {  // a field of the wrong JSON type
  throw Error(source + ": a field has the wrong JSON type (" + e.what() + ")");
}

ModelConfig load_model_config(const std::string& path) {
  return parse_model_config(read_file_bounded(path, kMaxJsonBytes, "config file"), path);
}

std::string to_hf_config_json(const ModelConfig& c) {
  return std::visit([](const auto& x) { return to_hf_config_json(x); }, c);
}

std::string pretrain_number(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

}  // namespace statescope

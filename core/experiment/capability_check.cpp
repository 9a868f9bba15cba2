// capability_check.cpp — see capability_check.h.
#include "core/experiment/capability_check.h"

#include <nlohmann/json.hpp>

#include "core/base/error.h"

namespace statescope {

std::string refuses_analysis(const ModelConfig& config, const std::string& key) {
  const Capabilities caps = capabilities(config);
  if (key == "attention" && !caps.effective_attention && !caps.attention)
    return "effective attention is written for selective scans (Mamba-2's heads, Mamba-1's channel groups) and a "
           "hybrid's attention layers; this model is " + architecture_title(config);
  return "";
}

namespace {

// The attention analysis's layer on a hybrid: a model layer that is attention (its softmax) or a
// recurrent layer whose effective attention the architecture computes; "" when it is, else why not.
std::string refuses_attention_layer(const ModelConfig& config, int64_t layer) {
  const StateLayout lay = state_layout(config);
  const std::string title = architecture_title(config);
  if (lay.layer_kinds.empty()) {
    if (layer >= lay.n_layer)
      return "layer " + std::to_string(layer) + " is outside 0.." + std::to_string(lay.n_layer - 1) + " (" + title + ")";
    return "";
  }
  const int64_t n = static_cast<int64_t>(lay.layer_kinds.size());
  if (layer >= n) return "layer " + std::to_string(layer) + " is outside 0.." + std::to_string(n - 1) + " (" + title + ")";
  const std::string& kind = lay.layer_kinds[static_cast<size_t>(layer)];
  std::string ok;  // the layers that can be shown
  for (int64_t i = 0; i < n; ++i) {
    const std::string& k = lay.layer_kinds[static_cast<size_t>(i)];
    if (k == "attention" || (k == "mamba2" && capabilities(config).effective_attention)) ok += (ok.empty() ? "" : ", ") + std::to_string(i);
  }
  if (kind == "attention" || (kind == "mamba2" && capabilities(config).effective_attention)) return "";
  return "layer " + std::to_string(layer) + " of this " + title + " is a " + kind + " layer, which has no attention map " +
         "here; its layers that do: " + ok;
}

}  // namespace

std::string refuses_intervention(const ModelConfig& config, const std::string& kind) {
  return capabilities(config).refuses_intervention(kind, architecture_title(config));
}

void check_capabilities(const ExperimentSpec& spec, const ModelConfig& config, const std::string& src) {
  const Capabilities caps = capabilities(config);
  const std::string title = architecture_title(config);
  for (const auto& [name, iv] : spec.interventions)
    if (const std::string why = refuses_intervention(config, iv.kind); !why.empty())
      throw Error(src + ": intervention '" + name + "' (" + iv.kind + "): " + why);
  for (const auto& [key, section] : spec.analyses.sections) {
    if (const std::string why = refuses_analysis(config, key); !why.empty())
      throw Error(src + ": analyses." + key + ": " + why);
    if (key != "attention") continue;
    const auto j = nlohmann::json::parse(section, nullptr, false);  // checked already: its layer is a whole number
    if (j.is_object() && j.contains("layer") && j["layer"].is_number_integer())
      if (const std::string why = refuses_attention_layer(config, j["layer"].get<int64_t>()); !why.empty())
        throw Error(src + ": analyses.attention.layer: " + why);
  }
  if (spec.pretrain && !caps.a_range && (spec.pretrain->a_min != 1.0 || spec.pretrain->a_max != 16.0))
    throw Error(src + ": pretrain.a_min/a_max: " + title + " has no A range (its A initialisation is fixed)");
}

}  // namespace statescope

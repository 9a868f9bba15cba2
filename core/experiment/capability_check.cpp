// capability_check.cpp — see capability_check.h.
#include "core/experiment/capability_check.h"

#include "core/base/error.h"

namespace statescope {

std::string refuses_analysis(const ModelConfig& config, const std::string& key) {
  if (key == "attention" && !capabilities(config).effective_attention)
    return "effective attention is written for selective scans (Mamba-2's heads, Mamba-1's channel groups); this model "
           "is " + architecture_title(config);
  return "";
}

std::string refuses_intervention(const ModelConfig& config, const std::string& kind) {
  return capabilities(config).refuses_intervention(kind, architecture_title(config));
}

void check_capabilities(const ExperimentSpec& spec, const ModelConfig& config, const std::string& src) {
  const Capabilities caps = capabilities(config);
  const std::string title = architecture_title(config);
  for (const auto& [name, iv] : spec.interventions)
    if (const std::string why = refuses_intervention(config, iv.kind); !why.empty())
      throw Error(src + ": intervention '" + name + "' (" + iv.kind + "): " + why);
  for (const auto& [key, section] : spec.analyses.sections)
    if (const std::string why = refuses_analysis(config, key); !why.empty())
      throw Error(src + ": analyses." + key + ": " + why);
  if (spec.pretrain && !caps.a_range && (spec.pretrain->a_min != 1.0 || spec.pretrain->a_max != 16.0))
    throw Error(src + ": pretrain.a_min/a_max: " + title + " has no A range (its A initialisation is fixed)");
}

}  // namespace statescope

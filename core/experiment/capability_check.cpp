// capability_check.cpp — see capability_check.h.
#include "core/experiment/capability_check.h"

#include "core/base/error.h"

namespace statescope {

void check_capabilities(const ExperimentSpec& spec, const ModelConfig& config, const std::string& src) {
  const Capabilities caps = capabilities(config);
  const std::string title = architecture_title(config);
  for (const auto& [name, iv] : spec.interventions)
    if (const std::string why = caps.refuses_intervention(iv.kind, title); !why.empty())
      throw Error(src + ": intervention '" + name + "' (" + iv.kind + "): " + why);
  if (spec.analyses.has("attention") && !caps.effective_attention)
    throw Error(src + ": analyses.attention: effective attention is written for selective scans (Mamba-2's heads, "
                "Mamba-1's channel groups); this model is " + title);
  if (spec.pretrain && !caps.a_range && (spec.pretrain->a_min != 1.0 || spec.pretrain->a_max != 16.0))
    throw Error(src + ": pretrain.a_min/a_max: " + title + " has no A range (its A initialisation is fixed)");
}

}  // namespace statescope

// arch.h — Gated DeltaNet's registration (core/model/arch.h says what each line is). Gated DeltaNet (fla): Mamba-2's dt x A decay per head and the delta rule's write.
#pragma once
#include "core/model/arch.h"
#include "core/model/gdn/config.h"

namespace statescope {

template <>
struct Arch<GatedDeltaNetConfig> {
  static constexpr Capabilities capabilities{.has_dt = true, .a_range = true, .freezable_A = true};
  static constexpr ArchNames names{"gated_deltanet", "Gated DeltaNet", "gated_deltanet", ""};
  static GatedDeltaNetConfig parse_hf(const nlohmann::json& j, const std::string& source) { return parse_gated_deltanet_hf(j, source); }
  STATESCOPE_ARCH_FUNCTIONS(GatedDeltaNetConfig);
};

}  // namespace statescope

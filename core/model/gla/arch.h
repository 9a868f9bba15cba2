// arch.h — GLA's registration (core/model/arch.h says what each line is). GLA (fla): a data-dependent gate per key dimension, no dt, no A.
#pragma once
#include "core/model/arch.h"
#include "core/model/gla/config.h"

namespace statescope {

template <>
struct Arch<GLAConfig> {
  static constexpr Capabilities capabilities{};  // a decay rate only (the defaults)
  static constexpr ArchNames names{"gla", "GLA", "gla", ""};
  static GLAConfig parse_hf(const nlohmann::json& j, const std::string& source) { return parse_gla_hf(j, source); }
  STATESCOPE_ARCH_FUNCTIONS(GLAConfig);
};

}  // namespace statescope

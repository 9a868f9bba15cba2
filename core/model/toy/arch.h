// arch.h — the toy architecture's registration (core/model/arch.h says what each line is).
#pragma once
#include "core/model/arch.h"
#include "core/model/toy/config.h"

namespace statescope {

template <>
struct Arch<ToyConfig> {
  static constexpr Capabilities capabilities{.has_decay = false};
  static constexpr ArchNames names{"toy", "Toy", "toy_diag", ""};
  static ToyConfig parse_hf(const nlohmann::json& j, const std::string& source) { return parse_toy_hf(j, source); }
  STATESCOPE_ARCH_FUNCTIONS(ToyConfig);
};

}  // namespace statescope

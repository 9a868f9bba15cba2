// arch.h — Granite 4.0-H's registration (core/model/arch.h says what each line is). IBM's hybrid:
// Mamba-2 layers among attention layers (NoPE or RoPE), each layer with a mixture of SwiGLU experts
// beside a shared SwiGLU MLP, and muP multipliers. Its state layout is its Mamba-2 layers'; dt_scale
// and a_scale act on them.
#pragma once
#include "core/model/arch.h"
#include "core/model/granite_h/config.h"

namespace statescope {

template <>
struct Arch<GraniteHConfig> {
  static constexpr Capabilities capabilities{.effective_attention = true, .has_dt = true, .a_range = true, .attention = true};
  static constexpr ArchNames names{"granite_h", "Granite 4.0-H", "granitemoehybrid", ""};
  static GraniteHConfig parse_hf(const nlohmann::json& j, const std::string& source) { return parse_granite_h(j, source); }
  STATESCOPE_ARCH_FUNCTIONS(GraniteHConfig);
};

}  // namespace statescope

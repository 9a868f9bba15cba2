// arch.h — Nemotron-H's registration (core/model/arch.h says what each line is). NVIDIA's hybrid: Mamba-2
// layers among attention (no positional encoding), relu^2 MLP and mixture-of-experts layers. Its
// state layout is its Mamba-2 layers'; dt_scale and a_scale act on them.
#pragma once
#include "core/model/arch.h"
#include "core/model/nemotron_h/config.h"

namespace statescope {

template <>
struct Arch<NemotronHConfig> {
  static constexpr Capabilities capabilities{.effective_attention = true, .has_dt = true, .a_range = true, .attention = true};
  static constexpr ArchNames names{"nemotron_h", "Nemotron-H", "nemotron_h", ""};
  static NemotronHConfig parse_hf(const nlohmann::json& j, const std::string& source) { return parse_nemotron_h(j, source); }
  STATESCOPE_ARCH_FUNCTIONS(NemotronHConfig);
};

}  // namespace statescope

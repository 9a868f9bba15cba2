// arch.h — Mamba-1's registration (core/model/arch.h says what each line is). Mamba-1 (S6): a decay per channel and state entry; A initialised 1..d_state (no A range).
#pragma once
#include "core/model/arch.h"
#include "core/model/mamba1/config.h"

namespace statescope {

template <>
struct Arch<Mamba1Config> {
  static constexpr Capabilities capabilities{.effective_attention = true, .has_dt = true, .longmamba = true, .freezable_A = true};
  static constexpr ArchNames names{"mamba1", "Mamba-1", "mamba", "Mamba1"};
  static Mamba1Config parse_hf(const nlohmann::json& j, const std::string& source) { return parse_mamba1_hf(j, source); }
  static Mamba1Config parse_mamba_ssm(const nlohmann::json& j, const std::string& source) { return parse_mamba1_mamba_ssm(j, source); }
  STATESCOPE_ARCH_FUNCTIONS(Mamba1Config);
};

}  // namespace statescope

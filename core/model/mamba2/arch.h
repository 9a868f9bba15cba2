// arch.h — Mamba-2's registration (core/model/arch.h says what each line is). Mamba-2 (SSD): a scalar decay per head, B and C shared by groups of heads.
#pragma once
#include "core/model/arch.h"
#include "core/model/mamba2/config.h"

namespace statescope {

template <>
struct Arch<Mamba2Config> {
  static constexpr Capabilities capabilities{.effective_attention = true, .has_dt = true, .longmamba = true, .a_range = true, .freezable_A = true};
  static constexpr ArchNames names{"mamba2", "Mamba-2", "mamba2", "Mamba2"};
  static Mamba2Config parse_hf(const nlohmann::json& j, const std::string& source) { return parse_mamba2_hf(j, source); }
  static Mamba2Config parse_mamba_ssm(const nlohmann::json& j, const std::string& source) { return parse_mamba2_mamba_ssm(j, source); }
  STATESCOPE_ARCH_FUNCTIONS(Mamba2Config);
};

}  // namespace statescope

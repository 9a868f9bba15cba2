// arch.h — Qwen3.5's registration (core/model/arch.h says what each line is). Qwen's hybrid: Gated
// DeltaNet layers among gated attention layers, each followed by a SwiGLU MLP. Its state layout is its
// Gated DeltaNet layers'; dt_scale and a_scale act on them. model_type "qwen3_5_text", or "qwen3_5"
// (the multimodal checkpoint: its text model).
#pragma once
#include "core/model/arch.h"
#include "core/model/qwen3_5/config.h"

namespace statescope {

template <>
struct Arch<Qwen35Config> {
  static constexpr Capabilities capabilities{.has_dt = true, .a_range = true, .attention = true};
  static constexpr ArchNames names{"qwen3_5", "Qwen3.5", "qwen3_5_text", "", "qwen3_5"};
  static Qwen35Config parse_hf(const nlohmann::json& j, const std::string& source) { return parse_qwen3_5(j, source); }
  STATESCOPE_ARCH_FUNCTIONS(Qwen35Config);
};

}  // namespace statescope

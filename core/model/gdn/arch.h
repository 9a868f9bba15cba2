// arch.h — Gated DeltaNet's registration (core/model/arch.h): its names, the config.json dialects it
// answers to, its state layout and description, its capabilities and its factory. Gated DeltaNet (fla): Mamba-2's dt x A decay per head and the delta rule's write.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/model/arch.h"
#include "core/model/gdn/config.h"
#include "core/model/state_layout.h"

namespace statescope {

class RecurrentLM;

template <>
struct Arch<GatedDeltaNetConfig> {
  static constexpr const char* key = "gated_deltanet";        // results, specs, `forward`'s attributes, pretrain --arch
  static constexpr const char* title = "Gated DeltaNet";    // what people read
  static constexpr const char* hf_model_type = "gated_deltanet";  // Hugging Face config.json's model_type
  static constexpr const char* mamba_ssm_layer = "";  // mamba_ssm's ssm_cfg.layer ("": not a mamba_ssm model)
  static GatedDeltaNetConfig parse_hf(const nlohmann::json& j, const std::string& source) { return parse_gated_deltanet_hf(j, source); }
  // config.cpp: `pretrain`'s fields as this architecture's byte-level config (vocab 256, tied
  // embeddings; validated by the caller), and its own flags of the pretrain command.
  static GatedDeltaNetConfig from_pretrain(const PretrainShape& s);
  static std::string pretrain_flags(const PretrainShape& s);
  static StateLayout layout(const GatedDeltaNetConfig& c);   // config.cpp
  static Description describe(const GatedDeltaNetConfig& c);   // config.cpp
  static constexpr Capabilities capabilities{.effective_attention = false, .has_dt = true, .has_decay = true, .longmamba = false, .a_range = true, .freezable_A = true};
  static RecurrentLM make(const GatedDeltaNetConfig& c);       // model.cpp: a fresh model (seed 0), CPU, float32
};

}  // namespace statescope

// arch.h — Mamba-1's registration (core/model/arch.h): its names, the config.json dialects it
// answers to, its state layout and description, its capabilities and its factory. Mamba-1 (S6): a decay per channel and state entry; A initialised 1..d_state (no A range).
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/model/arch.h"
#include "core/model/mamba1/config.h"
#include "core/model/state_layout.h"

namespace statescope {

class RecurrentLM;

template <>
struct Arch<Mamba1Config> {
  static constexpr const char* key = "mamba1";        // results, specs, `forward`'s attributes, pretrain --arch
  static constexpr const char* title = "Mamba-1";    // what people read
  static constexpr const char* hf_model_type = "mamba";  // Hugging Face config.json's model_type
  static constexpr const char* mamba_ssm_layer = "Mamba1";  // mamba_ssm's ssm_cfg.layer ("": not a mamba_ssm model)
  static Mamba1Config parse_hf(const nlohmann::json& j, const std::string& source) { return parse_mamba1_hf(j, source); }
  static Mamba1Config parse_mamba_ssm(const nlohmann::json& j, const std::string& source) { return parse_mamba1_mamba_ssm(j, source); }
  // config.cpp: `pretrain`'s fields as this architecture's byte-level config (vocab 256, tied
  // embeddings; validated by the caller), and its own flags of the pretrain command.
  static Mamba1Config from_pretrain(const PretrainShape& s);
  static std::string pretrain_flags(const PretrainShape& s);
  static StateLayout layout(const Mamba1Config& c);   // config.cpp
  static Description describe(const Mamba1Config& c);   // config.cpp
  static constexpr Capabilities capabilities{.effective_attention = true, .has_dt = true, .has_decay = true, .longmamba = true, .a_range = false, .freezable_A = true};
  static RecurrentLM make(const Mamba1Config& c);       // model.cpp: a fresh model (seed 0), CPU, float32
};

}  // namespace statescope

// arch.h — Mamba-2's registration (core/model/arch.h): its names, the config.json dialects it
// answers to, its state layout and description, its capabilities and its factory. Mamba-2 (SSD): a scalar decay per head, B and C shared by groups of heads.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/model/arch.h"
#include "core/model/mamba2/config.h"
#include "core/model/state_layout.h"

namespace statescope {

class RecurrentLM;

template <>
struct Arch<Mamba2Config> {
  static constexpr const char* key = "mamba2";        // results, specs, `forward`'s attributes, pretrain --arch
  static constexpr const char* title = "Mamba-2";    // what people read
  static constexpr const char* hf_model_type = "mamba2";  // Hugging Face config.json's model_type
  static constexpr const char* mamba_ssm_layer = "Mamba2";  // mamba_ssm's ssm_cfg.layer ("": not a mamba_ssm model)
  static Mamba2Config parse_hf(const nlohmann::json& j, const std::string& source) { return parse_mamba2_hf(j, source); }
  static Mamba2Config parse_mamba_ssm(const nlohmann::json& j, const std::string& source) { return parse_mamba2_mamba_ssm(j, source); }
  // config.cpp: `pretrain`'s fields as this architecture's byte-level config (vocab 256, tied
  // embeddings; validated by the caller), and its own flags of the pretrain command.
  static Mamba2Config from_pretrain(const PretrainShape& s);
  static std::string pretrain_flags(const PretrainShape& s);
  static StateLayout layout(const Mamba2Config& c);   // config.cpp
  static Description describe(const Mamba2Config& c);   // config.cpp
  static constexpr Capabilities capabilities{.effective_attention = true, .has_dt = true, .has_decay = true, .longmamba = true, .a_range = true, .freezable_A = true};
  static RecurrentLM make(const Mamba2Config& c);       // model.cpp: a fresh model (seed 0), CPU, float32
};

}  // namespace statescope

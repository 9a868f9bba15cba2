// arch.h — GLA's registration (core/model/arch.h): its names, the config.json dialects it
// answers to, its state layout and description, its capabilities and its factory. GLA (fla): a data-dependent gate per key dimension, no dt, no A.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/model/arch.h"
#include "core/model/gla/config.h"
#include "core/model/state_layout.h"

namespace statescope {

class RecurrentLM;

template <>
struct Arch<GLAConfig> {
  static constexpr const char* key = "gla";        // results, specs, `forward`'s attributes, pretrain --arch
  static constexpr const char* title = "GLA";    // what people read
  static constexpr const char* hf_model_type = "gla";  // Hugging Face config.json's model_type
  static constexpr const char* mamba_ssm_layer = "";  // mamba_ssm's ssm_cfg.layer ("": not a mamba_ssm model)
  static GLAConfig parse_hf(const nlohmann::json& j, const std::string& source) { return parse_gla_hf(j, source); }
  // config.cpp: `pretrain`'s fields as this architecture's byte-level config (vocab 256, tied
  // embeddings; validated by the caller), and its own flags of the pretrain command.
  static GLAConfig from_pretrain(const PretrainShape& s);
  static std::string pretrain_flags(const PretrainShape& s);
  static StateLayout layout(const GLAConfig& c);   // config.cpp
  static Description describe(const GLAConfig& c);   // config.cpp
  static constexpr Capabilities capabilities{.effective_attention = false, .has_dt = false, .has_decay = true, .longmamba = false, .a_range = false, .freezable_A = false};
  static RecurrentLM make(const GLAConfig& c);       // model.cpp: a fresh model (seed 0), CPU, float32
};

}  // namespace statescope

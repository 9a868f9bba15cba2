// model_factory.h — a model of any architecture from its config (each architecture's Arch<Config>::make,
// core/model/arch.h; model_config.h decides the architecture from config.json).
#pragma once
#include "core/model/model_config.h"
#include "core/model/recurrent_lm.h"

namespace statescope {

// A freshly initialised model (seed 0) of `c`'s architecture, on the CPU in float32.
RecurrentLM make_model(const ModelConfig& c);

}  // namespace statescope

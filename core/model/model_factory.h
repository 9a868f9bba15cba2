// model_factory.h — a model of any architecture from its config (each architecture's Arch<Config>::make,
// core/model/arch.h; model_config.h decides the architecture from config.json).
#pragma once
#include "core/model/model_config.h"
#include "core/model/pretrain_shape.h"
#include "core/model/recurrent_lm.h"

namespace statescope {

// A freshly initialised model (seed 0) of `c`'s architecture, on the CPU in float32.
RecurrentLM make_model(const ModelConfig& c);

// The one builder of a fresh byte-level model (`statescope-cli pretrain`, a spec's pretrain section,
// the copying analysis): its shape's config (shape_config; errors start with `where`), initialised
// from `seed` with the shape's A range, on the CPU in float32. An architecture without an A range
// refuses a changed one by name.
RecurrentLM fresh_model(const PretrainShape& s, uint64_t seed, const std::string& where);

}  // namespace statescope

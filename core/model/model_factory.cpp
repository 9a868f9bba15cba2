// model_factory.cpp — ModelConfig -> the architecture's RecurrentLM.
#include "core/model/model_factory.h"

#include "core/model/gdn/model.h"
#include "core/model/gla/model.h"
#include "core/model/mamba1/model.h"
#include "core/model/mamba2/model.h"

namespace statescope {

RecurrentLM make_model(const ModelConfig& c) {
  if (const auto* m2 = std::get_if<Mamba2Config>(&c)) return Mamba2LM(*m2);
  if (const auto* g = std::get_if<GLAConfig>(&c)) return GLALM(*g);
  if (const auto* d = std::get_if<GatedDeltaNetConfig>(&c)) return GatedDeltaNetLM(*d);
  return Mamba1LM(std::get<Mamba1Config>(c));
}

}  // namespace statescope

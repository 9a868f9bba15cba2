// model_factory.cpp — ModelConfig -> the architecture's RecurrentLM.
#include "core/model/model_factory.h"

#include "core/model/mamba1/model.h"
#include "core/model/mamba2/model.h"

namespace statescope {

RecurrentLM make_model(const ModelConfig& c) {
  if (const auto* m2 = std::get_if<Mamba2Config>(&c)) return Mamba2LM(*m2);
  return Mamba1LM(std::get<Mamba1Config>(c));
}

}  // namespace statescope

// model_factory.cpp — ModelConfig -> the architecture's RecurrentLM, through each registration's
// Arch<Config>::make (defined in the architecture's model.cpp): no list of classes here.
#include "core/model/model_factory.h"

namespace statescope {

RecurrentLM make_model(const ModelConfig& c) {
  return std::visit([](const auto& x) { return Arch<std::decay_t<decltype(x)>>::make(x); }, c);
}

RecurrentLM fresh_model(const PretrainShape& s, uint64_t seed, const std::string& where) {
  RecurrentLM model = make_model(shape_config(s, where));
  model->reset_parameters(seed, s.a_min, s.a_max);
  return model;
}

}  // namespace statescope

// pretrain_model.cpp — the one builder of a fresh model (pretrain_spec.h: pretrain_model).
#include <torch/torch.h>

#include "core/experiment/pretrain_spec.h"
#include "core/model/model_factory.h"

namespace statescope {

RecurrentLM pretrain_model(const PretrainSpec& ps, uint64_t seed, const std::string& where) {
  return fresh_model(ps, seed, where);
}

}  // namespace statescope

// blocks/hybrid_lm.cpp — the shared head of the hybrids (hybrid_lm.h).
#include "core/model/blocks/hybrid_lm.h"

#include "core/model/dense.h"

namespace statescope {

torch::Tensor HybridLMImpl::logits(const torch::Tensor& normed) const {
  return dense(normed, lm_head ? lm_head->weight : embed->weight);
}

}  // namespace statescope

// blocks/hybrid_state.h — a hybrid's state between calls (issue 53): each recurrent layer's state
// (Mamba-2 or Gated DeltaNet: ssm and conv, as LayerState) and each attention layer's key/value cache,
// in layer order. Standalone for now; issue 53's next step folds it into RecurrentLM's ModelState.
#pragma once
#include <vector>

#include "core/model/blocks/attention.h"

namespace statescope {

struct HybridState {
  std::vector<LayerState> recurrent;  // one per recurrent layer, in layer order
  std::vector<KVCache> attention;     // one per attention layer, in layer order
};

}  // namespace statescope

// blocks/kinds.h — what one layer of a hybrid is (issue 53). No LibTorch.
#pragma once

namespace statescope {

// Mamba2 and GatedDeltaNet carry a recurrent state (ssm + conv); Attention a key/value cache; Mlp and
// Moe nothing between tokens.
enum class LayerKind { Mamba2, GatedDeltaNet, Attention, Mlp, Moe };

inline const char* layer_kind_name(LayerKind k) {
  switch (k) {
    case LayerKind::Mamba2: return "mamba2";
    case LayerKind::GatedDeltaNet: return "gated_deltanet";
    case LayerKind::Attention: return "attention";
    case LayerKind::Mlp: return "mlp";
    case LayerKind::Moe: return "moe";
  }
  return "?";
}

}  // namespace statescope

// architectures.h — the registration of every architecture statescope knows: one line each, in the
// ModelConfig variant (with its arch.h include). Everything that dispatches on the architecture
// (config.json in and out, sizes, the state layout, capabilities, the factory) folds over this
// variant through each alternative's Arch<Config> (core/model/arch.h): adding an architecture is its
// folder and one line here, and a missing piece is a compile or link error, never a run-time
// fall-through. No LibTorch.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/model/gdn/arch.h"
#include "core/model/gla/arch.h"
#include "core/model/granite_h/arch.h"
#include "core/model/mamba1/arch.h"
#include "core/model/mamba2/arch.h"
#include "core/model/nemotron_h/arch.h"
#include "core/model/qwen3_5/arch.h"

namespace statescope {

using ModelConfig = std::variant<Mamba2Config, Mamba1Config, GLAConfig, GatedDeltaNetConfig, NemotronHConfig, Qwen35Config, GraniteHConfig>;

// Calls f(std::type_identity<Config>{}) for each architecture, in the variant's order.
template <class F>
void for_each_architecture(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(std::type_identity<std::variant_alternative_t<I, ModelConfig>>{}), ...);
  }(std::make_index_sequence<std::variant_size_v<ModelConfig>>{});
}

}  // namespace statescope

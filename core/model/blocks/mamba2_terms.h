// blocks/mamba2_terms.h — a hybrid's recurrent layer r's scan terms when its recurrent layers are
// Mamba-2 mixers (Nemotron-H, Granite 4.0-H): the r-th Mamba2Mixer among the family's mixers, its
// terms as Mamba-2's own (effective attention, RecurrentLMImpl::scan_terms).
#pragma once
#include <string>
#include <variant>
#include <vector>

#include "core/base/error.h"
#include "core/model/mamba2/model.h"

namespace statescope {

// mixers: the family's per-layer variants; input: recurrent layer r's mixer input [b, L, d_model].
template <class Variant>
SelectiveScanTerms mamba2_scan_terms(std::vector<Variant>& mixers, const Mamba2Config& m, const torch::Tensor& input,
                                     int64_t layer, const LayerState* init) {
  int64_t r = 0;
  for (auto& v : mixers)
    if (auto* mixer = std::get_if<Mamba2Mixer>(&v)) {
      if (r++ != layer) continue;
      const Mamba2ScanInputs in = (*mixer)->scan_inputs(input, init);
      return {in.dt, in.A, in.B, in.C, /*per_channel_A=*/false, m.nheads() / m.ngroups};
    }
  throw Error("scan_terms: recurrent layer " + std::to_string(layer) + " of " + std::to_string(r));
}

}  // namespace statescope

// intervention.h — a training-free intervention resolved for one model (intervention_spec.h): the
// tensors the forward pass applies, per layer. A model carries one (RecurrentLMImpl::intervention)
// and every forward — evaluation, the analyses, the tasks — runs with it; the run's file records
// what it was. Resolution against a model's layout and, for clip and longmamba, calibration on
// training windows live in core/train/intervention_calibration.h.
//
// "dt channels" are the scan's dt axis: Mamba-2's heads, Mamba-1's d_inner channels; groups
// (state_layout.h) are heads or channel groups.
#pragma once
#include <torch/types.h>

#include <string>
#include <vector>

namespace statescope {

struct LayerIntervention {
  torch::Tensor dt_factor;     // [dt channels] float64 on the CPU; undefined: 1
  torch::Tensor dt_threshold;  // [dt channels] LongMamba: dt not above it -> 0 (0 in local channels); undefined: none
  double a_factor = 1.0;       // A *= a_factor
  torch::Tensor max_norm;      // [groups] the state's norm per group is clipped to it; undefined: none
};

struct Intervention {
  std::string kind, label;                 // InterventionSpec's kind and label
  std::vector<LayerIntervention> layers;   // one per layer
  int64_t dt_from = 0;                     // dt_factor applies at positions >= dt_from
  int64_t reset_period = 0;                // > 0: zero state at every multiple of it (a hybrid: its recurrent layers)
  int64_t attention_window = 0;            // > 0: a hybrid's attention reads the last this many positions

  const LayerIntervention* layer(int64_t i) const {
    return i >= 0 && i < static_cast<int64_t>(layers.size()) ? &layers[static_cast<size_t>(i)] : nullptr;
  }
  // The Mamba-2 CPU loops and CUDA kernels take dt and A from the raw projections: when a layer's
  // intervention changes either, that layer runs ATen's scan on the changed tensors instead.
  static bool changes_inputs(const LayerIntervention* li) {
    return li && (li->dt_factor.defined() || li->dt_threshold.defined() || li->a_factor != 1.0);
  }
  static bool clips(const LayerIntervention* li) { return li && li->max_norm.defined(); }
};

// dt [b, L, C] (after softplus and any limit) of tokens at positions position..position+L-1 -> dt
// with the layer's factor (at positions >= from) and LongMamba's filter applied; same dtype/device.
torch::Tensor intervene_dt(const LayerIntervention& li, int64_t from, int64_t position, const torch::Tensor& dt);

// The state's norm per group clipped to max_norm: S [b, C, ...] with C = groups x per-group rows;
// returns S * min(1, max_norm / ||S_group||) per (batch, group).
torch::Tensor clip_state(const torch::Tensor& S, const torch::Tensor& max_norm);

}  // namespace statescope

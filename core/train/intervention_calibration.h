// intervention_calibration.h — a training-free intervention (intervention_spec.h) resolved for one
// model: its factors checked against the model's layout and expanded to the scan's dt channels, the
// clip's bounds and LongMamba's thresholds measured on training windows of T tokens, zero state.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/data/corpus.h"
#include "core/model/intervention.h"
#include "core/model/intervention_spec.h"
#include "core/model/recurrent_lm.h"

namespace statescope {

// Throws Error naming the knob when the factors' shape does not fit the model ("dt_scale: factor has
// 3 rows, the model has 2 layers"). Calibration windows come from `train` (documents longer than T),
// drawn with `seed`. The model's own intervention (if any) is not applied while calibrating.
// target_length: the length LongMamba's thresholds are set for when its spec gives none (the run's
// evaluation length; 0: 64T).
std::shared_ptr<const Intervention> resolve_intervention(const InterventionSpec& spec, RecurrentLM& model,
                                                         const std::vector<Document>& train, int64_t T, uint64_t seed,
                                                         int64_t target_length = 0);

}  // namespace statescope

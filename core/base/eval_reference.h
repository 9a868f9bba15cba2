// eval_reference.h — what an evaluation's excess is measured against: the experiment's one yardstick
// (the loaded model's state-reset loss on the same bytes, EvalResult::fixed_seq) when the run has it,
// else the run's own state-reset reference (a lone evaluation, or a file from before the one
// yardstick). Plain C++: the views, the report and the tables read it alike.
#pragma once
#include <vector>

#include "core/base/results.h"

namespace statescope {

// [sequences, length]; empty when neither reference was computed.
inline const std::vector<float>& reference_seq(const EvalResult& e) {
  return e.fixed_seq.empty() ? e.windowed_seq : e.fixed_seq;
}

// Its mean over sequences per position, nats [length]; empty without a reference.
inline std::vector<double> reference_nll(const EvalResult& e) {
  if (e.fixed_seq.empty()) return e.windowed_nll;
  if (e.sequences <= 0 || e.fixed_seq.size() != static_cast<size_t>(e.sequences * e.length)) return {};
  std::vector<double> m(static_cast<size_t>(e.length), 0.0);
  for (int64_t k = 0; k < e.sequences; ++k)
    for (int64_t i = 0; i < e.length; ++i) m[i] += e.fixed_seq[k * e.length + i];
  for (auto& v : m) v /= static_cast<double>(e.sequences);
  return m;
}

}  // namespace statescope

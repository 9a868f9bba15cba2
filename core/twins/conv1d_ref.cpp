// conv1d_ref.cpp — causal depthwise conv1d with initial state in plain loops (double accumulator).
#include "core/twins/conv1d_ref.h"

#include <cmath>

namespace statescope {

void conv1d_fwd_ref(const kernels::Conv1dArgs& a) {
  const int64_t Km1 = a.K - 1;
  auto in = [&](int64_t bi, int64_t j, int64_t c) -> float {  // [state | x] column j
    if (j < Km1) return a.state0 ? a.state0[(bi * a.C + c) * Km1 + j] : 0.0f;
    return a.x[(bi * a.L + (j - Km1)) * a.C + c];
  };
  for (int64_t bi = 0; bi < a.b; ++bi)
    for (int64_t t = 0; t < a.L; ++t)
      for (int64_t c = 0; c < a.C; ++c) {
        double acc = a.bias ? a.bias[c] : 0.0;
        for (int64_t k = 0; k < a.K; ++k) acc += static_cast<double>(a.w[c * a.K + k]) * in(bi, t + k, c);
        a.y[(bi * a.L + t) * a.C + c] = static_cast<float>(a.silu ? acc / (1.0 + std::exp(-acc)) : acc);
      }
  if (a.state1)
    for (int64_t bi = 0; bi < a.b; ++bi)
      for (int64_t c = 0; c < a.C; ++c)
        for (int64_t j = 0; j < Km1; ++j) a.state1[(bi * a.C + c) * Km1 + j] = in(bi, a.L + j, c);
}

}  // namespace statescope

// ssm_step_ref.cpp — one selective-SSM token in plain loops (float32 state, double sums).
#include "ssm_step_ref.h"

#include <cmath>

namespace statescope {

void ssm_step_ref(const kernels::SsmStepArgs& a) {
  const int64_t H = a.H, P = a.P, N = a.N;
  for (int64_t bi = 0; bi < a.b; ++bi)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / (H / a.G);
      const float dt = a.dt[bi * H + h];
      const float decay = std::exp(dt * a.A[h]);
      const float* Bv = a.B + (bi * a.G + g) * N;
      const float* Cv = a.C + (bi * a.G + g) * N;
      double sq = 0;
      for (int64_t p = 0; p < P; ++p) {
        float* row = a.h + ((bi * H + h) * P + p) * N;
        const float xv = a.x[(bi * H + h) * P + p];
        double acc = 0;
        for (int64_t n = 0; n < N; ++n) {
          const float v = decay * row[n] + xv * dt * Bv[n];
          row[n] = v;
          acc += static_cast<double>(v) * Cv[n];
          sq += static_cast<double>(v) * v;
        }
        a.y[(bi * H + h) * P + p] = static_cast<float>(acc + (a.D ? a.D[h] * xv : 0.0f));
      }
      if (a.norm) a.norm[bi * H + h] = static_cast<float>(std::sqrt(sq));
    }
}

}  // namespace statescope

// ssm_scan_ref.cpp — the sequential selective scan in plain loops (float32 state, float64 sums for
// y and the norm).
#include "ssm_scan_ref.h"

#include <cmath>
#include <vector>

namespace statescope {

void ssm_scan_fwd_ref(const kernels::SsmScanArgs& a) {
  const int64_t H = a.H, P = a.P, N = a.N, L = a.L;
  std::vector<float> S(P * N);
  for (int64_t bi = 0; bi < a.b; ++bi) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / (H / a.G);
      for (int64_t i = 0; i < P * N; ++i) S[i] = a.h0 ? a.h0[((bi * H + h) * P) * N + i] : 0.0f;
      for (int64_t t = 0; t < L; ++t) {
        const int64_t bl = bi * L + t;
        const float dt = a.dt[bl * H + h];
        const float decay = std::exp(dt * a.A[h]);
        const float* B = a.B + (bl * a.G + g) * N;
        const float* C = a.C + (bl * a.G + g) * N;
        const float* x = a.x + (bl * H + h) * P;
        double sq = 0;
        for (int64_t p = 0; p < P; ++p) {
          const float xd = x[p] * dt;
          double acc = 0;
          for (int64_t n = 0; n < N; ++n) {
            const float v = decay * S[p * N + n] + xd * B[n];
            S[p * N + n] = v;
            sq += static_cast<double>(v) * v;
            acc += static_cast<double>(v) * C[n];
          }
          a.y[(bl * H + h) * P + p] = static_cast<float>(acc);
        }
        if (a.norm) a.norm[bl * H + h] = static_cast<float>(std::sqrt(sq));
      }
      for (int64_t i = 0; i < P * N; ++i) a.h_final[((bi * H + h) * P) * N + i] = S[i];
    }
  }
}

}  // namespace statescope

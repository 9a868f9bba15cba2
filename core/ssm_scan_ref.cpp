// ssm_scan_ref.cpp — the sequential selective scan in plain loops (float32 state, float64 sums for
// y and the norm).
#include "ssm_scan_ref.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace statescope {

namespace {

// Tokens [t0, t1) of (bi, h) from S (in place), float32 like the kernel; y and norms when asked.
void scan_range(const kernels::SsmScanArgs& a, int64_t bi, int64_t h, int64_t t0, int64_t t1, std::vector<float>& S,
                bool outputs) {
  const int64_t H = a.H, P = a.P, N = a.N, g = h / (H / a.G);
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t bl = bi * a.L + t;
    const float dt = a.dt[bl * H + h];
    const float decay = std::exp(dt * a.A[h]);
    const float* Bv = a.B + (bl * a.G + g) * N;
    const float* Cv = a.C + (bl * a.G + g) * N;
    double sq = 0;
    for (int64_t p = 0; p < P; ++p) {
      const float xdt = a.x[(bl * H + h) * P + p] * dt;
      double acc = 0;
      for (int64_t n = 0; n < N; ++n) {
        float& v = S[p * N + n];
        v = decay * v + xdt * Bv[n];
        acc += static_cast<double>(v) * Cv[n];
        sq += static_cast<double>(v) * v;
      }
      if (outputs) a.y[(bl * H + h) * P + p] = static_cast<float>(acc);
    }
    if (outputs && a.norm) a.norm[bl * H + h] = static_cast<float>(std::sqrt(sq));
  }
}

}  // namespace

void ssm_scan_fwd_ref(const kernels::SsmScanArgs& a) {
  const int64_t PN = a.P * a.N;
  std::vector<float> S(PN);
  for (int64_t bi = 0; bi < a.b; ++bi)
    for (int64_t h = 0; h < a.H; ++h) {
      const int64_t at = (bi * a.H + h) * PN;
      for (int64_t i = 0; i < PN; ++i) S[i] = a.h0 ? a.h0[at + i] : 0.0f;
      scan_range(a, bi, h, 0, a.L, S, true);
      std::copy(S.begin(), S.end(), a.h_final + at);
    }
}

void ssm_scan_chunked_ref(const kernels::SsmScanArgs& a, int64_t Q) {
  const int64_t H = a.H, PN = a.P * a.N, nc = (a.L + Q - 1) / Q;
  std::vector<float> start(nc * PN), local(PN), S(PN);
  for (int64_t bi = 0; bi < a.b; ++bi)
    for (int64_t h = 0; h < H; ++h) {
      // pass 1 and 2 fused per chunk (the kernel runs pass 1 for all chunks in parallel first)
      std::vector<float> s(PN);
      for (int64_t i = 0; i < PN; ++i) s[i] = a.h0 ? a.h0[(bi * H + h) * PN + i] : 0.0f;
      for (int64_t c = 0; c < nc; ++c) {
        const int64_t t0 = c * Q, t1 = std::min(a.L, t0 + Q);
        std::fill(local.begin(), local.end(), 0.0f);
        scan_range(a, bi, h, t0, t1, local, false);
        float sum = 0.0f;
        for (int64_t t = t0; t < t1; ++t) sum += a.dt[(bi * a.L + t) * H + h];
        const float decay = std::exp(sum * a.A[h]);
        for (int64_t i = 0; i < PN; ++i) {
          start[c * PN + i] = s[i];
          s[i] = decay * s[i] + local[i];
        }
      }
      for (int64_t i = 0; i < PN; ++i) a.h_final[(bi * H + h) * PN + i] = s[i];
      for (int64_t c = 0; c < nc; ++c) {  // pass 3
        std::copy(start.begin() + c * PN, start.begin() + (c + 1) * PN, S.begin());
        scan_range(a, bi, h, c * Q, std::min(a.L, (c + 1) * Q), S, true);
      }
    }
}

}  // namespace statescope

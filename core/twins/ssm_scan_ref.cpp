// ssm_scan_ref.cpp — the sequential selective scan in plain loops (float32 state, float64 sums for
// y and the norm).
#include "core/twins/ssm_scan_ref.h"

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
    double sq = 0, dsq = 0;
    for (int64_t p = 0; p < P; ++p) {
      const float xdt = a.x[(bl * H + h) * P + p] * dt;
      double acc = 0;
      for (int64_t n = 0; n < N; ++n) {
        float& v = S[p * N + n];
        const float old = v;
        v = decay * v + xdt * Bv[n];
        acc += static_cast<double>(v) * Cv[n];
        sq += static_cast<double>(v) * v;
        dsq += static_cast<double>(v - old) * (v - old);
      }
      if (outputs) a.y[(bl * H + h) * P + p] = static_cast<float>(acc);
    }
    if (outputs && a.norm) a.norm[bl * H + h] = static_cast<float>(std::sqrt(sq));
    if (outputs && a.delta) a.delta[bl * H + h] = static_cast<float>(std::sqrt(dsq));
  }
}

// exp(A_h * sum of dt over tokens [t0, t1)): the decay of a whole chunk, float32 like the kernel.
float chunk_decay(const kernels::SsmScanArgs& a, int64_t bi, int64_t h, int64_t t0, int64_t t1) {
  float sum = 0.0f;
  for (int64_t t = t0; t < t1; ++t) sum += a.dt[(bi * a.L + t) * a.H + h];
  return std::exp(sum * a.A[h]);
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

namespace {

// Passes 1 and 2 of the chunked scan for (bi, h): start[c*PN..] = the state before chunk c (the kernel
// runs pass 1 for all chunks in parallel first); returns the state after the last token.
std::vector<float> chunk_starts(const kernels::SsmScanArgs& a, int64_t bi, int64_t h, int64_t Q,
                                std::vector<float>& start) {
  const int64_t H = a.H, PN = a.P * a.N, nc = (a.L + Q - 1) / Q;
  start.assign(nc * PN, 0.0f);
  std::vector<float> s(PN), local(PN);
  for (int64_t i = 0; i < PN; ++i) s[i] = a.h0 ? a.h0[(bi * H + h) * PN + i] : 0.0f;
  for (int64_t c = 0; c < nc; ++c) {
    const int64_t t0 = c * Q, t1 = std::min(a.L, t0 + Q);
    std::fill(local.begin(), local.end(), 0.0f);
    scan_range(a, bi, h, t0, t1, local, false);
    const float decay = chunk_decay(a, bi, h, t0, t1);
    for (int64_t i = 0; i < PN; ++i) {
      start[c * PN + i] = s[i];
      s[i] = decay * s[i] + local[i];
    }
  }
  return s;
}

}  // namespace

void ssm_scan_chunked_ref(const kernels::SsmScanArgs& a, int64_t Q) {
  const int64_t H = a.H, PN = a.P * a.N, nc = (a.L + Q - 1) / Q;
  std::vector<float> start, S(PN);
  for (int64_t bi = 0; bi < a.b; ++bi)
    for (int64_t h = 0; h < H; ++h) {
      const auto fin = chunk_starts(a, bi, h, Q, start);
      std::copy(fin.begin(), fin.end(), a.h_final + (bi * H + h) * PN);
      for (int64_t c = 0; c < nc; ++c) {  // pass 3
        std::copy(start.begin() + c * PN, start.begin() + (c + 1) * PN, S.begin());
        scan_range(a, bi, h, c * Q, std::min(a.L, (c + 1) * Q), S, true);
      }
    }
}

void ssm_scan_bwd_ref(const kernels::SsmScanArgs& a, const kernels::SsmScanGrads& g, int64_t Q) {
  const int64_t H = a.H, P = a.P, N = a.N, G = a.G, PN = P * N, L = a.L, nc = (L + Q - 1) / Q;
  std::vector<double> dB(a.b * L * G * N, 0.0), dC(dB.size(), 0.0), dA(H, 0.0);
  std::vector<float> start, in(nc * PN), R(PN), hist;
  for (int64_t bi = 0; bi < a.b; ++bi)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t gi = h / (H / G), at = (bi * H + h) * PN;
      chunk_starts(a, bi, h, Q, start);  // pass 0
      // passes 1 and 2: In_c, the adjoint of the chunk's last state coming from later chunks.
      std::vector<float> adj(PN);
      for (int64_t i = 0; i < PN; ++i) adj[i] = g.dh_final ? g.dh_final[at + i] : 0.0f;
      for (int64_t c = nc - 1; c >= 0; --c) {
        const int64_t t0 = c * Q, t1 = std::min(L, t0 + Q);
        std::fill(R.begin(), R.end(), 0.0f);  // pass 1: local adjoint from zero
        for (int64_t t = t1 - 1; t >= t0; --t) {
          const int64_t bl = bi * L + t;
          const float decay = std::exp(a.dt[bl * H + h] * a.A[h]);
          const float* Cv = a.C + (bl * G + gi) * N;
          for (int64_t p = 0; p < P; ++p) {
            const float dy = g.dy[(bl * H + h) * P + p];
            for (int64_t n = 0; n < N; ++n) R[p * N + n] = decay * (R[p * N + n] + dy * Cv[n]);
          }
        }
        const float decay = chunk_decay(a, bi, h, t0, t1);
        std::copy(adj.begin(), adj.end(), in.begin() + c * PN);
        for (int64_t i = 0; i < PN; ++i) adj[i] = decay * adj[i] + R[i];
      }
      if (g.dh0) std::copy(adj.begin(), adj.end(), g.dh0 + at);
      // pass 3: per chunk, states forward into hist, then the adjoint backward.
      for (int64_t c = 0; c < nc; ++c) {
        const int64_t t0 = c * Q, t1 = std::min(L, t0 + Q);
        std::vector<float> S(start.begin() + c * PN, start.begin() + (c + 1) * PN);
        hist.assign(S.begin(), S.end());  // [t1 - t0 + 1, PN]: S_{t0-1} .. S_{t1-1}
        for (int64_t t = t0; t < t1; ++t) {
          scan_range(a, bi, h, t, t + 1, S, false);
          hist.insert(hist.end(), S.begin(), S.end());
        }
        std::copy(in.begin() + c * PN, in.begin() + (c + 1) * PN, R.begin());
        for (int64_t t = t1 - 1; t >= t0; --t) {
          const int64_t bl = bi * L + t, k = t - t0;
          const float dt = a.dt[bl * H + h], decay = std::exp(dt * a.A[h]);
          const float* Bv = a.B + (bl * G + gi) * N;
          const float* Cv = a.C + (bl * G + gi) * N;
          const float* Sk = hist.data() + (k + 1) * PN;  // S_t
          const float* Sp = hist.data() + k * PN;        // S_{t-1}
          double da = 0, ddt = 0;
          for (int64_t p = 0; p < P; ++p) {
            const float dy = g.dy[(bl * H + h) * P + p], x = a.x[(bl * H + h) * P + p];
            double dxdt = 0;
            for (int64_t n = 0; n < N; ++n) {
              float& r = R[p * N + n];
              r += dy * Cv[n];
              dC[(bl * G + gi) * N + n] += static_cast<double>(dy) * Sk[p * N + n];
              dB[(bl * G + gi) * N + n] += static_cast<double>(r) * (x * dt);
              dxdt += static_cast<double>(r) * Bv[n];
              da += static_cast<double>(r) * Sp[p * N + n];
            }
            g.dx[(bl * H + h) * P + p] = static_cast<float>(dt * dxdt);
            ddt += x * dxdt;
          }
          g.ddt[bl * H + h] = static_cast<float>(ddt + da * decay * a.A[h]);
          dA[h] += da * decay * dt;
          for (auto& r : R) r *= decay;
        }
      }
    }
  for (size_t i = 0; i < dB.size(); ++i) g.dB[i] = static_cast<float>(dB[i]), g.dC[i] = static_cast<float>(dC[i]);
  for (int64_t h = 0; h < H; ++h) g.dA[h] = static_cast<float>(dA[h]);
}

}  // namespace statescope

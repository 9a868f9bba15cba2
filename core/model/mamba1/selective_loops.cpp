// mamba1/selective_loops.cpp — Mamba-1's selective scan loops (see selective_loops.h).
#include "core/model/mamba1/selective_loops.h"

#include <cstring>

#include "core/model/vec8.h"

namespace statescope::cpu {

STATESCOPE_CLONES void selective_forward(const ChannelScan& s, float* __restrict h, float* __restrict y,
                                         float* __restrict sq, float* __restrict dsq) {
  const int64_t N = s.N, Nv = N - N % W;
  for (int64_t t = 0; t < s.L; ++t) {
    const float dt = s.dt[t], xd = dt * s.x[t];
    const float* __restrict B = s.B + t * N;
    const float* __restrict C = s.C + t * N;
    const v8 dtv = splat(dt), xdv = splat(xd);
    v8 acc = splat(0.0f), q = splat(0.0f), dq = splat(0.0f);
    for (int64_t n = 0; n < Nv; n += W) {
      const v8 hp = load(h + n);
      const v8 hn = vexp(dtv * load(s.A + n)) * hp + xdv * load(B + n);
      store(h + n, hn);
      acc += hn * load(C + n);
      if (sq) {
        q += hn * hn;
        dq += (hn - hp) * (hn - hp);
      }
    }
    float acc_t = 0.0f, q_t = 0.0f, dq_t = 0.0f;
    for (int64_t n = Nv; n < N; ++n) {
      const float hp = h[n], hn = expf8(dt * s.A[n]) * hp + xd * B[n];
      h[n] = hn;
      acc_t += hn * C[n];
      q_t += hn * hn;
      dq_t += (hn - hp) * (hn - hp);
    }
    y[t] = hsum(acc) + acc_t + s.D * s.x[t];
    if (sq) {
      sq[t] = hsum(q) + q_t;
      dsq[t] = hsum(dq) + dq_t;
    }
  }
}

STATESCOPE_CLONES void selective_backward(const ChannelScan& s, const float* __restrict h0,
                                          const float* __restrict dy, const float* __restrict dhf,
                                          float* __restrict hist, float* __restrict dx, float* __restrict ddt,
                                          float* __restrict dh0, float* __restrict dB, float* __restrict dC,
                                          double* __restrict dA, double& dD) {
  const int64_t N = s.N, Nv = N - N % W, L = s.L;
  // The states h_{-1} .. h_{L-1} at hist + (t + 1) N.
  std::memcpy(hist, h0, sizeof(float) * N);
  for (int64_t t = 0; t < L; ++t) {
    const float dt = s.dt[t], xd = dt * s.x[t];
    const float* __restrict B = s.B + t * N;
    const float* __restrict hp = hist + t * N;
    float* __restrict hn = hist + (t + 1) * N;
    const v8 dtv = splat(dt), xdv = splat(xd);
    for (int64_t n = 0; n < Nv; n += W) store(hn + n, vexp(dtv * load(s.A + n)) * load(hp + n) + xdv * load(B + n));
    for (int64_t n = Nv; n < N; ++n) hn[n] = expf8(dt * s.A[n]) * hp[n] + xd * B[n];
  }
  // g = dLoss/dh_t, walked back from the final state's gradient.
  float* __restrict g = dh0;
  if (dhf) std::memcpy(g, dhf, sizeof(float) * N);
  else std::memset(g, 0, sizeof(float) * N);
  double dD_acc = 0.0;
  // dA's terms are summed in float over runs of kRun tokens (in acc_A, after the states), then in float64.
  constexpr int64_t kRun = 64;
  float* __restrict acc_A = hist + (L + 1) * N;
  std::memset(acc_A, 0, sizeof(float) * N);
  for (int64_t t = L - 1; t >= 0; --t) {
    const float dt = s.dt[t], x = s.x[t], xd = dt * x, dyt = dy[t];
    const float* __restrict B = s.B + t * N;
    const float* __restrict C = s.C + t * N;
    const float* __restrict hp = hist + t * N;
    const float* __restrict hc = hist + (t + 1) * N;
    float* __restrict dBt = dB + t * N;
    float* __restrict dCt = dC + t * N;
    const v8 dtv = splat(dt), xdv = splat(xd), dyv = splat(dyt);
    v8 ddt_v = splat(0.0f), gb_v = splat(0.0f);  // sum_n (dLoss/da_n) a_n A_n, sum_n g_n B_n
    for (int64_t n = 0; n < Nv; n += W) {
      const v8 An = load(s.A + n);
      const v8 gn = load(g + n) + dyv * load(C + n);
      store(dCt + n, load(dCt + n) + dyv * load(hc + n));
      const v8 a = vexp(dtv * An);
      const v8 daa = gn * load(hp + n) * a;
      ddt_v += daa * An;
      store(acc_A + n, load(acc_A + n) + daa * dtv);
      gb_v += gn * load(B + n);
      store(dBt + n, load(dBt + n) + gn * xdv);
      store(g + n, gn * a);
    }
    float ddt_t = hsum(ddt_v), gb_t = hsum(gb_v);
    for (int64_t n = Nv; n < N; ++n) {
      const float gn = g[n] + dyt * C[n];
      dCt[n] += dyt * hc[n];
      const float a = expf8(dt * s.A[n]);
      const float daa = gn * hp[n] * a;
      ddt_t += daa * s.A[n];
      acc_A[n] += daa * dt;
      gb_t += gn * B[n];
      dBt[n] += gn * xd;
      g[n] = gn * a;
    }
    dx[t] = dyt * s.D + gb_t * dt;
    ddt[t] = ddt_t + gb_t * x;
    dD_acc += static_cast<double>(dyt) * x;
    if ((L - t) % kRun == 0 || t == 0) {
      for (int64_t n = 0; n < N; ++n) dA[n] += acc_A[n], acc_A[n] = 0.0f;
    }
  }
  dD += dD_acc;
}

}  // namespace statescope::cpu

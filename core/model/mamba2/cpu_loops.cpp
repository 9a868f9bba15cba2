// cpu_loops.cpp — the CPU fast path's inner loops (see cpu_loops.h).
#include "core/model/mamba2/cpu_loops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "core/model/vec8.h"  // v8, vexp, vsigmoid, STATESCOPE_CLONES

namespace statescope::cpu {

// ---------------------------------------------------------------------------------------------------
// The scan
// ---------------------------------------------------------------------------------------------------

namespace {

// The sums of eight vectors at once: out[j] = sum of v[j]'s lanes (three rounds of pairwise shuffles
// and adds instead of eight horizontal sums).
inline v8 hsum8x8(const v8* v) {
  auto pair = [](v8 a, v8 b) {  // [a0+a1, b0+b1, a2+a3, b2+b3, ...]
    return __builtin_shufflevector(a, b, 0, 8, 2, 10, 4, 12, 6, 14) + __builtin_shufflevector(a, b, 1, 9, 3, 11, 5, 13, 7, 15);
  };
  auto quad = [](v8 a, v8 b) {  // rows of a (2) and b (2): sums of lanes 0-3 then 4-7
    return __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13) + __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
  };
  const v8 u0 = quad(pair(v[0], v[1]), pair(v[2], v[3])), u1 = quad(pair(v[4], v[5]), pair(v[6], v[7]));
  return __builtin_shufflevector(u0, u1, 0, 1, 2, 3, 8, 9, 10, 11) +
         __builtin_shufflevector(u0, u1, 4, 5, 6, 7, 12, 13, 14, 15);
}

// One state row: s = a s + xd B, returns the vector partial sums of s C (tail into *tail).
inline v8 step_row(float* __restrict s, float xd, v8 av, const float* __restrict B, const float* __restrict C,
                   int64_t N, int64_t Nv, float a, float* tail) {
  const v8 xdv = splat(xd);
  v8 acc = splat(0.0f);
  for (int64_t n = 0; n < Nv; n += W) {
    const v8 v = av * load(s + n) + xdv * load(B + n);
    store(s + n, v);
    acc += v * load(C + n);
  }
  float t = 0.0f;
  for (int64_t n = Nv; n < N; ++n) {
    s[n] = a * s[n] + xd * B[n];
    t += s[n] * C[n];
  }
  *tail = t;
  return acc;
}

}  // namespace

STATESCOPE_CLONES void scan_step(float* __restrict S, const float* __restrict x, float dt, float a,
                                 const float* __restrict B, const float* __restrict C, float* __restrict y,
                                 int64_t P, int64_t N) {
  const int64_t Nv = N - N % W;
  const v8 av = splat(a);
  int64_t p = 0;
  for (; p + W <= P; p += W) {  // eight rows, one vector of outputs; a vector of columns at a time, so
    v8 acc[W], xd[W];            // B and C are loaded once for the eight rows
    for (int j = 0; j < W; ++j) acc[j] = splat(0.0f), xd[j] = splat(x[p + j] * dt);
    float* __restrict s = S + p * N;
    for (int64_t n = 0; n < Nv; n += W) {
      const v8 Bn = load(B + n), Cn = load(C + n);
      for (int j = 0; j < W; ++j) {
        const v8 v = av * load(s + j * N + n) + xd[j] * Bn;
        store(s + j * N + n, v);
        acc[j] += v * Cn;
      }
    }
    float tail[W];
    for (int j = 0; j < W; ++j) {
      float t = 0.0f;
      const float xdj = x[p + j] * dt;
      for (int64_t n = Nv; n < N; ++n) {
        s[j * N + n] = a * s[j * N + n] + xdj * B[n];
        t += s[j * N + n] * C[n];
      }
      tail[j] = t;
    }
    store(y + p, hsum8x8(acc) + load(tail));
  }
  for (; p < P; ++p) {
    float tail;
    const v8 acc = step_row(S + p * N, x[p] * dt, av, B, C, N, Nv, a, &tail);
    y[p] = hsum(acc) + tail;
  }
}

STATESCOPE_CLONES void scan_step_state(float* out, const float* in, const float* __restrict x, float dt, float a,
                                       const float* __restrict B, int64_t P, int64_t N) {
  const int64_t Nv = N - N % W;
  const v8 av = splat(a);
  int64_t p = 0;
  for (; p + W <= P; p += W) {
    v8 xd[W];
    for (int j = 0; j < W; ++j) xd[j] = splat(x[p + j] * dt);
    for (int64_t n = 0; n < Nv; n += W) {
      const v8 Bn = load(B + n);
      for (int j = 0; j < W; ++j) store(out + (p + j) * N + n, av * load(in + (p + j) * N + n) + xd[j] * Bn);
    }
    for (int j = 0; j < W; ++j)
      for (int64_t n = Nv; n < N; ++n) out[(p + j) * N + n] = a * in[(p + j) * N + n] + x[p + j] * dt * B[n];
  }
  for (; p < P; ++p) {
    const v8 xdv = splat(x[p] * dt);
    for (int64_t n = 0; n < Nv; n += W) store(out + p * N + n, av * load(in + p * N + n) + xdv * load(B + n));
    for (int64_t n = Nv; n < N; ++n) out[p * N + n] = a * in[p * N + n] + x[p] * dt * B[n];
  }
}

namespace {

// One row of the backward step; returns the vector partial sums of rv B (tail in *tail), adds to rs.
inline v8 back_row(float* __restrict r, const float* __restrict s, const float* __restrict sp, float g, float xd,
                   v8 av, float a, const float* __restrict B, const float* __restrict C, float* __restrict dB,
                   float* __restrict dC, int64_t N, int64_t Nv, v8& rs, float& rs_tail, float* tail) {
  const v8 gv = splat(g), xdv = splat(xd);
  v8 rb = splat(0.0f);
  for (int64_t n = 0; n < Nv; n += W) {
    store(dC + n, load(dC + n) + gv * load(s + n));
    const v8 rv = load(r + n) + gv * load(C + n);
    rb += rv * load(B + n);
    rs += rv * load(sp + n);
    store(dB + n, load(dB + n) + rv * xdv);
    store(r + n, av * rv);
  }
  float t = 0.0f;
  for (int64_t i = Nv; i < N; ++i) {
    dC[i] += g * s[i];
    const float rv = r[i] + g * C[i];
    t += rv * B[i];
    rs_tail += rv * sp[i];
    dB[i] += rv * xd;
    r[i] = a * rv;
  }
  *tail = t;
  return rb;
}

}  // namespace

STATESCOPE_CLONES void scan_step_back(float* __restrict R, const float* __restrict S, const float* __restrict Sprev,
                                      const float* __restrict x, float dt, float a, const float* __restrict B,
                                      const float* __restrict C, const float* __restrict dy, float* __restrict dx,
                                      float* __restrict dB, float* __restrict dC, int64_t P, int64_t N, float& ddt_x,
                                      float& da) {
  const int64_t Nv = N - N % W;
  for (int64_t n = 0; n < N; ++n) dB[n] = 0.0f, dC[n] = 0.0f;
  const v8 av = splat(a);
  v8 rs = splat(0.0f), sxv = splat(0.0f);
  float sx = 0.0f, rs_tail = 0.0f;
  int64_t p = 0;
  for (; p + W <= P; p += W) {
    v8 rb[W];
    float tail[W];
    for (int j = 0; j < W; ++j) {
      const int64_t q = p + j;
      rb[j] = back_row(R + q * N, S + q * N, Sprev + q * N, dy[q], x[q] * dt, av, a, B, C, dB, dC, N, Nv, rs, rs_tail,
                       &tail[j]);
    }
    const v8 rbs = hsum8x8(rb) + load(tail);
    store(dx + p, dt * rbs);
    sxv += load(x + p) * rbs;
  }
  for (; p < P; ++p) {
    float tail;
    const v8 rb = back_row(R + p * N, S + p * N, Sprev + p * N, dy[p], x[p] * dt, av, a, B, C, dB, dC, N, Nv, rs,
                           rs_tail, &tail);
    const float rbs = hsum(rb) + tail;
    dx[p] = dt * rbs;
    sx += x[p] * rbs;
  }
  ddt_x = hsum(sxv) + sx;
  da = hsum(rs) + rs_tail;
}

namespace {

typedef double v4d __attribute__((vector_size(32), aligned(8)));
// The eight lanes of v as two float64 vectors, added to acc.
inline void add_f64(v4d& acc, v8 v) {
  acc += __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3), v4d) +
         __builtin_convertvector(__builtin_shufflevector(v, v, 4, 5, 6, 7), v4d);
}

// step_row that also measures: this row's lane sums of s'^2 (and, with Delta, of (s' - s)^2) into
// *q_out and *d_out (float, over N/8 products each); the block of rows adds them up and goes to
// float64 once per block.
template <bool Delta>
__attribute__((always_inline)) inline v8 step_row_norms(float* __restrict s, float xd, v8 av, const float* __restrict B, const float* __restrict C,
                         int64_t N, int64_t Nv, float a, float* tail, v8* q_out, v8* d_out, double& sq_tail,
                         double& dq_tail) {
  const v8 xdv = splat(xd);
  v8 acc = splat(0.0f), q = splat(0.0f), d = splat(0.0f);
  for (int64_t n = 0; n < Nv; n += W) {
    const v8 o = load(s + n), v = av * o + xdv * load(B + n);
    store(s + n, v);
    acc += v * load(C + n);
    q += v * v;
    if constexpr (Delta) {
      const v8 e = v - o;
      d += e * e;
    }
  }
  *q_out = q;
  *d_out = d;
  float t = 0.0f;
  for (int64_t n = Nv; n < N; ++n) {
    const float o = s[n];
    s[n] = a * o + xd * B[n];
    t += s[n] * C[n];
    sq_tail += static_cast<double>(s[n]) * s[n];
    if constexpr (Delta) dq_tail += (static_cast<double>(s[n]) - o) * (static_cast<double>(s[n]) - o);
  }
  *tail = t;
  return acc;
}

inline double hsum4(v4d v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// The sum of eight vectors as a tree (depth 3, not a chain of 7).
inline v8 tree8(const v8* v) { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }

// Inlined into each clone of scan_step_norms (so compiled for its target, not the default one).
template <bool Delta>
__attribute__((always_inline)) inline void step_norms(float* __restrict S, const float* __restrict x, float dt, float a, const float* __restrict B,
                       const float* __restrict C, float* __restrict y, int64_t P, int64_t N, double& sq, double& dsq) {
  const int64_t Nv = N - N % W;
  const v8 av = splat(a);
  v4d q = {0, 0, 0, 0}, d = {0, 0, 0, 0};
  double q_tail = 0, d_tail = 0;
  int64_t p = 0;
  for (; p + W <= P; p += W) {
    v8 acc[W], qr[W], dr[W];
    float tail[W];
    for (int j = 0; j < W; ++j)
      acc[j] = step_row_norms<Delta>(S + (p + j) * N, x[p + j] * dt, av, B, C, N, Nv, a, &tail[j], &qr[j], &dr[j],
                                     q_tail, d_tail);
    store(y + p, hsum8x8(acc) + load(tail));
    add_f64(q, tree8(qr));
    if constexpr (Delta) add_f64(d, tree8(dr));
  }
  for (; p < P; ++p) {
    float tail;
    v8 qr, dr;
    const v8 acc = step_row_norms<Delta>(S + p * N, x[p] * dt, av, B, C, N, Nv, a, &tail, &qr, &dr, q_tail, d_tail);
    y[p] = hsum(acc) + tail;
    add_f64(q, qr);
    if constexpr (Delta) add_f64(d, dr);
  }
  sq = hsum4(q) + q_tail;
  dsq = hsum4(d) + d_tail;
}

}  // namespace

STATESCOPE_CLONES void scan_step_norms(float* __restrict S, const float* __restrict x, float dt, float a,
                                       const float* __restrict B, const float* __restrict C, float* __restrict y,
                                       int64_t P, int64_t N, double& sq, double* dsq) {
  double unused = 0;
  if (dsq) step_norms<true>(S, x, dt, a, B, C, y, P, N, sq, *dsq);
  else step_norms<false>(S, x, dt, a, B, C, y, P, N, sq, unused);
}

// ---------------------------------------------------------------------------------------------------
// Causal depthwise conv + SiLU
// ---------------------------------------------------------------------------------------------------

namespace {

// The K-1 inputs before t = 0 as token-major rows [K-1, C] (zeros when conv0 is null), and w as
// [K, C] (tap-major), so every inner loop runs over contiguous channels.
void prepare(const float* conv0, const float* w, int64_t C, int64_t K, std::vector<float>& prior,
             std::vector<float>& wt) {
  prior.assign((K - 1) * C, 0.0f);
  if (conv0)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t j = 0; j < K - 1; ++j) prior[j * C + c] = conv0[c * (K - 1) + j];
  wt.resize(K * C);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t k = 0; k < K; ++k) wt[k * C + c] = w[c * K + k];
}

// Row of the input at time tau (>= -(K-1)).
inline const float* row_at(const float* in, int64_t in_stride, const std::vector<float>& prior, int64_t C, int64_t K,
                           int64_t tau) {
  return tau >= 0 ? in + tau * in_stride : prior.data() + (tau + K - 1) * C;
}

// pre[c] for time t into acc.
STATESCOPE_CLONES void conv_row(const float* in, int64_t in_stride, const std::vector<float>& prior,
                                const float* __restrict wt, const float* __restrict bias, float* __restrict acc,
                                int64_t t, int64_t C, int64_t K) {
  for (int64_t c = 0; c < C; ++c) acc[c] = bias ? bias[c] : 0.0f;
  for (int64_t k = 0; k < K; ++k) {
    const float* __restrict src = row_at(in, in_stride, prior, C, K, t - (K - 1) + k);
    const float* __restrict wk = wt + k * C;
    for (int64_t c = 0; c < C; ++c) acc[c] += wk[c] * src[c];
  }
}

STATESCOPE_CLONES void silu_row(const float* __restrict pre, float* __restrict out, int64_t C) {
  const int64_t Cv = C - C % W;
  for (int64_t c = 0; c < Cv; c += W) {
    const v8 v = load(pre + c);
    store(out + c, v * vsigmoid(v));
  }
  for (int64_t c = Cv; c < C; ++c) out[c] = pre[c] * sigmoid(pre[c]);
}

// dpre = dout * silu'(pre), silu'(v) = s (1 + v (1 - s)), s = sigmoid(v).
STATESCOPE_CLONES void silu_back_row(const float* __restrict pre, const float* __restrict dout, float* __restrict dpre,
                                     int64_t C) {
  const int64_t Cv = C - C % W;
  for (int64_t c = 0; c < Cv; c += W) {
    const v8 v = load(pre + c), s = vsigmoid(v);
    store(dpre + c, load(dout + c) * s * (1.0f + v * (1.0f - s)));
  }
  for (int64_t c = Cv; c < C; ++c) {
    const float s = sigmoid(pre[c]);
    dpre[c] = dout[c] * s * (1.0f + pre[c] * (1.0f - s));
  }
}

STATESCOPE_CLONES void axpy_row(float* __restrict dst, const float* __restrict w, const float* __restrict v,
                                int64_t C) {
  for (int64_t c = 0; c < C; ++c) dst[c] += w[c] * v[c];
}

}  // namespace

void conv_silu(const float* in, int64_t in_stride, const float* conv0, const float* w, const float* bias, float* out,
               int64_t L, int64_t C, int64_t K, int64_t out_stride) {
  const int64_t os = out_stride > 0 ? out_stride : C;
  std::vector<float> prior, wt, pre(C);
  prepare(conv0, w, C, K, prior, wt);
  for (int64_t t = 0; t < L; ++t) {
    conv_row(in, in_stride, prior, wt.data(), bias, pre.data(), t, C, K);
    silu_row(pre.data(), out + t * os, C);
  }
}

void conv_final_state(const float* in, int64_t in_stride, const float* conv0, float* fin, int64_t L, int64_t C,
                      int64_t K) {
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = 0; j < K - 1; ++j) {
      const int64_t tau = L - (K - 1) + j;
      fin[c * (K - 1) + j] = tau >= 0 ? in[tau * in_stride + c] : (conv0 ? conv0[c * (K - 1) + tau + K - 1] : 0.0f);
    }
}

void conv_silu_back(const float* in, int64_t in_stride, const float* conv0, const float* w, const float* bias,
                    const float* dout, const float* dconv_fin, float* din, int64_t din_stride, float* dconv0, float* dw,
                    float* dbias, int64_t L, int64_t C, int64_t K, int64_t dout_stride) {
  const int64_t ds = dout_stride > 0 ? dout_stride : C;
  std::vector<float> prior, wt, pre(C), dpre(C);
  prepare(conv0, w, C, K, prior, wt);
  // Gradients of the inputs as token-major rows for times -(K-1) .. L-1: dprior then din.
  std::vector<float> dprior((K - 1) * C, 0.0f), dwt(K * C, 0.0f), db(C, 0.0f);
  for (int64_t t = 0; t < L; ++t) std::fill_n(din + t * din_stride, C, 0.0f);
  auto drow = [&](int64_t tau) { return tau >= 0 ? din + tau * din_stride : dprior.data() + (tau + K - 1) * C; };
  if (dconv_fin)  // the final state holds the inputs at times L-(K-1) .. L-1
    for (int64_t j = 0; j < K - 1; ++j) {
      float* d = drow(L - (K - 1) + j);
      for (int64_t c = 0; c < C; ++c) d[c] += dconv_fin[c * (K - 1) + j];
    }
  for (int64_t t = 0; t < L; ++t) {
    conv_row(in, in_stride, prior, wt.data(), bias, pre.data(), t, C, K);
    silu_back_row(pre.data(), dout + t * ds, dpre.data(), C);
    for (int64_t c = 0; c < C; ++c) db[c] += dpre[c];
    for (int64_t k = 0; k < K; ++k) {
      const int64_t tau = t - (K - 1) + k;
      axpy_row(drow(tau), wt.data() + k * C, dpre.data(), C);                                 // d input
      axpy_row(dwt.data() + k * C, row_at(in, in_stride, prior, C, K, tau), dpre.data(), C);  // d w
    }
  }
  if (dconv0)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t j = 0; j < K - 1; ++j) dconv0[c * (K - 1) + j] = dprior[j * C + c];
  for (int64_t c = 0; c < C; ++c)
    for (int64_t k = 0; k < K; ++k) dw[c * K + k] += dwt[k * C + c];
  if (dbias)
    for (int64_t c = 0; c < C; ++c) dbias[c] += db[c];
}

// ---------------------------------------------------------------------------------------------------
// Gated RMSNorm
// ---------------------------------------------------------------------------------------------------

namespace {

STATESCOPE_CLONES void gate_row(const float* __restrict y, const float* __restrict z, float* __restrict g, int64_t D) {
  const int64_t Dv = D - D % W;
  for (int64_t i = 0; i < Dv; i += W) {
    const v8 zv = load(z + i);
    store(g + i, load(y + i) * (zv * vsigmoid(zv)));
  }
  for (int64_t i = Dv; i < D; ++i) g[i] = y[i] * (z[i] * sigmoid(z[i]));
}

STATESCOPE_CLONES float dot(const float* __restrict a, const float* __restrict b, int64_t n) {
  const int64_t nv = n - n % W;
  v8 acc = splat(0.0f);
  float tail = 0.0f;
  for (int64_t i = 0; i < nv; i += W) acc += load(a + i) * load(b + i);
  for (int64_t i = nv; i < n; ++i) tail += a[i] * b[i];
  return hsum(acc) + tail;
}

inline float sum_sq(const float* g, int64_t n) { return dot(g, g, n); }

STATESCOPE_CLONES void scale_row(const float* __restrict g, const float* __restrict w, float r, float* __restrict out,
                                 int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = g[i] * r * w[i];
}

}  // namespace

void gated_norm(const float* y, const float* z, int64_t z_stride, const float* w, float* out, float* rstd,
                int64_t rows, int64_t D, int64_t ng, float eps) {
  const int64_t Dg = D / ng;
  std::vector<float> g(D);
  for (int64_t r = 0; r < rows; ++r) {
    gate_row(y + r * D, z + r * z_stride, g.data(), D);
    for (int64_t k = 0; k < ng; ++k) {
      const float rs = 1.0f / std::sqrt(sum_sq(g.data() + k * Dg, Dg) / static_cast<float>(Dg) + eps);
      rstd[r * ng + k] = rs;
      scale_row(g.data() + k * Dg, w + k * Dg, rs, out + r * D + k * Dg, Dg);
    }
  }
}

namespace {

// One group of one row: dg = r (a - g r^2 mean(a g)), a = dout w; dw += dout g r; then through the gate.
STATESCOPE_CLONES void norm_back_group(const float* __restrict y, const float* __restrict z, const float* __restrict g,
                                       const float* __restrict w, float r, const float* __restrict dout,
                                       float* __restrict a, float* __restrict dy, float* __restrict dz,
                                       float* __restrict dw, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    a[i] = dout[i] * w[i];
    dw[i] += dout[i] * g[i] * r;
  }
  const float m = dot(a, g, n) / static_cast<float>(n) * r * r;
  const int64_t nv = n - n % W;
  for (int64_t i = 0; i < nv; i += W) {
    const v8 dg = r * (load(a + i) - load(g + i) * m), zv = load(z + i), s = vsigmoid(zv);
    store(dy + i, dg * zv * s);
    store(dz + i, dg * load(y + i) * s * (1.0f + zv * (1.0f - s)));
  }
  for (int64_t i = nv; i < n; ++i) {
    const float dg = r * (a[i] - g[i] * m);
    const float s = sigmoid(z[i]);
    dy[i] = dg * z[i] * s;
    dz[i] = dg * y[i] * s * (1.0f + z[i] * (1.0f - s));
  }
}

}  // namespace

void gated_norm_back(const float* y, const float* z, int64_t z_stride, const float* w, const float* rstd,
                     const float* dout, float* dy, float* dz, int64_t dz_stride, float* dw, int64_t rows, int64_t D,
                     int64_t ng) {
  const int64_t Dg = D / ng;
  std::vector<float> g(D), a(Dg);
  for (int64_t r = 0; r < rows; ++r) {
    const float *yr = y + r * D, *zr = z + r * z_stride;
    gate_row(yr, zr, g.data(), D);
    for (int64_t k = 0; k < ng; ++k) {
      const int64_t o = k * Dg;
      norm_back_group(yr + o, zr + o, g.data() + o, w + o, rstd[r * ng + k], dout + r * D + o, a.data(), dy + r * D + o,
                      dz + r * dz_stride + o, dw + o, Dg);
    }
  }
}

}  // namespace statescope::cpu

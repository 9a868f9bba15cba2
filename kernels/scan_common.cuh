// scan_common.cuh — device code shared by the scan kernels (ssm_scan.cu, ssm_scan_bwd.cu): the
// block-wide token loop, the chunk workspace layout, passes 1 and 2 of the chunked forward, launch
// checks. Included by .cu files only; everything has internal linkage (no relocatable device code).
#pragma once
#include <cuda_runtime.h>

#include <cmath>
#include <string>

#include "kernels/ssm_scan.h"

namespace statescope::kernels {
namespace {

constexpr int kThreads = 128;  // per scan block; a multiple of 32
constexpr int kWarps = kThreads / 32;

__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

// One token's inputs in shared memory: B_t, C_t [N], x_t dt_t [P], dt_t [1].
struct TokenBuf {
  float *B, *C, *xdt, *dt;
  __device__ TokenBuf(float* base, int64_t N, int64_t P) : B(base), C(base + N), xdt(base + 2 * N), dt(base + 2 * N + P) {}
  __host__ __device__ static int64_t floats(int64_t N, int64_t P) { return 2 * N + P + 1; }
};

__device__ void load_token(const SsmScanArgs& a, int64_t bi, int64_t h, int64_t g, int64_t t, TokenBuf buf) {
  const int64_t bl = bi * a.L + t, N = a.N, P = a.P;
  const float dt = a.dt[bl * a.H + h];
  for (int64_t n = threadIdx.x; n < N; n += blockDim.x) {
    buf.B[n] = a.B[(bl * a.G + g) * N + n];
    buf.C[n] = a.C[(bl * a.G + g) * N + n];
  }
  for (int64_t p = threadIdx.x; p < P; p += blockDim.x) buf.xdt[p] = a.x[(bl * a.H + h) * P + p] * dt;
  if (threadIdx.x == 0) *buf.dt = dt;
}

// Scans tokens [t0, t1) of (bi, h) from `init` (null: zeros). Writes y and norms when `outputs`,
// the state after t1 - 1 to `out` ([P*N], may be null). Block-wide (kThreads threads); shared
// memory (scan_shmem): state [P*N], two token buffers (token t + 1 is fetched while t is computed),
// warp partials [2 kWarps] (norm and delta). Thread i owns state entries i, i + kThreads, ...; y_t[p] is a warp's
// reduction over n; the norm (and the delta ||S_t - S_{t-1}||) are warp partials of the owned entries.
__device__ void scan_range(const SsmScanArgs& a, int64_t bi, int64_t h, int64_t t0, int64_t t1, const float* init,
                           float* out, bool outputs, float* smem) {
  const int64_t H = a.H, P = a.P, N = a.N, PN = P * N, g = h / (H / a.G);
  float* S = smem;
  float* bufs = S + PN;
  float* red = bufs + 2 * TokenBuf::floats(N, P);
  const int tid = threadIdx.x, nt = blockDim.x, lane = tid % 32, warp = tid / 32, nw = nt / 32;
  const float A = a.A[h];
  for (int64_t i = tid; i < PN; i += nt) S[i] = init ? init[i] : 0.0f;
  if (t0 < t1) load_token(a, bi, h, g, t0, TokenBuf(bufs, N, P));
  __syncthreads();
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t bl = bi * a.L + t;
    const TokenBuf cur(bufs + ((t - t0) & 1) * TokenBuf::floats(N, P), N, P);
    // The next token's inputs go to the other buffer; everyone finished reading it last step.
    if (t + 1 < t1) load_token(a, bi, h, g, t + 1, TokenBuf(bufs + ((t + 1 - t0) & 1) * TokenBuf::floats(N, P), N, P));
    const float decay = expf(*cur.dt * A);
    float sq = 0.0f, dsq = 0.0f;
    for (int64_t i = tid; i < PN; i += nt) {
      const float old = S[i], v = decay * old + cur.xdt[i / N] * cur.B[i % N];
      S[i] = v;
      sq += v * v;
      dsq += (v - old) * (v - old);
    }
    __syncthreads();  // S_t and the next token's buffer are complete
    if (outputs) {
      for (int64_t p = warp; p < P; p += nw) {
        float acc = 0.0f;
        for (int64_t n = lane; n < N; n += 32) acc += S[p * N + n] * cur.C[n];
        acc = warp_sum(acc);
        if (lane == 0) a.y[(bl * H + h) * P + p] = acc;
      }
      if (a.norm || a.delta) {
        sq = warp_sum(sq);
        dsq = warp_sum(dsq);
        if (lane == 0) red[warp] = sq, red[kWarps + warp] = dsq;
      }
      __syncthreads();  // y's reads of S are done before the next update; partials are complete
      if ((a.norm || a.delta) && tid == 0) {
        float s = 0.0f, d = 0.0f;
        for (int w = 0; w < nw; ++w) s += red[w], d += red[kWarps + w];
        if (a.norm) a.norm[bl * H + h] = sqrtf(s);
        if (a.delta) a.delta[bl * H + h] = sqrtf(d);
      }
    }
  }
  if (out)
    for (int64_t i = tid; i < PN; i += nt) out[i] = S[i];
}

// Workspace layout: [b, H, nc, P*N] chunk states, then [b, H, nc] chunk decays.
struct Chunking {
  int64_t Q, nc, PN;
  __host__ __device__ int64_t state_at(int64_t bi, int64_t h, int64_t c, int64_t H) const { return ((bi * H + h) * nc + c) * PN; }
};

// pass 1: grid (nc, H, b).
__global__ void chunk_local_kernel(SsmScanArgs a, Chunking k, float* ws) {
  extern __shared__ float smem[];
  const int64_t c = blockIdx.x, h = blockIdx.y, bi = blockIdx.z;
  const int64_t t0 = c * k.Q, t1 = t0 + k.Q < a.L ? t0 + k.Q : a.L;
  scan_range(a, bi, h, t0, t1, nullptr, ws + k.state_at(bi, h, c, a.H), false, smem);
  if (threadIdx.x == 0) {
    float sum = 0.0f;
    for (int64_t t = t0; t < t1; ++t) sum += a.dt[(bi * a.L + t) * a.H + h];
    ws[a.b * a.H * k.nc * k.PN + (bi * a.H + h) * k.nc + c] = expf(sum * a.A[h]);
  }
}

// pass 2: grid (H, b); each thread chains its state entries through the chunks, leaving each
// chunk's start state in its slot, and writes the final state (when a.h_final is set).
__global__ void chunk_chain_kernel(SsmScanArgs a, Chunking k, float* ws) {
  const int64_t h = blockIdx.x, bi = blockIdx.y;
  const float* decay = ws + a.b * a.H * k.nc * k.PN + (bi * a.H + h) * k.nc;
  for (int64_t i = threadIdx.x; i < k.PN; i += blockDim.x) {
    float s = a.h0 ? a.h0[(bi * a.H + h) * k.PN + i] : 0.0f;
    for (int64_t c = 0; c < k.nc; ++c) {
      float* slot = ws + k.state_at(bi, h, c, a.H) + i;
      const float local = *slot;
      *slot = s;  // start of chunk c
      s = decay[c] * s + local;
    }
    if (a.h_final) a.h_final[(bi * a.H + h) * k.PN + i] = s;
  }
}

std::string check(cudaError_t e, const char* what) {
  return e == cudaSuccess ? std::string() : std::string(what) + ": " + cudaGetErrorString(e);
}

// Dynamic shared memory of scan_range: state [P*N], two token buffers, warp partials [2 kWarps].
size_t scan_shmem(const SsmScanArgs& a) {
  return sizeof(float) * static_cast<size_t>(a.P * a.N + 2 * TokenBuf::floats(a.N, a.P) + 2 * kWarps);
}

// Kernels needing more than the default 48 KB of dynamic shared memory must opt in.
template <class Kernel>
std::string allow_shmem(Kernel kernel, size_t bytes, const char* what) {
  if (bytes <= 48 * 1024) return {};
  return check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)), what);
}

}  // namespace
}  // namespace statescope::kernels

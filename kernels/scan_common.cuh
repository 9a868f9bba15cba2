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


// Scans tokens [t0, t1) of (bi, h) from `init` (null: zeros). Writes y and norms when `outputs`,
// the state after t1 - 1 to `out` ([P*N], may be null). Block-wide; shared memory: state [P*N],
// then B_t [N], C_t [N], x_t dt [P], norm partials [blockDim.x].
__device__ void scan_range(const SsmScanArgs& a, int64_t bi, int64_t h, int64_t t0, int64_t t1, const float* init,
                           float* out, bool outputs, float* smem) {
  const int64_t H = a.H, P = a.P, N = a.N, L = a.L;
  const int64_t g = h / (H / a.G);
  float* S = smem;
  float* Bt = S + P * N;
  float* Ct = Bt + N;
  float* xt = Ct + N;
  float* red = xt + P;
  const int tid = threadIdx.x, nt = blockDim.x;
  const float A = a.A[h];
  for (int64_t i = tid; i < P * N; i += nt) S[i] = init ? init[i] : 0.0f;
  __syncthreads();
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t bl = bi * L + t;
    const float dt = a.dt[bl * H + h];
    const float decay = expf(dt * A);
    for (int64_t n = tid; n < N; n += nt) {
      Bt[n] = a.B[(bl * a.G + g) * N + n];
      Ct[n] = a.C[(bl * a.G + g) * N + n];
    }
    for (int64_t p = tid; p < P; p += nt) xt[p] = a.x[(bl * H + h) * P + p] * dt;
    __syncthreads();
    float sq = 0.0f;
    for (int64_t i = tid; i < P * N; i += nt) {
      const float v = decay * S[i] + xt[i / N] * Bt[i % N];
      S[i] = v;
      sq += v * v;
    }
    red[tid] = sq;
    __syncthreads();
    if (outputs) {
      for (int64_t p = tid; p < P; p += nt) {
        float acc = 0.0f;
        for (int64_t n = 0; n < N; ++n) acc += S[p * N + n] * Ct[n];
        a.y[(bl * H + h) * P + p] = acc;
      }
      if (a.norm) {
        for (int s = nt / 2; s > 0; s >>= 1) {
          if (tid < s) red[tid] += red[tid + s];
          __syncthreads();
        }
        if (tid == 0) a.norm[bl * H + h] = sqrtf(red[0]);
      }
    }
    __syncthreads();
  }
  if (out)
    for (int64_t i = tid; i < P * N; i += nt) out[i] = S[i];
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

constexpr int kThreads = 128;  // per scan block; a power of two (tree reduction)

// Dynamic shared memory of scan_range: state [P*N], B_t and C_t [N], x_t [P], partials [kThreads].
size_t scan_shmem(const SsmScanArgs& a) {
  return sizeof(float) * static_cast<size_t>(a.P * a.N + 2 * a.N + a.P + kThreads);
}

// Kernels needing more than the default 48 KB of dynamic shared memory must opt in.
template <class Kernel>
std::string allow_shmem(Kernel kernel, size_t bytes, const char* what) {
  if (bytes <= 48 * 1024) return {};
  return check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)), what);
}

}  // namespace
}  // namespace statescope::kernels

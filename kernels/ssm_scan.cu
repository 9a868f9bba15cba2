// ssm_scan.cu — sequential selective scan on the GPU (CUDA C++17, no LibTorch).
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

// grid (H, b), block 128 threads: the whole sequence of one (batch, head) in order.
__global__ void ssm_scan_seq_kernel(SsmScanArgs a) {
  extern __shared__ float smem[];
  const int64_t h = blockIdx.x, bi = blockIdx.y, at = (bi * a.H + h) * a.P * a.N;
  scan_range(a, bi, h, 0, a.L, a.h0 ? a.h0 + at : nullptr, a.h_final + at, true, smem);
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
// chunk's start state in its slot, and writes the final state.
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
    a.h_final[(bi * a.H + h) * k.PN + i] = s;
  }
}

// pass 3: grid (nc, H, b).
__global__ void chunk_output_kernel(SsmScanArgs a, Chunking k, const float* ws) {
  extern __shared__ float smem[];
  const int64_t c = blockIdx.x, h = blockIdx.y, bi = blockIdx.z;
  const int64_t t0 = c * k.Q, t1 = t0 + k.Q < a.L ? t0 + k.Q : a.L;
  scan_range(a, bi, h, t0, t1, ws + k.state_at(bi, h, c, a.H), nullptr, true, smem);
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

std::string ssm_scan_fwd_cuda(const SsmScanArgs& a, void* stream) {
  if (a.b <= 0 || a.H <= 0 || a.P <= 0 || a.N <= 0 || a.G <= 0 || a.H % a.G != 0 || a.L < 0)
    return "ssm_scan_fwd_cuda: bad sizes (need b, H, P, N, G > 0, H % G == 0, L >= 0)";
  const size_t shmem = scan_shmem(a);
  if (auto e = allow_shmem(ssm_scan_seq_kernel, shmem, "cudaFuncSetAttribute(shared memory)"); !e.empty()) return e;
  dim3 grid(static_cast<unsigned>(a.H), static_cast<unsigned>(a.b));
  ssm_scan_seq_kernel<<<grid, kThreads, shmem, static_cast<cudaStream_t>(stream)>>>(a);
  return check(cudaGetLastError(), "ssm_scan_seq_kernel launch");
}

int64_t ssm_scan_chunked_workspace_floats(const SsmScanArgs& a, int64_t Q) {
  const int64_t nc = Q > 0 ? (a.L + Q - 1) / Q : 0;
  return a.b * a.H * nc * (a.P * a.N + 1);
}

std::string ssm_scan_chunked_fwd_cuda(const SsmScanArgs& a, int64_t Q, float* workspace, void* stream) {
  if (a.b <= 0 || a.H <= 0 || a.P <= 0 || a.N <= 0 || a.G <= 0 || a.H % a.G != 0 || a.L < 0 || Q <= 0 || !workspace)
    return "ssm_scan_chunked_fwd_cuda: bad sizes (need b, H, P, N, G, Q > 0, H % G == 0, L >= 0, a workspace)";
  const size_t shmem = scan_shmem(a);
  if (auto e = allow_shmem(chunk_local_kernel, shmem, "cudaFuncSetAttribute(shared memory, pass 1)"); !e.empty()) return e;
  if (auto e = allow_shmem(chunk_output_kernel, shmem, "cudaFuncSetAttribute(shared memory, pass 3)"); !e.empty()) return e;
  Chunking k{Q, (a.L + Q - 1) / Q, a.P * a.N};
  auto st = static_cast<cudaStream_t>(stream);
  if (k.nc == 0) {  // L == 0: the final state is the initial state
    chunk_chain_kernel<<<dim3(static_cast<unsigned>(a.H), static_cast<unsigned>(a.b)), 256, 0, st>>>(a, k, workspace);
    return check(cudaGetLastError(), "chunk_chain_kernel launch");
  }
  dim3 grid(static_cast<unsigned>(k.nc), static_cast<unsigned>(a.H), static_cast<unsigned>(a.b));
  chunk_local_kernel<<<grid, kThreads, shmem, st>>>(a, k, workspace);
  if (auto e = check(cudaGetLastError(), "chunk_local_kernel launch"); !e.empty()) return e;
  chunk_chain_kernel<<<dim3(static_cast<unsigned>(a.H), static_cast<unsigned>(a.b)), 256, 0, st>>>(a, k, workspace);
  if (auto e = check(cudaGetLastError(), "chunk_chain_kernel launch"); !e.empty()) return e;
  chunk_output_kernel<<<grid, kThreads, shmem, st>>>(a, k, workspace);
  return check(cudaGetLastError(), "chunk_output_kernel launch");
}

bool cuda_device_available() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

}  // namespace statescope::kernels

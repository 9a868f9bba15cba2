// ssm_scan_bwd.cu — the chunk-parallel backward of the selective scan (CUDA C++17, no LibTorch).
// The passes are described in ssm_scan.h; the CPU twin is ssm_scan_bwd_ref in core/twins/ssm_scan_ref.cpp.
//
// Row tiles: a block owns TILE rows p of one head's state (P x N) for one chunk. Rows are independent
// in the recurrence, so a tile's states fit in shared memory for a whole chunk; what couples rows
// (dB, dC, ddt, dA) is summed across tiles and heads with atomics. Each thread owns state columns n
// (all TILE rows of them), so the state and the adjoint need no barriers, only the per-token inputs.
#include <algorithm>

#include "kernels/scan_common.cuh"

namespace statescope::kernels {
namespace {

struct Tiling {
  Chunking k;
  int64_t ntile;  // P / TILE
  int64_t qs;     // min(Q, L): the longest chunk, which sizes pass 3's shared memory
  float* adj;     // [b, H, nc, PN] adjoint slots (after the forward workspace)
};

// Block coordinates of passes 1 and 3: grid (nc * ntile, H, b).
struct Where {
  int64_t c, p0, h, bi, t0, t1;
};
template <int TILE>
__device__ Where where(const SsmScanArgs& a, const Tiling& w) {
  Where r;
  r.c = blockIdx.x / w.ntile;
  r.p0 = (blockIdx.x % w.ntile) * TILE;
  r.h = blockIdx.y;
  r.bi = blockIdx.z;
  r.t0 = r.c * w.k.Q;
  r.t1 = r.t0 + w.k.Q < a.L ? r.t0 + w.k.Q : a.L;
  return r;
}

// pass 1: the chunk's adjoint from zero walked back to its first token, times a_t0. Shared memory:
// R [TILE*N], C_t [N], dy_t [TILE].
template <int TILE>
__global__ void adj_local_kernel(SsmScanArgs a, SsmScanGrads g, Tiling w) {
  extern __shared__ float smem[];
  const Where q = where<TILE>(a, w);
  const int64_t H = a.H, P = a.P, N = a.N, gi = q.h / (H / a.G);
  float* R = smem;
  float* Ct = R + TILE * N;
  float* dyt = Ct + N;
  const int tid = threadIdx.x, nt = blockDim.x;
  for (int64_t i = tid; i < TILE * N; i += nt) R[i] = 0.0f;
  for (int64_t t = q.t1 - 1; t >= q.t0; --t) {
    const int64_t bl = q.bi * a.L + t;
    for (int64_t n = tid; n < N; n += nt) Ct[n] = a.C[(bl * a.G + gi) * N + n];
    if (tid < TILE) dyt[tid] = g.dy[(bl * H + q.h) * P + q.p0 + tid];
    __syncthreads();
    const float decay = expf(a.dt[bl * H + q.h] * a.A[q.h]);
    for (int64_t n = tid; n < N; n += nt)
      for (int p = 0; p < TILE; ++p) R[p * N + n] = decay * (R[p * N + n] + dyt[p] * Ct[n]);
    __syncthreads();
  }
  float* out = w.adj + w.k.state_at(q.bi, q.h, q.c, H) + q.p0 * N;
  for (int64_t i = tid; i < TILE * N; i += nt) out[i] = R[i];
}

// pass 2: grid (H, b). Chunk decays come from the forward workspace (pass 0).
__global__ void adj_chain_kernel(SsmScanArgs a, SsmScanGrads g, Tiling w, const float* ws) {
  const int64_t h = blockIdx.x, bi = blockIdx.y, nc = w.k.nc, PN = w.k.PN, at = (bi * a.H + h) * PN;
  const float* decay = ws + a.b * a.H * nc * PN + (bi * a.H + h) * nc;
  for (int64_t i = threadIdx.x; i < PN; i += blockDim.x) {
    float in = g.dh_final ? g.dh_final[at + i] : 0.0f;
    for (int64_t c = nc - 1; c >= 0; --c) {
      float* slot = w.adj + w.k.state_at(bi, h, c, a.H) + i;
      const float local = *slot;
      *slot = in;  // the adjoint entering chunk c from its right
      in = decay[c] * in + local;
    }
    if (g.dh0) g.dh0[at + i] = in;
  }
}

// Shared memory of pass 3: states S_{t0-1}..S_{t1-1} [(Q+1)*TILE*N], adjoint [TILE*N], B_t and C_t
// [N], x_t and dy_t [TILE], warp partials [(TILE+1)*warps], row sums [TILE+1].
size_t grad_shmem(int64_t Q, int tile, int64_t N) {
  const int64_t warps = kThreads / 32;
  return sizeof(float) * static_cast<size_t>((Q + 2) * tile * N + 2 * N + 2 * tile + (tile + 1) * (warps + 1));
}

// pass 3: recompute the chunk's states, then walk back with the adjoint accumulating gradients.
// One kernel body, ~80 lines on purpose: the recompute and the backward walk share registers and
// shared-memory tiles, which helper functions would have to pass around by hand.
template <int TILE>
__global__ void adj_grad_kernel(SsmScanArgs a, SsmScanGrads g, Tiling w, const float* ws) {
  extern __shared__ float smem[];
  const Where q = where<TILE>(a, w);
  const int64_t H = a.H, P = a.P, N = a.N, G = a.G, gi = q.h / (H / G), TN = TILE * N;
  const int64_t len = q.t1 - q.t0;
  float* hist = smem;                // [(len+1), TILE, N]
  float* R = hist + (w.qs + 1) * TN;
  float* Bt = R + TN;
  float* Ct = Bt + N;
  float* xt = Ct + N;
  float* dyt = xt + TILE;
  float* red = dyt + TILE;           // [TILE+1][kWarps]
  float* sums = red + (TILE + 1) * kWarps;
  const int tid = threadIdx.x, nt = blockDim.x, lane = tid % 32, warp = tid / 32;
  const float A = a.A[q.h];
  const float* start = ws + w.k.state_at(q.bi, q.h, q.c, H) + q.p0 * N;
  const float* in = w.adj + w.k.state_at(q.bi, q.h, q.c, H) + q.p0 * N;
  for (int64_t i = tid; i < TN; i += nt) hist[i] = start[i], R[i] = in[i];
  // Forward through the chunk: hist[k+1] = a_t hist[k] + dt_t x_t B_t^T.
  for (int64_t k = 0; k < len; ++k) {
    const int64_t bl = q.bi * a.L + q.t0 + k;
    for (int64_t n = tid; n < N; n += nt) Bt[n] = a.B[(bl * G + gi) * N + n];
    if (tid < TILE) xt[tid] = a.x[(bl * H + q.h) * P + q.p0 + tid];
    __syncthreads();
    const float dt = a.dt[bl * H + q.h], decay = expf(dt * A);
    for (int64_t n = tid; n < N; n += nt)
      for (int p = 0; p < TILE; ++p)
        hist[(k + 1) * TN + p * N + n] = decay * hist[k * TN + p * N + n] + xt[p] * dt * Bt[n];
    __syncthreads();
  }
  // Backward: R holds the adjoint entering token t from its right; add dy_t C_t^T to get R_t.
  float dA_acc = 0.0f;
  for (int64_t k = len - 1; k >= 0; --k) {
    const int64_t t = q.t0 + k, bl = q.bi * a.L + t;
    for (int64_t n = tid; n < N; n += nt) {
      Bt[n] = a.B[(bl * G + gi) * N + n];
      Ct[n] = a.C[(bl * G + gi) * N + n];
    }
    if (tid < TILE) {
      xt[tid] = a.x[(bl * H + q.h) * P + q.p0 + tid];
      dyt[tid] = g.dy[(bl * H + q.h) * P + q.p0 + tid];
    }
    __syncthreads();
    const float dt = a.dt[bl * H + q.h], decay = expf(dt * A);
    float part[TILE + 1];  // per row: sum_n R_t B_t (-> dx); last: sum R_t * S_{t-1} (-> da)
    for (int j = 0; j <= TILE; ++j) part[j] = 0.0f;
    for (int64_t n = tid; n < N; n += nt) {
      float dc = 0.0f, db = 0.0f;
      for (int p = 0; p < TILE; ++p) {
        const float r = R[p * N + n] + dyt[p] * Ct[n];
        R[p * N + n] = r;
        dc += dyt[p] * hist[(k + 1) * TN + p * N + n];
        db += r * xt[p];
        part[p] += r * Bt[n];
        part[TILE] += r * hist[k * TN + p * N + n];
      }
      atomicAdd(&g.dC[(bl * G + gi) * N + n], dc);
      atomicAdd(&g.dB[(bl * G + gi) * N + n], db * dt);
    }
    for (int j = 0; j <= TILE; ++j) {
      const float v = warp_sum(part[j]);
      if (lane == 0) red[j * kWarps + warp] = v;
    }
    __syncthreads();
    if (tid <= TILE) {
      float s = 0.0f;
      for (int i = 0; i < kWarps; ++i) s += red[tid * kWarps + i];
      sums[tid] = s;
    }
    __syncthreads();
    if (tid < TILE) g.dx[(bl * H + q.h) * P + q.p0 + tid] = dt * sums[tid];
    if (tid == 0) {
      float d = sums[TILE] * decay * A;
      for (int p = 0; p < TILE; ++p) d += xt[p] * sums[p];
      atomicAdd(&g.ddt[bl * H + q.h], d);
      dA_acc += sums[TILE] * decay * dt;
    }
    for (int64_t n = tid; n < N; n += nt)
      for (int p = 0; p < TILE; ++p) R[p * N + n] *= decay;  // -> the adjoint entering t - 1
    __syncthreads();
  }
  if (tid == 0) atomicAdd(&g.dA[q.h], dA_acc);
}

template <int TILE>
std::string launch_tiles(const SsmScanArgs& a, const SsmScanGrads& g, Tiling w, const float* ws, size_t shmem,
                         cudaStream_t st) {
  const size_t local_shmem = sizeof(float) * static_cast<size_t>(TILE * a.N + a.N + TILE);
  if (auto e = allow_shmem(adj_local_kernel<TILE>, local_shmem, "cudaFuncSetAttribute(shared memory, bwd pass 1)"); !e.empty())
    return e;
  if (auto e = allow_shmem(adj_grad_kernel<TILE>, shmem, "cudaFuncSetAttribute(shared memory, bwd pass 3)"); !e.empty())
    return e;
  dim3 tiles(static_cast<unsigned>(w.k.nc * w.ntile), static_cast<unsigned>(a.H), static_cast<unsigned>(a.b));
  dim3 heads(static_cast<unsigned>(a.H), static_cast<unsigned>(a.b));
  if (w.k.nc > 0) {
    adj_local_kernel<TILE><<<tiles, kThreads, local_shmem, st>>>(a, g, w);
    if (auto e = check(cudaGetLastError(), "adj_local_kernel launch"); !e.empty()) return e;
  }
  adj_chain_kernel<<<heads, 256, 0, st>>>(a, g, w, ws);
  if (auto e = check(cudaGetLastError(), "adj_chain_kernel launch"); !e.empty()) return e;
  if (w.k.nc == 0) return {};
  adj_grad_kernel<TILE><<<tiles, kThreads, shmem, st>>>(a, g, w, ws);
  return check(cudaGetLastError(), "adj_grad_kernel launch");
}

}  // namespace

int64_t ssm_scan_chunked_bwd_workspace_floats(const SsmScanArgs& a, int64_t Q) {
  const int64_t nc = Q > 0 ? (a.L + Q - 1) / Q : 0;
  return std::max<int64_t>(1, ssm_scan_chunked_workspace_floats(a, Q) + a.b * a.H * nc * a.P * a.N);
}

std::string ssm_scan_chunked_bwd_cuda(const SsmScanArgs& a, const SsmScanGrads& g, int64_t Q, float* workspace,
                                      void* stream) {
  if (a.b <= 0 || a.H <= 0 || a.P <= 0 || a.N <= 0 || a.G <= 0 || a.H % a.G != 0 || a.L < 0 || Q <= 0 || !workspace)
    return "ssm_scan_chunked_bwd_cuda: bad sizes (need b, H, P, N, G, Q > 0, H % G == 0, L >= 0, a workspace)";
  if (!g.dy || !g.dx || !g.ddt || !g.dA || !g.dB || !g.dC)
    return "ssm_scan_chunked_bwd_cuda: dy, dx, ddt, dA, dB and dC are required";
  auto st = static_cast<cudaStream_t>(stream);
  int dev = 0, optin = 0;
  if (auto e = check(cudaGetDevice(&dev), "cudaGetDevice"); !e.empty()) return e;
  if (auto e = check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
                     "cudaDeviceGetAttribute(shared memory)"); !e.empty())
    return e;
  const int64_t nc = (a.L + Q - 1) / Q;
  const int64_t Qs = std::min(Q, std::max<int64_t>(a.L, 1));  // shared memory follows the longest chunk
  int tile = 0;
  for (int t : {16, 8, 4, 2, 1})
    if (a.P % t == 0 && grad_shmem(Qs, t, a.N) <= static_cast<size_t>(optin)) {
      tile = t;
      break;
    }
  if (tile == 0)
    return "ssm_scan_chunked_bwd_cuda: a chunk of " + std::to_string(Qs) + " tokens with d_state " + std::to_string(a.N) +
           " needs " + std::to_string(grad_shmem(Qs, 1, a.N)) + " bytes of shared memory, the device has " +
           std::to_string(optin) + "; use a smaller chunk";
  // Atomically accumulated outputs start at zero.
  const size_t BN = sizeof(float) * static_cast<size_t>(a.b * a.L * a.G * a.N);
  if (auto e = check(cudaMemsetAsync(g.dB, 0, BN, st), "cudaMemsetAsync(dB)"); !e.empty()) return e;
  if (auto e = check(cudaMemsetAsync(g.dC, 0, BN, st), "cudaMemsetAsync(dC)"); !e.empty()) return e;
  if (auto e = check(cudaMemsetAsync(g.ddt, 0, sizeof(float) * a.b * a.L * a.H, st), "cudaMemsetAsync(ddt)"); !e.empty()) return e;
  if (auto e = check(cudaMemsetAsync(g.dA, 0, sizeof(float) * a.H, st), "cudaMemsetAsync(dA)"); !e.empty()) return e;
  // pass 0: chunk start states (and decays) in the forward workspace layout.
  Chunking k{Q, nc, a.P * a.N};
  SsmScanArgs fa = a;
  fa.h_final = nullptr;
  if (nc > 0) {
    const size_t shmem = scan_shmem(a);
    if (auto e = allow_shmem(chunk_local_kernel, shmem, "cudaFuncSetAttribute(shared memory, bwd pass 0)"); !e.empty()) return e;
    chunk_local_kernel<<<dim3(static_cast<unsigned>(nc), static_cast<unsigned>(a.H), static_cast<unsigned>(a.b)), kThreads,
                         shmem, st>>>(fa, k, workspace);
    if (auto e = check(cudaGetLastError(), "chunk_local_kernel launch (bwd)"); !e.empty()) return e;
    chunk_chain_kernel<<<dim3(static_cast<unsigned>(a.H), static_cast<unsigned>(a.b)), 256, 0, st>>>(fa, k, workspace);
    if (auto e = check(cudaGetLastError(), "chunk_chain_kernel launch (bwd)"); !e.empty()) return e;
  }
  Tiling w{k, a.P / tile, Qs, workspace + ssm_scan_chunked_workspace_floats(a, Q)};
  const size_t shmem = grad_shmem(Qs, tile, a.N);
  switch (tile) {
    case 16: return launch_tiles<16>(a, g, w, workspace, shmem, st);
    case 8: return launch_tiles<8>(a, g, w, workspace, shmem, st);
    case 4: return launch_tiles<4>(a, g, w, workspace, shmem, st);
    case 2: return launch_tiles<2>(a, g, w, workspace, shmem, st);
    default: return launch_tiles<1>(a, g, w, workspace, shmem, st);
  }
}

}  // namespace statescope::kernels

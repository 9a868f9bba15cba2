// cpu_scan.h — the selective scan on the CPU as plain loops over contiguous buffers: the fast CPU
// path (ScanImpl::CpuLoops). One autograd node:
//   forward:  the sequential recurrence per (batch, head), the state in a P x N buffer, keeping the
//             state at every chunk start (every cpu_scan_chunk(P, N) tokens) when a gradient is wanted;
//   backward: per chunk, from its saved start state, recompute the chunk's states, then walk the
//             adjoint R_t = dLoss/dS_t back through them (R_{t-1} = a_t R_t + dy_{t-1} C_{t-1}^T).
// Work is split over (batch, head) with at::parallel_for (the intra-op threads). No big temporaries:
// memory is the inputs, the outputs, the chunk-start states and one chunk of states per task.
//
// Shapes and meaning as ssd_scan.h: x [b, L, H, P], dt [b, L, H], A [H], B/C [b, L, G, N],
// h0 [b, H, P, N] or undefined; D [H] or undefined: when given, y includes the skip term D x (and D
// gets its gradient); float32 (other float types are converted), CPU. Gradients flow to every
// input, h0 included; state norms (when asked) carry none. Exact against ssd_scan_sequential and
// ssd_scan_chunked to float32 rounding (tests/test_cpu_scan.cpp).
#pragma once
#include "core/model/mamba2/ssd_scan.h"

namespace statescope {

// Tokens between saved states (the backward's recompute length): 64, fewer for large heads so one
// chunk of states stays within about 256 KiB (L2) — e.g. 7 for P x N = 64 x 128 (130m). At least 4.
constexpr int64_t kCpuScanChunk = 64;
constexpr int64_t cpu_scan_chunk(int64_t P, int64_t N) {
  const int64_t fit = (int64_t{1} << 16) / (P * N > 0 ? P * N : 1) - 1;
  return fit < 4 ? 4 : fit > kCpuScanChunk ? kCpuScanChunk : fit;
}

// The loops without tensors, for callers that own the buffers (cpu_scan below, the fused CPU mixer in
// cpu_mixer.h). float32, b batch, L length, H heads (P each), G groups of B/C (N each); bl = bi L + t.
struct CpuScanArgs {
  int64_t b = 0, L = 0, H = 0, P = 0, G = 1, N = 0;
  const float* x = nullptr;   // x[bl, h, p] at x + bl x_row + h P + p
  int64_t x_row = 0;
  const float* B = nullptr;   // B[bl, g, n] at B + bl bc_row + g N + n; C likewise
  const float* C = nullptr;
  int64_t bc_row = 0;
  const float* dt = nullptr;  // [b L, H]
  const float* A = nullptr;   // [H]
  const float* h0 = nullptr;  // [b, H, P, N] or null (zeros)
  const float* D = nullptr;   // [H] or null (no skip term)
};

// Floats of the chunk-start states a training forward keeps for the backward.
int64_t cpu_scan_starts_size(const CpuScanArgs& a);

// y [b, L, H, P] (with D x when D is given), final state hf [b, H, P, N]; starts (cpu_scan_starts_size
// floats) when not null; norms nm and delta norms dl [b, L, H] when not null. Parallel over (b, H).
void cpu_scan_forward(const CpuScanArgs& a, float* y, float* hf, float* starts, float* nm, float* dl);

// From dy [b, L, H, P] and dhf [b, H, P, N] (null: zero): dx (rows at x_row, overwritten), ddt [b L, H],
// per-head dB and dC rows dBh, dCh [b, L, H, N], the per-(b, h) shares of dA and dD [b, H] (float64),
// dh0 [b, H, P, N] when not null.
void cpu_scan_backward(const CpuScanArgs& a, const float* starts, const float* dy, const float* dhf, float* dx,
                       float* ddt, float* dBh, float* dCh, double* dA_part, double* dD_part, float* dh0);

ScanResult cpu_scan(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                    const torch::Tensor& C, const torch::Tensor& h0, bool want_norms,
                    const torch::Tensor& D = {});

}  // namespace statescope

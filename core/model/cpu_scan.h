// cpu_scan.h — the selective scan on the CPU as plain loops over contiguous buffers: the fast CPU
// path (ScanImpl::CpuLoops). One autograd node:
//   forward:  the sequential recurrence per (batch, head), the state in a P x N buffer, keeping the
//             state at every chunk start (every kCpuScanChunk tokens) when a gradient is wanted;
//   backward: per chunk, from its saved start state, recompute the chunk's states, then walk the
//             adjoint R_t = dLoss/dS_t back through them (R_{t-1} = a_t R_t + dy_{t-1} C_{t-1}^T).
// Work is split over (batch, head) with at::parallel_for (the intra-op threads). No big temporaries:
// memory is the inputs, the outputs, the chunk-start states and one chunk of states per task.
//
// Shapes and meaning as ssd_scan.h: x [b, L, H, P], dt [b, L, H], A [H], B/C [b, L, G, N],
// h0 [b, H, P, N] or undefined; float32 (other float types are converted), CPU. Gradients flow to every
// input, h0 included; state norms (when asked) carry none. Exact against ssd_scan_sequential and
// ssd_scan_chunked to float32 rounding (tests/test_cpu_scan.cpp).
#pragma once
#include "core/model/ssd_scan.h"

namespace statescope {

constexpr int64_t kCpuScanChunk = 64;  // tokens between saved states (backward recompute length)

ScanResult cpu_scan(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                    const torch::Tensor& C, const torch::Tensor& h0, bool want_norms);

}  // namespace statescope

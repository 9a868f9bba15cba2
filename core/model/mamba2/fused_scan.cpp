// fused_scan.cpp — the autograd node around the chunked scan kernels (see fused_scan.h).
#include "core/model/mamba2/fused_scan.h"

#include <c10/core/DeviceGuard.h>
#include <torch/autograd.h>

#include <atomic>

#include "core/base/error.h"
#include "core/model/mamba2/scan_outputs.h"
#include "kernels/ssm_scan.h"
#include "core/twins/ssm_scan_ref.h"

namespace statescope {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

kernels::SsmScanArgs args_of(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A,
                             const torch::Tensor& B, const torch::Tensor& C, const torch::Tensor& h0) {
  kernels::SsmScanArgs a;
  a.x = x.data_ptr<float>(); a.dt = dt.data_ptr<float>(); a.A = A.data_ptr<float>();
  a.B = B.data_ptr<float>(); a.C = C.data_ptr<float>(); a.h0 = h0.defined() ? h0.data_ptr<float>() : nullptr;
  a.b = x.size(0); a.L = x.size(1); a.H = x.size(2); a.P = x.size(3); a.G = B.size(2); a.N = B.size(3);
  return a;
}

struct FusedScanFn : torch::autograd::Function<FusedScanFn> {
  // -> {y [b, L, H, P], final state [b, H, P, N], norms and delta norms [b, L, H] (or [0] when not asked)}
  static variable_list forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor dt, torch::Tensor A, torch::Tensor B,
                               torch::Tensor C, torch::Tensor h0, int64_t Q, bool norms) {
    require_kernels_for(x, "fused scan");
    const c10::DeviceGuard on(x.device());  // raw launches go to the current device: make it x's (cuda:N)
    x = contiguous_f32(x), dt = contiguous_f32(dt), A = contiguous_f32(A);
    B = contiguous_f32(B), C = contiguous_f32(C);
    h0 = h0.numel() > 0 ? contiguous_f32(h0) : torch::Tensor();  // an empty tensor stands for "no initial state"
    auto a = args_of(x, dt, A, B, C, h0);
    auto y = torch::empty_like(x);
    auto hf = torch::empty({a.b, a.H, a.P, a.N}, x.options());
    auto nm = torch::empty({norms ? a.b : 0, a.L, a.H}, x.options()), dl = torch::empty_like(nm);
    a.y = y.data_ptr<float>(); a.h_final = hf.data_ptr<float>();
    a.norm = norms ? nm.data_ptr<float>() : nullptr;
    a.delta = norms ? dl.data_ptr<float>() : nullptr;
    if (x.is_cuda()) {
#if STATESCOPE_HAVE_KERNELS
      auto ws = torch::empty({std::max<int64_t>(1, kernels::ssm_scan_chunked_workspace_floats(a, Q))}, x.options());
      const std::string err = kernels::ssm_scan_chunked_fwd_cuda(a, Q, ws.data_ptr<float>(), nullptr);
      if (!err.empty()) throw Error("fused scan: " + err);
      count_fused_launch(FusedKernel::ScanForward);
#endif
    } else {
      ssm_scan_chunked_ref(a, Q);
    }
    ctx->save_for_backward({x, dt, A, B, C, h0.defined() ? h0 : torch::Tensor()});
    ctx->saved_data["has_h0"] = h0.defined();
    ctx->mark_non_differentiable({nm, dl});
    return {y, hf, nm, dl};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto s = ctx->get_saved_variables();
    const bool has_h0 = ctx->saved_data["has_h0"].toBool();
    const c10::DeviceGuard on(s[0].device());
    auto x = s[0], dt = s[1], A = s[2], B = s[3], C = s[4];
    auto h0 = has_h0 ? s[5] : torch::Tensor();
    auto a = args_of(x, dt, A, B, C, h0);
    auto dy = grads[0].defined() ? contiguous_f32(grads[0]) : torch::zeros_like(x);
    auto dhf = grads[1].defined() ? contiguous_f32(grads[1]) : torch::Tensor();
    auto dx = torch::empty_like(x), ddt = torch::empty_like(dt), dA = torch::empty_like(A);
    auto dB = torch::empty_like(B), dC = torch::empty_like(C);
    auto dh0 = has_h0 ? torch::empty_like(h0) : torch::zeros({0}, x.options());
    kernels::SsmScanGrads g;
    g.dy = dy.data_ptr<float>(); g.dh_final = dhf.defined() ? dhf.data_ptr<float>() : nullptr;
    g.dx = dx.data_ptr<float>(); g.ddt = ddt.data_ptr<float>(); g.dA = dA.data_ptr<float>();
    g.dB = dB.data_ptr<float>(); g.dC = dC.data_ptr<float>(); g.dh0 = has_h0 ? dh0.data_ptr<float>() : nullptr;
    const int64_t Q = kFusedBackwardChunk;
    if (x.is_cuda()) {
#if STATESCOPE_HAVE_KERNELS
      auto ws = torch::empty({kernels::ssm_scan_chunked_bwd_workspace_floats(a, Q)}, x.options());
      const std::string err = kernels::ssm_scan_chunked_bwd_cuda(a, g, Q, ws.data_ptr<float>(), nullptr);
      if (!err.empty()) throw Error("fused scan backward: " + err);
      count_fused_launch(FusedKernel::ScanBackward);
#endif
    } else {
      ssm_scan_bwd_ref(a, g, Q);
    }
    return {dx, ddt, dA, dB, dC, dh0, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

void require_kernels_for(const torch::Tensor& x, const char* what) {
  if (x.is_cuda() && !fused_kernels_built())
    throw Error(std::string(what) + ": this build has no CUDA kernels (nvcc was not found at configure time)");
}

torch::Tensor contiguous_f32(const torch::Tensor& t) { return t.to(torch::kFloat32).contiguous(); }

namespace {
std::atomic<int64_t> g_launches[4];
}  // namespace

void count_fused_launch(FusedKernel k) { g_launches[static_cast<int>(k)].fetch_add(1, std::memory_order_relaxed); }

FusedLaunchCounts fused_launch_counts() {
  FusedLaunchCounts c;
  c.scan_forward = g_launches[0].load();
  c.scan_backward = g_launches[1].load();
  c.conv1d = g_launches[2].load();
  c.step = g_launches[3].load();
  return c;
}

bool fused_kernels_built() {
#if STATESCOPE_HAVE_KERNELS
  return true;
#else
  return false;
#endif
}

ScanResult fused_scan(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                      const torch::Tensor& C, const torch::Tensor& h0, int64_t chunk, bool want_norms) {
  check_scan_shapes(x, dt, A, B, C, h0);
  if (chunk <= 0) throw Error("fused scan: chunk length must be positive, got " + std::to_string(chunk));
  // Autograd nodes take defined tensors only: no initial state travels as an empty tensor.
  auto h0_in = h0.defined() ? h0 : torch::empty({0}, x.options());
  auto out = FusedScanFn::apply(x, dt, A, B, C, h0_in, chunk, want_norms);
  return scan_result_of(out, want_norms);
}

}  // namespace statescope

// cpu_scan.cpp — the scan as plain loops and its backward (see cpu_scan.h).
#include "core/model/mamba2/cpu_scan.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "core/base/error.h"
#include "core/model/mamba2/cpu_loops.h"
#include "core/model/mamba2/scan_outputs.h"

namespace statescope {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// x, B, C rows at a stride (a narrow of the conv output, as the fused mixer passes them): element
// [bl, h, p] of x at x + bl * x_row + h * P + p; [bl, g, n] of B and C at + bl * bc_row + g * N + n.
const float* xrow(const CpuScanArgs& a, int64_t bl, int64_t h) { return a.x + bl * a.x_row + h * a.P; }
int64_t bc_at(const CpuScanArgs& a, int64_t bl, int64_t g) { return bl * a.bc_row + g * a.N; }
int64_t Q_of(const CpuScanArgs& a) { return cpu_scan_chunk(a.P, a.N); }
int64_t nc_of(const CpuScanArgs& a) { return (a.L + Q_of(a) - 1) / Q_of(a); }

// Forward of (bi, h): y, the final state, chunk-start states (when `starts`), norms (when `nm`) and
// delta norms (when `dl` too).
void forward_head(const CpuScanArgs& d, int64_t bi, int64_t h, float* y, float* hf, float* starts, float* nm,
                  float* dl) {
  const int64_t H = d.H, P = d.P, N = d.N, PN = P * N, g = h / (H / d.G), Q = Q_of(d), nc = nc_of(d);
  std::vector<float> S(PN);
  if (d.h0) std::copy_n(d.h0 + (bi * H + h) * PN, PN, S.begin());
  const float A = d.A[h];
  for (int64_t t = 0; t < d.L; ++t) {
    if (starts && t % Q == 0) std::copy(S.begin(), S.end(), starts + ((bi * H + h) * nc + t / Q) * PN);
    const int64_t bl = bi * d.L + t;
    const float dt = d.dt[bl * H + h];
    const float* xv = xrow(d, bl, h);
    float* yv = y + (bl * H + h) * P;
    const float a = std::exp(dt * A), *Bv = d.B + bc_at(d, bl, g), *Cv = d.C + bc_at(d, bl, g);
    if (nm) {  // with the measurements
      double sq = 0, dsq = 0;
      cpu::scan_step_norms(S.data(), xv, dt, a, Bv, Cv, yv, P, N, sq, dl ? &dsq : nullptr);
      nm[bl * H + h] = static_cast<float>(std::sqrt(sq));
      if (dl) dl[bl * H + h] = static_cast<float>(std::sqrt(dsq));
    } else {
      cpu::scan_step(S.data(), xv, dt, a, Bv, Cv, yv, P, N);
    }
    if (d.D)  // the skip term: y += D x
      for (int64_t p = 0; p < P; ++p) yv[p] += d.D[h] * xv[p];
  }
  std::copy(S.begin(), S.end(), hf + (bi * H + h) * PN);
}

// Backward of (bi, h): dx (rows at the stride of x), ddt, this head's dB/dC rows ([b, L, H, N]), dA's
// and dD's share, dh0.
void backward_head(const CpuScanArgs& d, const float* starts, const float* dy, const float* dhf, int64_t bi,
                   int64_t h, float* dx, float* ddt, float* dBh, float* dCh, double* dA_part, double* dD_part,
                   float* dh0) {
  const int64_t H = d.H, P = d.P, N = d.N, PN = P * N, g = h / (H / d.G), Q = Q_of(d), nc = nc_of(d);
  std::vector<float> R(PN, 0.0f);
  // The chunk's states after each of its tokens, overwritten before they are read: no zeroing.
  std::unique_ptr<float[]> S_buf(new float[std::min(Q, d.L) * PN]);
  float* S = S_buf.get();
  if (dhf) std::copy_n(dhf + (bi * H + h) * PN, PN, R.begin());
  const float A = d.A[h];
  double dA = 0, dD = 0;
  for (int64_t c = nc - 1; c >= 0; --c) {
    const int64_t t0 = c * Q, t1 = std::min(d.L, t0 + Q);
    // The chunk's states S_t at S[(t - t0) * PN]; the one before its first token read where it was saved.
    const float* S0 = starts + ((bi * H + h) * nc + c) * PN;
    auto before = [&](int64_t t) { return t == t0 ? S0 : S + (t - t0 - 1) * PN; };  // S_{t-1}
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t bl = bi * d.L + t;
      const float dt = d.dt[bl * H + h];
      cpu::scan_step_state(S + (t - t0) * PN, before(t), xrow(d, bl, h), dt, std::exp(dt * A),
                           d.B + bc_at(d, bl, g), P, N);
    }
    for (int64_t t = t1 - 1; t >= t0; --t) {
      const int64_t bl = bi * d.L + t;
      const float dt = d.dt[bl * H + h], a = std::exp(dt * A);
      const float *xv = xrow(d, bl, h), *gy = dy + (bl * H + h) * P;
      float* dxv = dx + bl * d.x_row + h * P;
      float ddt_x = 0, da = 0;
      cpu::scan_step_back(R.data(), S + (t - t0) * PN, before(t), xv, dt, a, d.B + bc_at(d, bl, g),
                          d.C + bc_at(d, bl, g), gy, dxv, dBh + (bl * H + h) * N, dCh + (bl * H + h) * N, P, N, ddt_x,
                          da);
      // a = exp(dt A): d a / d dt = a A, d a / d A = a dt
      ddt[bl * H + h] = ddt_x + da * a * A;
      dA += static_cast<double>(da) * a * dt;
      if (d.D)  // the skip term y += D x: dx += D dy, dD += dy . x
        for (int64_t p = 0; p < P; ++p) {
          dxv[p] += d.D[h] * gy[p];
          dD += static_cast<double>(gy[p]) * xv[p];
        }
    }
  }
  dA_part[bi * H + h] = dA;
  dD_part[bi * H + h] = dD;
  if (dh0) std::copy(R.begin(), R.end(), dh0 + (bi * H + h) * PN);
}

}  // namespace

int64_t cpu_scan_starts_size(const CpuScanArgs& a) { return a.b * a.H * nc_of(a) * a.P * a.N; }

void cpu_scan_forward(const CpuScanArgs& a, float* y, float* hf, float* starts, float* nm, float* dl) {
  at::parallel_for(0, a.b * a.H, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) forward_head(a, k / a.H, k % a.H, y, hf, starts, nm, dl);
  });
}

void cpu_scan_backward(const CpuScanArgs& a, const float* starts, const float* dy, const float* dhf, float* dx,
                       float* ddt, float* dBh, float* dCh, double* dA_part, double* dD_part, float* dh0) {
  at::parallel_for(0, a.b * a.H, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k)
      backward_head(a, starts, dy, dhf, k / a.H, k % a.H, dx, ddt, dBh, dCh, dA_part, dD_part, dh0);
  });
}

namespace {

// Contiguous x [b, L, H, P], B/C [b, L, G, N] and friends as one CpuScanArgs.
CpuScanArgs args_of(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                    const torch::Tensor& C, const torch::Tensor& h0, const torch::Tensor& D) {
  CpuScanArgs a;
  a.b = x.size(0), a.L = x.size(1), a.H = x.size(2), a.P = x.size(3), a.G = B.size(2), a.N = B.size(3);
  a.x = x.data_ptr<float>(), a.x_row = a.H * a.P;
  a.B = B.data_ptr<float>(), a.C = C.data_ptr<float>(), a.bc_row = a.G * a.N;
  a.dt = dt.data_ptr<float>(), a.A = A.data_ptr<float>();
  a.h0 = h0.defined() ? h0.data_ptr<float>() : nullptr;
  a.D = D.defined() ? D.data_ptr<float>() : nullptr;
  return a;
}

torch::Tensor f32(const torch::Tensor& t) { return t.to(torch::kFloat32).contiguous(); }

struct CpuScanFn : torch::autograd::Function<CpuScanFn> {
  // -> {y [b, L, H, P], final state [b, H, P, N], norms and delta norms [b, L, H] (or [0, L, H])}
  static variable_list forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor dt, torch::Tensor A, torch::Tensor B,
                               torch::Tensor C, torch::Tensor h0, torch::Tensor D, bool norms, bool grad) {
    x = f32(x), dt = f32(dt), A = f32(A), B = f32(B), C = f32(C);
    h0 = h0.numel() > 0 ? f32(h0) : torch::Tensor();  // an empty tensor stands for "no initial state"
    D = D.numel() > 0 ? f32(D) : torch::Tensor();     // ... and for "no skip term"
    const CpuScanArgs d = args_of(x, dt, A, B, C, h0, D);
    auto y = torch::empty_like(x);
    auto hf = torch::empty({d.b, d.H, d.P, d.N}, x.options());
    auto nm = torch::empty({norms ? d.b : 0, d.L, d.H}, x.options()), dl = torch::empty_like(nm);
    // Chunk starts only when autograd will call backward (training); evaluation keeps none.
    auto starts = torch::empty({grad ? cpu_scan_starts_size(d) : 0}, x.options());
    float *yp = y.data_ptr<float>(), *hp = hf.data_ptr<float>(), *sp = grad ? starts.data_ptr<float>() : nullptr;
    float *np = norms ? nm.data_ptr<float>() : nullptr, *lp = norms ? dl.data_ptr<float>() : nullptr;
    cpu_scan_forward(d, yp, hp, sp, np, lp);
    if (grad) ctx->save_for_backward({x, dt, A, B, C, h0, starts, D});
    ctx->saved_data["has_h0"] = h0.defined();
    ctx->saved_data["has_D"] = D.defined();
    ctx->mark_non_differentiable({nm, dl});
    return {y, hf, nm, dl};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto s = ctx->get_saved_variables();
    const bool has_h0 = ctx->saved_data["has_h0"].toBool(), has_D = ctx->saved_data["has_D"].toBool();
    auto x = s[0], dt = s[1], A = s[2], B = s[3], C = s[4], starts = s[6];
    auto h0 = has_h0 ? s[5] : torch::Tensor(), D = has_D ? s[7] : torch::Tensor();
    const CpuScanArgs d = args_of(x, dt, A, B, C, h0, D);
    auto dy = grads[0].defined() ? f32(grads[0]) : torch::zeros_like(x);
    auto dhf = grads[1].defined() ? f32(grads[1]) : torch::Tensor();
    auto dx = torch::empty_like(x), ddt = torch::empty_like(dt);
    auto dBh = torch::empty({d.b, d.L, d.H, d.N}, x.options()), dCh = torch::empty_like(dBh);  // per head
    auto dA_part = torch::empty({d.b, d.H}, x.options().dtype(torch::kFloat64)), dD_part = torch::empty_like(dA_part);
    auto dh0 = has_h0 ? torch::empty_like(h0) : torch::zeros({0}, x.options());
    const float *dyp = dy.data_ptr<float>(), *dhp = dhf.defined() ? dhf.data_ptr<float>() : nullptr;
    const float* sp = starts.data_ptr<float>();
    float *dxp = dx.data_ptr<float>(), *ddtp = ddt.data_ptr<float>(), *dbp = dBh.data_ptr<float>(),
          *dcp = dCh.data_ptr<float>(), *dh0p = has_h0 ? dh0.data_ptr<float>() : nullptr;
    double *dap = dA_part.data_ptr<double>(), *ddp = dD_part.data_ptr<double>();
    cpu_scan_backward(d, sp, dyp, dhp, dxp, ddtp, dbp, dcp, dap, ddp, dh0p);
    // Heads of one group share B and C: their rows add up.  [b, L, H, N] -> [b, L, G, N]
    auto group_sum = [&](const torch::Tensor& t) { return t.view({d.b, d.L, d.G, d.H / d.G, d.N}).sum(3); };
    auto dA = dA_part.sum(0).to(torch::kFloat32);  // [H]
    auto dD = has_D ? dD_part.sum(0).to(torch::kFloat32) : torch::Tensor();  // [H]
    return {dx, ddt, dA, group_sum(dBh), group_sum(dCh), dh0, dD, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

ScanResult cpu_scan(const torch::Tensor& x, const torch::Tensor& dt, const torch::Tensor& A, const torch::Tensor& B,
                    const torch::Tensor& C, const torch::Tensor& h0, bool want_norms, const torch::Tensor& D) {
  check_scan_shapes(x, dt, A, B, C, h0);
  if (!x.device().is_cpu()) throw Error("cpu scan: inputs on " + x.device().str() + ", not the CPU");
  if (D.defined() && (D.dim() != 1 || D.size(0) != x.size(2)))
    throw Error("cpu scan: D must be [nheads] = [" + std::to_string(x.size(2)) + "]");
  auto h0_in = h0.defined() ? h0 : torch::empty({0}, x.options());
  auto D_in = D.defined() ? D : torch::empty({0}, x.options());
  bool grad = false;  // will backward run? (then the forward keeps the chunk-start states)
  if (at::GradMode::is_enabled())
    for (const auto* t : {&x, &dt, &A, &B, &C, &h0, &D}) grad = grad || (t->defined() && t->requires_grad());
  auto out = CpuScanFn::apply(x, dt, A, B, C, h0_in, D_in, want_norms, grad);
  return scan_result_of(out, want_norms);
}

}  // namespace statescope

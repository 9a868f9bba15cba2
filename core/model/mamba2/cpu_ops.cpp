// cpu_ops.cpp — conv1d + SiLU and the gated RMSNorm as autograd nodes over plain loops (cpu_ops.h).
#include "core/model/mamba2/cpu_ops.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <string>

#include "core/base/error.h"
#include "core/model/mamba2/cpu_loops.h"

namespace statescope {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void check_cpu_f32(const torch::Tensor& t, const char* what) {
  if (!t.device().is_cpu() || t.scalar_type() != torch::kFloat32)
    throw Error(std::string("cpu op: ") + what + " must be float32 on the CPU");
}

// Rows of [b, L, C] with the channel dim contiguous, viewable as b*L rows of one stride.
// Returns the row stride, copying to contiguous when the batch stride does not follow the row stride.
int64_t row_stride(torch::Tensor& t) {
  if (t.stride(2) != 1 || (t.size(0) > 1 && t.stride(0) != t.size(1) * t.stride(1))) t = t.contiguous();
  return t.size(1) > 1 || t.size(0) > 1 ? t.stride(1) : t.size(2);
}

const float* ptr_or_null(const torch::Tensor& t) { return t.defined() && t.numel() > 0 ? t.data_ptr<float>() : nullptr; }

struct ConvSiluFn : torch::autograd::Function<ConvSiluFn> {
  // xBC [b, L, C], w [C, 1, K], bias [C] or [0], conv0 [b, C, K-1] or [0] -> {out [b, L, C], fin [b, C, K-1]}
  static variable_list forward(AutogradContext* ctx, torch::Tensor xBC, torch::Tensor w, torch::Tensor bias,
                               torch::Tensor conv0) {
    const int64_t b = xBC.size(0), L = xBC.size(1), C = xBC.size(2), K = w.size(2);
    const int64_t rs = row_stride(xBC);
    w = w.contiguous(), bias = bias.contiguous(), conv0 = conv0.contiguous();
    auto out = torch::empty({b, L, C}, xBC.options());
    auto fin = torch::empty({b, C, K - 1}, xBC.options());
    const float *in = xBC.data_ptr<float>(), *wp = w.data_ptr<float>(), *bp = ptr_or_null(bias),
                *c0 = ptr_or_null(conv0);
    float *op = out.data_ptr<float>(), *fp = fin.data_ptr<float>();
    at::parallel_for(0, b, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t bi = lo; bi < hi; ++bi) {
        const float* inb = in + bi * L * rs;
        const float* c0b = c0 ? c0 + bi * C * (K - 1) : nullptr;
        cpu::conv_silu(inb, rs, c0b, wp, bp, op + bi * L * C, L, C, K);
        cpu::conv_final_state(inb, rs, c0b, fp + bi * C * (K - 1), L, C, K);
      }
    });
    ctx->save_for_backward({xBC, w, bias, conv0});
    return {out, fin};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto s = ctx->get_saved_variables();
    auto xBC = s[0], w = s[1], bias = s[2], conv0 = s[3];
    const int64_t b = xBC.size(0), L = xBC.size(1), C = xBC.size(2), K = w.size(2);
    const int64_t rs = row_stride(xBC);
    auto dout = grads[0].defined() ? grads[0].contiguous() : torch::zeros({b, L, C}, xBC.options());
    auto dfin = grads[1].defined() ? grads[1].contiguous() : torch::Tensor();
    auto dx = torch::empty({b, L, C}, xBC.options());
    auto dconv0 = conv0.numel() > 0 ? torch::empty_like(conv0) : torch::zeros({0}, xBC.options());
    auto dw_part = torch::zeros({b, C, 1, K}, xBC.options()), db_part = torch::zeros({b, C}, xBC.options());
    const float *in = xBC.data_ptr<float>(), *wp = w.data_ptr<float>(), *bp = ptr_or_null(bias),
                *c0 = ptr_or_null(conv0), *gp = dout.data_ptr<float>(), *gf = ptr_or_null(dfin);
    float *dxp = dx.data_ptr<float>(), *dc0 = conv0.numel() > 0 ? dconv0.data_ptr<float>() : nullptr,
          *dwp = dw_part.data_ptr<float>(), *dbp = db_part.data_ptr<float>();
    at::parallel_for(0, b, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t bi = lo; bi < hi; ++bi)
        cpu::conv_silu_back(in + bi * L * rs, rs, c0 ? c0 + bi * C * (K - 1) : nullptr, wp, bp, gp + bi * L * C,
                            gf ? gf + bi * C * (K - 1) : nullptr, dxp + bi * L * C, C,
                            dc0 ? dc0 + bi * C * (K - 1) : nullptr, dwp + bi * C * K, dbp + bi * C, L, C, K);
    });
    auto dbias = bias.numel() > 0 ? db_part.sum(0) : torch::Tensor();
    return {dx, dw_part.sum(0), dbias, conv0.numel() > 0 ? dconv0 : torch::Tensor()};
  }
};

struct GatedNormFn : torch::autograd::Function<GatedNormFn> {
  // y [b, L, D], z [b, L, D], w [D] -> [b, L, D]
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor y, torch::Tensor z, torch::Tensor w, int64_t ng,
                               double eps) {
    y = y.contiguous(), w = w.contiguous();
    const int64_t zs = row_stride(z);
    const int64_t rows = y.size(0) * y.size(1), D = y.size(2);
    auto out = torch::empty_like(y);
    auto rstd = torch::empty({rows, ng}, y.options());
    const float *yp = y.data_ptr<float>(), *zp = z.data_ptr<float>(), *wp = w.data_ptr<float>();
    float *op = out.data_ptr<float>(), *rp = rstd.data_ptr<float>();
    at::parallel_for(0, rows, 256, [&](int64_t lo, int64_t hi) {
      cpu::gated_norm(yp + lo * D, zp + lo * zs, zs, wp, op + lo * D, rp + lo * ng, hi - lo, D, ng,
                      static_cast<float>(eps));
    });
    ctx->save_for_backward({y, z, w, rstd});
    ctx->saved_data["ng"] = ng;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto s = ctx->get_saved_variables();
    auto y = s[0], z = s[1], w = s[2], rstd = s[3];
    const int64_t ng = ctx->saved_data["ng"].toInt();
    const int64_t zs = row_stride(z);
    const int64_t rows = y.size(0) * y.size(1), D = y.size(2);
    auto dout = grads[0].contiguous();
    auto dy = torch::empty_like(y), dz = torch::empty_like(y);
    const int64_t blocks = (rows + 255) / 256;
    auto dw_part = torch::zeros({blocks, D}, y.options());
    const float *yp = y.data_ptr<float>(), *zp = z.data_ptr<float>(), *wp = w.data_ptr<float>(),
                *rp = rstd.data_ptr<float>(), *gp = dout.data_ptr<float>();
    float *dyp = dy.data_ptr<float>(), *dzp = dz.data_ptr<float>(), *dwp = dw_part.data_ptr<float>();
    at::parallel_for(0, blocks, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) {
        const int64_t r0 = k * 256, n = std::min<int64_t>(256, rows - r0);
        cpu::gated_norm_back(yp + r0 * D, zp + r0 * zs, zs, wp, rp + r0 * ng, gp + r0 * D, dyp + r0 * D, dzp + r0 * D, D,
                             dwp + k * D, n, D, ng);
      }
    });
    return {dy, dz, dw_part.sum(0), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

std::pair<torch::Tensor, torch::Tensor> cpu_conv1d_silu(const torch::Tensor& xBC, const torch::Tensor& w,
                                                        const torch::Tensor& bias, const torch::Tensor& conv0) {
  check_cpu_f32(xBC, "conv input");
  check_cpu_f32(w, "conv weight");
  const int64_t b = xBC.size(0), C = xBC.size(2), K = w.size(2);
  if (xBC.dim() != 3 || w.dim() != 3 || w.size(0) != C || w.size(1) != 1 || K < 1)
    throw Error("cpu conv: expected input [b, L, C] and weight [C, 1, K]");
  if (bias.defined()) check_cpu_f32(bias, "conv bias");
  if (conv0.defined()) {
    check_cpu_f32(conv0, "conv state");
    if (conv0.dim() != 3 || conv0.size(0) != b || conv0.size(1) != C || conv0.size(2) != K - 1)
      throw Error("cpu conv: the conv state must be [b, C, K-1]");
  }
  auto empty = torch::zeros({0}, xBC.options());
  auto out = ConvSiluFn::apply(xBC, w, bias.defined() ? bias : empty, conv0.defined() ? conv0 : empty);
  return {out[0], out[1]};
}

torch::Tensor cpu_gated_rms_norm(const torch::Tensor& y, const torch::Tensor& z, const torch::Tensor& w, int64_t ng,
                                 double eps) {
  check_cpu_f32(y, "norm input");
  check_cpu_f32(z, "gate");
  check_cpu_f32(w, "norm weight");
  if (y.dim() != 3 || z.sizes() != y.sizes() || w.dim() != 1 || w.size(0) != y.size(2) || ng < 1 || y.size(2) % ng)
    throw Error("cpu norm: expected y, z [b, L, D], w [D] and D divisible by the group count");
  return GatedNormFn::apply(y, z, w, ng, eps);
}

}  // namespace statescope

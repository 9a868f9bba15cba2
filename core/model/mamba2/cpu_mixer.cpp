// cpu_mixer.cpp — the mixer between its projections as one autograd node (see cpu_mixer.h).
#include "core/model/mamba2/cpu_mixer.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <torch/autograd.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/model/mamba2/cpu_loops.h"
#include "core/model/mamba2/cpu_scan.h"

namespace statescope {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The conv + SiLU (and its backward) split over (sequence, block of kConvBlock channels), so a batch of
// one still feeds every thread (130m: 1792 channels, 28 blocks). Channels are independent and a block
// starts at a multiple of 8 (the loops' vector width), so the numbers do not depend on the split.
constexpr int64_t kConvBlock = 64;

// f(sequence, first channel, channels) for every (sequence, channel block), on the intra-op threads.
template <class F>
void for_each_conv_block(int64_t b, int64_t channels, const F& f) {
  const int64_t nblk = (channels + kConvBlock - 1) / kConvBlock;
  at::parallel_for(0, b * nblk, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t task = lo; task < hi; ++task) {
      const int64_t ch = task % nblk * kConvBlock;
      f(task / nblk, ch, std::min(kConvBlock, channels - ch));
    }
  });
}

// Sizes of one call. Rows of zxbcdt (R wide): [z: Di | xBC: Cd | dt_raw: H].
struct Sizes {
  int64_t b, L, R, Di, Cd, K;
  int64_t xbc_col() const { return Di; }
  int64_t dt_col() const { return Di + Cd; }
};

Sizes sizes_of(const torch::Tensor& zx, const torch::Tensor& conv_w, const CpuMixerDims& d) {
  const int64_t Di = d.H * d.P;
  return {zx.size(0), zx.size(1), zx.size(2), Di, Di + 2 * d.G * d.N, conv_w.size(2)};
}

// The scan reads x, B and C straight from the conv output xbc [b, L, Cd].
CpuScanArgs scan_args(const Sizes& s, const CpuMixerDims& d, const float* xbc, const float* dt, const float* A,
                      const float* h0, const float* D) {
  CpuScanArgs a;
  a.b = s.b, a.L = s.L, a.H = d.H, a.P = d.P, a.G = d.G, a.N = d.N;
  a.x = xbc, a.x_row = s.Cd;
  a.B = xbc + s.Di, a.C = xbc + s.Di + d.G * d.N, a.bc_row = s.Cd;
  a.dt = dt, a.A = A, a.h0 = h0, a.D = D;
  return a;
}

// softplus as ATen computes it in float32 (beta 1, threshold 20), and its derivative.
inline float softplus(float v) { return v > 20.0f ? v : std::log1p(std::exp(v)); }
inline float softplus_grad(float v, float g) {
  if (v > 20.0f) return g;
  const float z = std::exp(v);
  return g * z / (z + 1.0f);
}

const float* ptr_or_null(const torch::Tensor& t) { return t.defined() && t.numel() > 0 ? t.data_ptr<float>() : nullptr; }
torch::Tensor f32(const torch::Tensor& t) { return t.to(torch::kFloat32).contiguous(); }

struct CpuMixerFn : torch::autograd::Function<CpuMixerFn> {
  // -> {out [b, L, Di], ssm [b, H, P, N], conv [b, Cd, K-1], norms and delta norms [b, L, H] (or [0, L, H])}
  static variable_list forward(AutogradContext* ctx, torch::Tensor zx, torch::Tensor conv_w, torch::Tensor conv_b,
                               torch::Tensor dt_bias, torch::Tensor A_log, torch::Tensor D, torch::Tensor norm_w,
                               torch::Tensor conv0, torch::Tensor h0, const CpuMixerDims& d, bool norms, bool grad) {
    zx = f32(zx), conv_w = f32(conv_w), conv_b = f32(conv_b), dt_bias = f32(dt_bias), D = f32(D);
    norm_w = f32(norm_w), conv0 = f32(conv0), h0 = f32(h0);
    const Sizes s = sizes_of(zx, conv_w, d);
    const int64_t H = d.H, K = s.K, Km = K - 1, rows = s.b * s.L;
    auto opt = zx.options();
    const float* zp = zx.data_ptr<float>();

    // conv + SiLU over the xBC columns: xbc [b, L, Cd]; the final conv state [b, Cd, K-1]
    auto xbc = torch::empty({s.b, s.L, s.Cd}, opt), conv_fin = torch::empty({s.b, s.Cd, Km}, opt);
    const float *wp = conv_w.data_ptr<float>(), *bp = ptr_or_null(conv_b), *c0 = ptr_or_null(conv0);
    float *xp = xbc.data_ptr<float>(), *cf = conv_fin.data_ptr<float>();
    for_each_conv_block(s.b, s.Cd, [&](int64_t bi, int64_t ch, int64_t n) {
      const float* in = zp + bi * s.L * s.R + s.xbc_col() + ch;
      const float* c0b = c0 ? c0 + (bi * s.Cd + ch) * Km : nullptr;
      cpu::conv_silu(in, s.R, c0b, wp + ch * K, bp ? bp + ch : nullptr, xp + bi * s.L * s.Cd + ch, s.L, n, K, s.Cd);
      cpu::conv_final_state(in, s.R, c0b, cf + (bi * s.Cd + ch) * Km, s.L, n, K);
    });

    // dt [b L, H] = softplus(dt_raw + dt_bias), clamped; A [H] = -exp(A_log)
    auto dt = torch::empty({rows, H}, opt);
    const float* dbp = dt_bias.data_ptr<float>();
    float* dtp = dt.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t h = 0; h < H; ++h) {
        float v = softplus(zp[r * s.R + s.dt_col() + h] + dbp[h]);
        if (d.clamp_dt) v = std::min(std::max(v, static_cast<float>(d.dt_lo)), static_cast<float>(d.dt_hi));
        dtp[r * H + h] = v;
      }
    auto A = -torch::exp(A_log.detach().to(torch::kFloat32));  // [H]

    // the scan: y [b, L, Di] with D x
    const CpuScanArgs sa = scan_args(s, d, xp, dtp, A.data_ptr<float>(), ptr_or_null(h0), D.data_ptr<float>());
    auto y = torch::empty({s.b, s.L, s.Di}, opt), hf = torch::empty({s.b, H, d.P, d.N}, opt);
    auto nm = torch::empty({norms ? s.b : 0, s.L, H}, opt), dl = torch::empty_like(nm);
    auto starts = torch::empty({grad ? cpu_scan_starts_size(sa) : 0}, opt);
    cpu_scan_forward(sa, y.data_ptr<float>(), hf.data_ptr<float>(), grad ? starts.data_ptr<float>() : nullptr,
                     norms ? nm.data_ptr<float>() : nullptr, norms && d.delta_norms ? dl.data_ptr<float>() : nullptr);

    // gate with z, then RMSNorm: out [b, L, Di]
    const int64_t ng = d.norm_groups;
    auto out = torch::empty({s.b, s.L, s.Di}, opt), rstd = torch::empty({rows, ng}, opt);
    const float *yp = y.data_ptr<float>(), *nwp = norm_w.data_ptr<float>();
    float *op = out.data_ptr<float>(), *rp = rstd.data_ptr<float>();
    at::parallel_for(0, rows, 256, [&](int64_t lo, int64_t hi) {
      cpu::gated_norm(yp + lo * s.Di, zp + lo * s.R, s.R, nwp, op + lo * s.Di, rp + lo * ng, hi - lo, s.Di, ng,
                      static_cast<float>(d.norm_eps));
    });

    if (grad) ctx->save_for_backward({zx, conv_w, conv_b, dt_bias, A, D, norm_w, conv0, h0, xbc, dt, y, rstd, starts});
    ctx->saved_data["dims"] = std::vector<int64_t>{d.H, d.P, d.G, d.N, d.norm_groups, d.clamp_dt};
    ctx->saved_data["dt_limits"] = std::vector<double>{d.dt_lo, d.dt_hi};
    ctx->mark_non_differentiable({nm, dl});
    return {out, hf, conv_fin, nm, dl};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto sv = ctx->get_saved_variables();
    auto zx = sv[0], conv_w = sv[1], conv_b = sv[2], dt_bias = sv[3], A = sv[4], D = sv[5], norm_w = sv[6];
    auto conv0 = sv[7], h0 = sv[8], xbc = sv[9], dt = sv[10], y = sv[11], rstd = sv[12], starts = sv[13];
    const auto di = ctx->saved_data["dims"].toIntVector();
    const auto lim = ctx->saved_data["dt_limits"].toDoubleVector();
    CpuMixerDims d;
    d.H = di[0], d.P = di[1], d.G = di[2], d.N = di[3], d.norm_groups = di[4], d.clamp_dt = di[5] != 0;
    d.dt_lo = lim[0], d.dt_hi = lim[1];
    const Sizes s = sizes_of(zx, conv_w, d);
    const int64_t H = d.H, N = d.N, G = d.G, K = s.K, Km = K - 1, rows = s.b * s.L, ng = d.norm_groups;
    auto opt = zx.options();
    const float* zp = zx.data_ptr<float>();
    auto dout = grads[0].defined() ? f32(grads[0]) : torch::zeros({s.b, s.L, s.Di}, opt);
    auto dhf = grads[1].defined() ? f32(grads[1]) : torch::Tensor();
    auto dconv_fin = grads[2].defined() ? f32(grads[2]) : torch::Tensor();
    auto dzx = torch::empty({s.b, s.L, s.R}, opt);  // every column written below
    float* dzp = dzx.data_ptr<float>();

    // gate + norm: dy [b, L, Di], dz into dzx's z columns, dnorm_w
    auto dy = torch::empty({s.b, s.L, s.Di}, opt);
    const int64_t blocks = (rows + 255) / 256;
    auto dnw_part = torch::zeros({blocks, s.Di}, opt);
    {
      const float *yp = y.data_ptr<float>(), *wp = norm_w.data_ptr<float>(), *rp = rstd.data_ptr<float>(),
                  *gp = dout.data_ptr<float>();
      float *dyp = dy.data_ptr<float>(), *dwp = dnw_part.data_ptr<float>();
      at::parallel_for(0, blocks, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t k = lo; k < hi; ++k) {
          const int64_t r0 = k * 256, n = std::min<int64_t>(256, rows - r0);
          cpu::gated_norm_back(yp + r0 * s.Di, zp + r0 * s.R, s.R, wp, rp + r0 * ng, gp + r0 * s.Di, dyp + r0 * s.Di,
                               dzp + r0 * s.R, s.R, dwp + k * s.Di, n, s.Di, ng);
        }
      });
    }

    // the scan: dx into dxbc's x columns, per-head dB/dC summed into its B and C columns, ddt, dA, dD, dh0
    const float* xp = xbc.data_ptr<float>();
    const CpuScanArgs sa =
        scan_args(s, d, xp, dt.data_ptr<float>(), A.data_ptr<float>(), ptr_or_null(h0), D.data_ptr<float>());
    auto dxbc = torch::empty({s.b, s.L, s.Cd}, opt), ddt = torch::empty({rows, H}, opt);
    auto dBh = torch::empty({rows, H, N}, opt), dCh = torch::empty_like(dBh);
    auto dA_part = torch::empty({s.b, H}, opt.dtype(torch::kFloat64)), dD_part = torch::empty_like(dA_part);
    auto dh0 = h0.numel() > 0 ? torch::empty_like(h0) : torch::Tensor();
    float* dxp = dxbc.data_ptr<float>();
    cpu_scan_backward(sa, starts.data_ptr<float>(), dy.data_ptr<float>(), ptr_or_null(dhf), dxp,
                      ddt.data_ptr<float>(), dBh.data_ptr<float>(), dCh.data_ptr<float>(), dA_part.data_ptr<double>(),
                      dD_part.data_ptr<double>(), dh0.defined() ? dh0.data_ptr<float>() : nullptr);
    {  // heads of one group share B and C: their rows add up
      const float *bh = dBh.data_ptr<float>(), *ch = dCh.data_ptr<float>();
      const int64_t hg = H / G;
      at::parallel_for(0, rows, 64, [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r)
          for (int64_t g = 0; g < G; ++g) {
            float *db = dxp + r * s.Cd + s.Di + g * N, *dc = db + G * N;
            const float *sb = bh + (r * H + g * hg) * N, *sc = ch + (r * H + g * hg) * N;
            for (int64_t n = 0; n < N; ++n) db[n] = sb[n], dc[n] = sc[n];
            for (int64_t j = 1; j < hg; ++j)
              for (int64_t n = 0; n < N; ++n) db[n] += sb[j * N + n], dc[n] += sc[j * N + n];
          }
      });
    }

    // dt = clamp(softplus(dt_raw + dt_bias)): through the clamp (no gradient where it clamped) and
    // softplus, into dzx's dt columns; dt_bias gets the sum over rows.
    std::vector<double> ddb(H, 0.0);
    {
      const float *gp = ddt.data_ptr<float>(), *dbp = dt_bias.data_ptr<float>();
      const float lo = static_cast<float>(d.dt_lo), hi = static_cast<float>(d.dt_hi);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t h = 0; h < H; ++h) {
          const float v = zp[r * s.R + s.dt_col() + h] + dbp[h];
          float g = gp[r * H + h];
          if (d.clamp_dt) {
            const float sp = softplus(v);
            if (!(sp >= lo && sp <= hi)) g = 0.0f;
          }
          g = softplus_grad(v, g);
          dzp[r * s.R + s.dt_col() + h] = g;
          ddb[h] += g;
        }
    }
    auto ddt_bias = torch::empty({H}, opt);
    for (int64_t h = 0; h < H; ++h) ddt_bias.data_ptr<float>()[h] = static_cast<float>(ddb[h]);
    auto dA_log = dA_part.sum(0).to(torch::kFloat32) * A;  // A = -exp(A_log): dA/dA_log = A
    auto dD = dD_part.sum(0).to(torch::kFloat32);

    // conv + SiLU: from dxbc into dzx's xBC columns, dconv0, dconv_w, dconv_b
    auto dw_part = torch::zeros({s.b, s.Cd, 1, K}, opt), db_part = torch::zeros({s.b, s.Cd}, opt);
    auto dconv0 = conv0.numel() > 0 ? torch::empty_like(conv0) : torch::Tensor();
    {
      const float *wp = conv_w.data_ptr<float>(), *bp = ptr_or_null(conv_b), *c0 = ptr_or_null(conv0),
                  *gf = ptr_or_null(dconv_fin);
      float *dwp = dw_part.data_ptr<float>(), *dbp = db_part.data_ptr<float>(),
            *dc0 = dconv0.defined() ? dconv0.data_ptr<float>() : nullptr;
      for_each_conv_block(s.b, s.Cd, [&](int64_t bi, int64_t ch, int64_t n) {
        const int64_t cs = (bi * s.Cd + ch) * Km;  // this block's conv-state entries
        cpu::conv_silu_back(zp + bi * s.L * s.R + s.xbc_col() + ch, s.R, c0 ? c0 + cs : nullptr, wp + ch * K,
                            bp ? bp + ch : nullptr, dxp + bi * s.L * s.Cd + ch, gf ? gf + cs : nullptr,
                            dzp + bi * s.L * s.R + s.xbc_col() + ch, s.R, dc0 ? dc0 + cs : nullptr,
                            dwp + (bi * s.Cd + ch) * K, dbp + bi * s.Cd + ch, s.L, n, K, s.Cd);
      });
    }
    auto dconv_b = conv_b.numel() > 0 ? db_part.sum(0) : torch::Tensor();
    return {dzx,     dw_part.sum(0), dconv_b,         ddt_bias,        dA_log,          dD,
            dnw_part.sum(0), dconv0, dh0, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

void check(const torch::Tensor& t, const std::string& what, std::vector<int64_t> shape) {
  if (!t.device().is_cpu() || t.scalar_type() != torch::kFloat32)
    throw Error("cpu mixer: " + what + " must be float32 on the CPU");
  if (t.sizes().vec() != shape) {
    std::string s;
    for (auto v : shape) s += (s.empty() ? "" : ", ") + std::to_string(v);
    throw Error("cpu mixer: " + what + " must be [" + s + "]");
  }
}

}  // namespace

CpuMixerOut cpu_mixer_core(const torch::Tensor& zxbcdt, const torch::Tensor& conv_w, const torch::Tensor& conv_b,
                           const torch::Tensor& dt_bias, const torch::Tensor& A_log, const torch::Tensor& D,
                           const torch::Tensor& norm_w, const torch::Tensor& conv0, const torch::Tensor& h0,
                           const CpuMixerDims& d, bool want_norms) {
  if (zxbcdt.dim() != 3) throw Error("cpu mixer: the in-projection output must be [b, L, R]");
  if (d.H < 1 || d.P < 1 || d.N < 1 || d.G < 1 || d.H % d.G || d.norm_groups < 1 || (d.H * d.P) % d.norm_groups)
    throw Error("cpu mixer: inconsistent sizes (heads, headdim, groups, d_state, norm groups)");
  const int64_t b = zxbcdt.size(0), L = zxbcdt.size(1), Di = d.H * d.P, Cd = Di + 2 * d.G * d.N;
  if (conv_w.dim() != 3 || conv_w.size(2) < 1) throw Error("cpu mixer: conv weight must be [conv_dim, 1, K]");
  const int64_t K = conv_w.size(2);
  check(zxbcdt, "in-projection output", {b, L, Di + Cd + d.H});
  check(conv_w, "conv weight", {Cd, 1, K});
  if (conv_b.defined()) check(conv_b, "conv bias", {Cd});
  check(dt_bias, "dt_bias", {d.H});
  check(A_log, "A_log", {d.H});
  check(D, "D", {d.H});
  check(norm_w, "norm weight", {Di});
  if (conv0.defined()) check(conv0, "conv state", {b, Cd, K - 1});
  if (h0.defined()) check(h0, "SSM state", {b, d.H, d.P, d.N});
  auto empty = torch::empty({0}, zxbcdt.options());
  bool grad = false;  // will backward run? (then the forward keeps what it needs)
  if (at::GradMode::is_enabled())
    for (const auto* t : {&zxbcdt, &conv_w, &conv_b, &dt_bias, &A_log, &D, &norm_w, &conv0, &h0})
      grad = grad || (t->defined() && t->requires_grad());
  auto r = CpuMixerFn::apply(zxbcdt, conv_w, conv_b.defined() ? conv_b : empty, dt_bias, A_log, D, norm_w,
                             conv0.defined() ? conv0 : empty, h0.defined() ? h0 : empty, d, want_norms, grad);
  CpuMixerOut o{r[0], r[1], r[2], {}, {}};
  if (want_norms) o.state_norm = r[3], o.delta_norm = r[4];
  return o;
}

}  // namespace statescope

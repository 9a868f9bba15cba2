// mamba2_model.cpp — Mamba-2 forward (DESIGN.md §1), initialisation and input checks.
#include "core/model/mamba2_model.h"

#include <ATen/autocast_mode.h>

#include <optional>

#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "core/base/error.h"
#include "core/model/fused_infer.h"
#include "core/model/cpu_mixer.h"
#include "core/model/fused_scan.h"
#include "core/model/ssd_scan.h"

namespace statescope {
namespace {

namespace F = torch::nn::functional;

std::string shape_str(const torch::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

// bf16 autocast on one device type for the lifetime of the object (restores the previous setting).
class AutocastScope {
 public:
  explicit AutocastScope(c10::DeviceType d)
      : d_(d), was_on_(at::autocast::is_autocast_enabled(d)), was_(at::autocast::get_autocast_dtype(d)) {
    at::autocast::set_autocast_enabled(d_, true);
    at::autocast::set_autocast_dtype(d_, at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(d_, was_on_);
    at::autocast::set_autocast_dtype(d_, was_);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType d_;
  bool was_on_;
  at::ScalarType was_;
};

// Computation dtype for norms and the SSM parameters: at least float32 (bf16/f16 models keep A, dt,
// the state and normalisation statistics in fp32), float64 stays float64.
torch::Dtype at_least_f32(torch::Dtype d) { return d == torch::kFloat64 ? torch::kFloat64 : torch::kFloat32; }

// x [..., C] -> x / rms(x) * w, statistics in >= fp32; returns x's dtype.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  auto xf = x.to(at_least_f32(x.scalar_type()));
  auto y = xf * torch::rsqrt(xf.square().mean(-1, /*keepdim=*/true) + eps);
  return (y * w.to(y.scalar_type())).to(x.scalar_type());
}

}  // namespace

ModelState detach_state(const ModelState& s) {
  ModelState out;
  out.reserve(s.size());
  for (auto& l : s) out.push_back({l.ssm.defined() ? l.ssm.detach() : l.ssm,
                                   l.conv.defined() ? l.conv.detach() : l.conv});
  return out;
}

ParamHolderImpl::ParamHolderImpl(std::vector<int64_t> weight_shape, bool with_bias, int64_t bias_size) {
  weight = register_parameter("weight", torch::empty(weight_shape));
  if (with_bias) bias = register_parameter("bias", torch::zeros({bias_size}));
}

Mamba2MixerImpl::Mamba2MixerImpl(const Mamba2Config& c) : cfg(c) {
  const int64_t H = c.nheads();
  in_proj = register_module("in_proj", ParamHolder(std::vector<int64_t>{c.in_proj_rows(), c.d_model},
                                                   c.proj_bias, c.in_proj_rows()));
  conv1d = register_module("conv1d", ParamHolder(std::vector<int64_t>{c.conv_dim(), 1, c.d_conv},
                                                 c.conv_bias, c.conv_dim()));
  dt_bias = register_parameter("dt_bias", torch::zeros({H}));
  A_log = register_parameter("A_log", torch::zeros({H}));
  D = register_parameter("D", torch::ones({H}));
  norm = register_module("norm", ParamHolder(std::vector<int64_t>{c.d_inner()}, false));
  out_proj = register_module("out_proj", ParamHolder(std::vector<int64_t>{c.d_model, c.d_inner()},
                                                     c.proj_bias, c.d_model));
}

namespace {

// The chunked-kernel path: fp32 state; CUDA kernels on a GPU (when built), the kernels' CPU twins on
// the CPU only when asked (tests), else ATen.
// On a GPU, asking for the kernels in a build without them is an error, never a quiet fall back to
// ATen (a run would be recorded as fused that never was).
bool fused_scan_usable(const torch::Tensor& x, torch::Dtype sdt, bool cpu_twins) {
  if (x.is_cuda()) require_kernels_for(x, "scan 'fused'");
  if (sdt != torch::kFloat32) return false;
  return x.is_cuda() || cpu_twins;
}

}  // namespace

torch::Tensor Mamba2MixerImpl::forward(const torch::Tensor& u, const LayerState* init,
                                       const ForwardOptions& opt, LayerState& fin,
                                       torch::Tensor* norm_per_head, torch::Tensor* delta_norm) {
  const auto& c = cfg;
  const int64_t b = u.size(0), L = u.size(1);
  const int64_t H = c.nheads(), P = c.headdim, G = c.ngroups, N = c.d_state, Di = c.d_inner();
  const int64_t K = c.d_conv, Cd = c.conv_dim();

  // 1. In-projection, split [z | xBC | dt].
  auto zxbcdt = F::linear(u, in_proj->weight, in_proj->bias);  // [b, L, in_proj_rows]
  auto z = zxbcdt.narrow(-1, 0, Di);                            // [b, L, d_inner]
  auto xBC = zxbcdt.narrow(-1, Di, Cd);                         // [b, L, conv_dim]
  auto dt_raw = zxbcdt.narrow(-1, Di + Cd, H);                  // [b, L, H]

  // Inference kernels (conv1d with state, single-token step) for no-grad fp32 Fused forwards.
  const auto sdt = at_least_f32(u.scalar_type());
  const bool kernels_infer = opt.scan == ScanImpl::Fused && L > 0 && !torch::GradMode::is_enabled() &&
                             fused_scan_usable(u, sdt, opt.cpu_twins);
  // The CPU fast path (fp32): everything between the projections as one node of plain loops.
  const bool loops = opt.scan == ScanImpl::Fused && u.device().is_cpu() && !opt.cpu_twins &&
                     zxbcdt.scalar_type() == torch::kFloat32 && conv1d->weight.scalar_type() == torch::kFloat32;
  if (loops) {
    CpuMixerDims md;
    md.H = H, md.P = P, md.G = G, md.N = N, md.norm_groups = c.norm_per_group ? G : 1, md.norm_eps = c.norm_eps;
    md.clamp_dt = c.has_dt_limit(), md.dt_lo = c.dt_limit_lo, md.dt_hi = c.dt_limit_hi;
    auto conv0 = init && init->conv.defined() ? init->conv.to(torch::kFloat32) : torch::Tensor();
    auto h0 = init && init->ssm.defined() ? init->ssm.to(torch::kFloat32) : torch::Tensor();
    auto m = cpu_mixer_core(zxbcdt, conv1d->weight, conv1d->bias, dt_bias, A_log, D, norm->weight, conv0, h0, md,
                            norm_per_head != nullptr);
    fin.conv = m.conv;                                          // [b, conv_dim, K-1]
    fin.ssm = m.ssm;                                            // [b, H, P, N]
    if (norm_per_head) *norm_per_head = m.state_norm;           // [b, L, H]
    if (norm_per_head && delta_norm) *delta_norm = m.delta_norm.square().sum(-1).sqrt();  // [b, L]
    return F::linear(m.out, out_proj->weight, out_proj->bias);  // [b, L, d_model]
  }

  // 2. Causal depthwise conv from the initial conv state (zeros when none).
  torch::Tensor xbc;                                            // [b, L, conv_dim] after SiLU
  if (kernels_infer) {
    torch::Tensor conv1;
    xbc = fused_conv1d_silu(xBC, conv1d->weight, conv1d->bias, init ? init->conv : torch::Tensor(), conv1)
              .to(u.scalar_type());
    fin.conv = conv1.to(u.scalar_type());                       // [b, conv_dim, K-1]
  } else {
    auto conv0 = (init && init->conv.defined()) ? init->conv.to(u.scalar_type())
                                                : torch::zeros({b, Cd, K - 1}, u.options());
    auto conv_in = torch::cat({conv0, xBC.transpose(1, 2)}, 2);   // [b, conv_dim, K-1+L]
    fin.conv = conv_in.narrow(2, L, K - 1);                       // [b, conv_dim, K-1] newest K-1 inputs
    auto conv_out = L == 0 ? torch::zeros({b, Cd, 0}, u.options())  // conv1d refuses an input shorter than K
                           : F::conv1d(conv_in, conv1d->weight,
                                       F::Conv1dFuncOptions().bias(conv1d->bias).groups(Cd));  // [b, conv_dim, L]
    xbc = F::silu(conv_out).transpose(1, 2);                      // [b, L, conv_dim]
  }

  // 3. Split; the SSM works in >= fp32.
  auto x = xbc.narrow(-1, 0, Di).reshape({b, L, H, P});         // [b, L, H, P]
  auto Bm = xbc.narrow(-1, Di, G * N).reshape({b, L, G, N});    // [b, L, G, N]
  auto Cm = xbc.narrow(-1, Di + G * N, G * N).reshape({b, L, G, N});

  // 4. dt = softplus(dt_raw + dt_bias), clamped to dt_limit after softplus when a limit is set
  // (clamp has zero gradient where it clamps). A = -exp(A_log).
  auto dt = F::softplus(dt_raw.to(sdt) + dt_bias.to(sdt));     // [b, L, H]
  if (c.has_dt_limit()) dt = torch::clamp(dt, c.dt_limit_lo, c.dt_limit_hi);
  auto A = -torch::exp(A_log.to(sdt));                          // [H]

  // 5. The scan.
  torch::Tensor h0 = (init && init->ssm.defined()) ? init->ssm.to(sdt) : torch::Tensor();
  const int64_t Q = opt.chunk_size > 0 ? opt.chunk_size : c.chunk_size;
  const bool norms = norm_per_head != nullptr;
  ScanResult s;
  const bool step = kernels_infer && L == 1;                    // decoding: the step kernel adds D x itself
  if (step)
    s = fused_step(x, dt, A, Bm, Cm, D, h0, norms);
  else if (opt.scan == ScanImpl::Fused && fused_scan_usable(x, sdt, opt.cpu_twins))
    s = fused_scan(x.to(sdt), dt, A, Bm.to(sdt), Cm.to(sdt), h0, Q, norms);
  else if (opt.scan == ScanImpl::Sequential)
    s = ssd_scan_sequential(x.to(sdt), dt, A, Bm.to(sdt), Cm.to(sdt), h0, norms);
  else
    s = ssd_scan_chunked(x.to(sdt), dt, A, Bm.to(sdt), Cm.to(sdt), h0, Q, norms);
  fin.ssm = s.final_state;                                      // [b, H, P, N]
  if (norms) *norm_per_head = s.state_norm;                     // [b, L, H]
  if (norms && delta_norm) *delta_norm = s.delta_norm.square().sum(-1).sqrt();  // [b, L]
  auto y = step ? s.y : s.y + x.to(sdt) * D.to(sdt).view({1, 1, H, 1});  // [b, L, H, P]
  y = y.reshape({b, L, Di}).to(u.scalar_type());

  // 6. Gate, then RMSNorm (per group as mamba_ssm does, or over all of d_inner as HF does).
  const int64_t ng = c.norm_per_group ? G : 1;
  auto g = y * F::silu(z);                                      // [b, L, d_inner]
  auto gn = rms_norm(g.reshape({b, L, ng, Di / ng}), norm->weight.view({ng, Di / ng}), c.norm_eps).reshape({b, L, Di});
  return F::linear(gn, out_proj->weight, out_proj->bias);      // [b, L, d_model]
}

Mamba2BlockImpl::Mamba2BlockImpl(const Mamba2Config& c) {
  norm = register_module("norm", ParamHolder(std::vector<int64_t>{c.d_model}, false));
  mixer = register_module("mixer", Mamba2Mixer(c));
}

Mamba2LMImpl::Mamba2LMImpl(const Mamba2Config& c) : cfg_(c) {
  c.validate("Mamba2LM config");
  auto backbone = register_module("backbone", std::make_shared<torch::nn::Module>());
  backbone_ = backbone.get();
  embeddings_ = backbone->register_module("embeddings",
                                          ParamHolder(std::vector<int64_t>{c.vocab_size, c.d_model}, false));
  auto list = backbone->register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.n_layer; ++i) {
    layers_.push_back(Mamba2Block(c));
    list->push_back(layers_.back());
  }
  norm_f_ = backbone->register_module("norm_f", ParamHolder(std::vector<int64_t>{c.d_model}, false));
  if (!c.tie_embeddings)
    lm_head_ = register_module("lm_head", ParamHolder(std::vector<int64_t>{c.vocab_size, c.d_model}, false));
  reset_parameters(/*seed=*/0);
}

torch::Tensor Mamba2LMImpl::output_weight() const {
  return cfg_.tie_embeddings ? embeddings_->weight : lm_head_->weight;
}

ModelState Mamba2LMImpl::zero_state(int64_t batch) const {
  auto p = embeddings_->weight;
  auto sopts = p.options().dtype(at_least_f32(p.scalar_type()));
  ModelState s;
  for (int64_t i = 0; i < cfg_.n_layer; ++i)
    s.push_back({torch::zeros({batch, cfg_.nheads(), cfg_.headdim, cfg_.d_state}, sopts),
                 torch::zeros({batch, cfg_.conv_dim(), cfg_.d_conv - 1}, p.options())});
  return s;
}

void Mamba2LMImpl::check_tokens(const torch::Tensor& tokens, const std::string& source) const {
  if (tokens.dim() != 2) throw Error(source + ": token ids must be [batch, length], got " + shape_str(tokens));
  if (tokens.scalar_type() != torch::kInt64 && tokens.scalar_type() != torch::kInt32)
    throw Error(source + ": token ids must be integers");
  if (tokens.numel() == 0) return;
  const int64_t lo = tokens.min().item<int64_t>(), hi = tokens.max().item<int64_t>();
  if (lo < 0 || hi >= cfg_.vocab_size)
    throw Error(source + ": token id " + std::to_string(lo < 0 ? lo : hi) + " is outside [0, " +
                std::to_string(cfg_.vocab_size) + ")");
}

void Mamba2LMImpl::check_state(const ModelState& s, int64_t batch, const std::string& source) const {
  if (static_cast<int64_t>(s.size()) != cfg_.n_layer)
    throw Error(source + ": state has " + std::to_string(s.size()) + " layers, model has " +
                std::to_string(cfg_.n_layer));
  const std::vector<int64_t> ssm{batch, cfg_.nheads(), cfg_.headdim, cfg_.d_state};
  const std::vector<int64_t> conv{batch, cfg_.conv_dim(), cfg_.d_conv - 1};
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].ssm.defined() && s[i].ssm.sizes().vec() != ssm)
      throw Error(source + ": layer " + std::to_string(i) + " SSM state is " + shape_str(s[i].ssm) +
                  ", expected [batch, nheads, headdim, d_state] = " + shape_str(torch::empty(ssm)));
    if (s[i].conv.defined() && s[i].conv.sizes().vec() != conv)
      throw Error(source + ": layer " + std::to_string(i) + " conv state is " + shape_str(s[i].conv) +
                  ", expected [batch, conv_dim, d_conv-1] = " + shape_str(torch::empty(conv)));
  }
  // NaN or Inf in a state makes every later output NaN: said here, naming the layer. One device
  // sync for all layers; the layer is looked up only when something is wrong.
  std::vector<torch::Tensor> finite;
  for (auto& l : s)
    for (auto* t : {&l.ssm, &l.conv})
      if (t->defined()) finite.push_back(torch::isfinite(*t).all());
  if (finite.empty() || torch::stack(finite).all().item<bool>()) return;
  for (size_t i = 0; i < s.size(); ++i)
    for (auto [t, what] : {std::pair{&s[i].ssm, "SSM"}, std::pair{&s[i].conv, "conv"}})
      if (t->defined() && !torch::isfinite(*t).all().item<bool>())
        throw Error(source + ": layer " + std::to_string(i) + " " + what + " state holds " +
                    std::to_string((~torch::isfinite(*t)).sum().item<int64_t>()) + " non-finite values (NaN or Inf)");
}

ForwardOutput Mamba2LMImpl::forward(const torch::Tensor& tokens, const ModelState* init) {
  return forward(tokens, init, forward_options());
}

ForwardOutput Mamba2LMImpl::forward(const torch::Tensor& tokens, const ModelState* init,
                                    const ForwardOptions& opt) {
  check_tokens(tokens, "forward");
  const int64_t b = tokens.size(0);
  if (init) check_state(*init, b, "forward initial state");
  ForwardOutput out;
  out.final_state.resize(cfg_.n_layer);
  std::vector<torch::Tensor> norms(opt.state_norms ? cfg_.n_layer : 0), deltas(norms.size());

  std::optional<AutocastScope> autocast;
  if (mixed_bf16) autocast.emplace(embeddings_->weight.device().type());
  auto h = F::embedding(tokens.to(embeddings_->weight.device(), torch::kInt64), embeddings_->weight);  // [b, L, d_model]
  if (cfg_.residual_in_fp32) h = h.to(at_least_f32(h.scalar_type()));
  for (int64_t i = 0; i < cfg_.n_layer; ++i) {
    auto& blk = layers_[i];
    auto u = rms_norm(h, blk->norm->weight, cfg_.norm_eps).to(embeddings_->weight.scalar_type());
    const LayerState* li = init ? &(*init)[i] : nullptr;
    h = h + blk->mixer->forward(u, li, opt, out.final_state[i], opt.state_norms ? &norms[i] : nullptr,
                                opt.state_norms ? &deltas[i] : nullptr);
  }
  auto hf = rms_norm(h, norm_f_->weight, cfg_.norm_eps).to(embeddings_->weight.scalar_type());
  out.logits = F::linear(hf, output_weight());                              // [b, L, vocab]
  if (autocast) {
    autocast.reset();
    out.logits = out.logits.to(torch::kFloat32);                            // bf16 matmul, fp32 out
  }
  if (opt.state_norms) {
    out.norm_per_head = torch::stack(norms, 0);                             // [n_layer, b, L, H]
    out.norm = out.norm_per_head.square().sum(-1).sqrt();                  // [n_layer, b, L]
    out.delta_norm = torch::stack(deltas, 0);                               // [n_layer, b, L]
  }
  return out;
}

void Mamba2LMImpl::reset_parameters(uint64_t seed, double a_min, double a_max) {
  torch::NoGradGuard ng;
  auto gen = at::detail::createCPUGenerator(seed);
  const auto& c = cfg_;
  auto normal_ = [&](torch::Tensor& t, double std) {
    t.copy_(at::normal(0.0, std, t.sizes(), gen, torch::TensorOptions().dtype(t.scalar_type())));
  };
  auto uniform_ = [&](torch::Tensor& t, double lo, double hi) {
    t.copy_(torch::empty(t.sizes(), t.options().device(torch::kCPU)).uniform_(lo, hi, gen));
  };
  normal_(embeddings_->weight, 0.02);
  if (lm_head_) normal_(lm_head_->weight, 0.02);
  norm_f_->weight.fill_(1.0);
  for (auto& blk : layers_) {
    auto& m = *blk->mixer;
    blk->norm->weight.fill_(1.0);
    m.norm->weight.fill_(1.0);
    normal_(m.in_proj->weight, 0.02);
    normal_(m.out_proj->weight, 0.02 / std::sqrt(2.0 * c.n_layer));
    if (m.in_proj->bias.defined()) m.in_proj->bias.zero_();
    if (m.out_proj->bias.defined()) m.out_proj->bias.zero_();
    const double bound = 1.0 / std::sqrt(static_cast<double>(c.d_conv));
    uniform_(m.conv1d->weight, -bound, bound);
    if (m.conv1d->bias.defined()) uniform_(m.conv1d->bias, -bound, bound);
    // dt ~ exp(U[log dt_min, log dt_max]), floored; dt_bias = softplus^{-1}(dt) = dt + log(-expm1(-dt)).
    auto u = torch::empty({c.nheads()}, torch::kFloat64).uniform_(0.0, 1.0, gen);
    auto dt = torch::exp(u * (std::log(c.dt_max) - std::log(c.dt_min)) + std::log(c.dt_min))
                  .clamp_min(c.dt_init_floor);
    m.dt_bias.copy_(dt + torch::log(-torch::expm1(-dt)));
    auto a = torch::empty({c.nheads()}, torch::kFloat64).uniform_(a_min, a_max, gen);
    m.A_log.copy_(torch::log(a));
    m.D.fill_(1.0);
  }
}

}  // namespace statescope

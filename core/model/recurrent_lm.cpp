// recurrent_lm.cpp — what every architecture shares: states, input checks, RMSNorm, autocast.
#include "core/model/recurrent_lm.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <sstream>

#include "core/base/error.h"
#include "core/model/tensor_text.h"

namespace statescope {
ModelState detach_state(const ModelState& s) {
  auto d = [](const torch::Tensor& t) { return t.defined() ? t.detach() : t; };
  ModelState out;
  out.reserve(s.size());
  for (auto& l : s) out.push_back({d(l.ssm), d(l.conv)});
  for (auto& c : s.attention) out.attention.push_back({d(c.keys), d(c.values)});
  return out;
}

ModelState attention_only(const ModelState& s) {
  ModelState out;
  out.attention = s.attention;
  return out;
}

ParamHolderImpl::ParamHolderImpl(std::vector<int64_t> weight_shape, bool with_bias, int64_t bias_size) {
  weight = register_parameter("weight", torch::empty(weight_shape));
  if (with_bias) bias = register_parameter("bias", torch::zeros({bias_size}));
}

SelectiveScanTerms RecurrentLMImpl::scan_terms(const torch::Tensor&, int64_t, const LayerState*) {
  throw Error(architecture_title(model_config()) + " has no selective scan whose terms (dt, A, B, C) can be read: "
              "effective attention and LongMamba are written for Mamba-1 and Mamba-2");
}

ModelState RecurrentLMImpl::zero_state(int64_t batch) const {
  auto p = output_weight();
  auto sopts = p.options().dtype(at_least_f32(p.scalar_type()));
  ModelState s;
  for (int64_t i = 0; i < layout_.n_layer; ++i)
    s.push_back({torch::zeros(layout_.ssm_shape(batch), sopts),
                 layout_.conv.empty() ? torch::Tensor() : torch::zeros(layout_.conv_shape(batch), p.options())});
  return s;
}

void RecurrentLMImpl::check_tokens(const torch::Tensor& tokens, const std::string& source) const {
  if (tokens.dim() != 2) throw Error(source + ": token ids must be [batch, length], got " + shape_str(tokens));
  if (tokens.scalar_type() != torch::kInt64 && tokens.scalar_type() != torch::kInt32)
    throw Error(source + ": token ids must be integers");
  if (tokens.numel() == 0) return;
  const int64_t lo = tokens.min().item<int64_t>(), hi = tokens.max().item<int64_t>();
  if (lo < 0 || hi >= vocab_size())
    throw Error(source + ": token id " + std::to_string(lo < 0 ? lo : hi) + " is outside [0, " +
                std::to_string(vocab_size()) + ")");
}

void RecurrentLMImpl::check_state(const ModelState& s, int64_t batch, const std::string& source) const {
  const auto& l = layout_;
  // A hybrid's state may hold its attention caches alone (recurrent layers at zero).
  if (static_cast<int64_t>(s.size()) != l.n_layer && !(s.empty() && l.attention_layers > 0))
    throw Error(source + ": state has " + std::to_string(s.size()) + " recurrent layers, model has " +
                std::to_string(l.n_layer));
  check_attention(s.attention, batch, source);
  const auto ssm = l.ssm_shape(batch), conv = l.conv_shape(batch);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].ssm.defined() && s[i].ssm.sizes().vec() != ssm)
      throw Error(source + ": layer " + std::to_string(i) + " SSM state is " + shape_str(s[i].ssm) +
                  ", expected [batch, " + l.ssm_axes().substr(1, l.ssm_axes().size() - 2) + "] = " + shape_str(ssm));
    if (s[i].conv.defined() && (conv.empty() || s[i].conv.sizes().vec() != conv))
      throw Error(source + ": layer " + std::to_string(i) + " conv state is " + shape_str(s[i].conv) +
                  (conv.empty() ? ", but " + l.architecture + " has no conv state"
                                : ", expected [batch, " + l.conv_axes().substr(1, l.conv_axes().size() - 2) +
                                      "] = " + shape_str(conv)));
  }
  // NaN or Inf in a state makes every later output NaN: said here, naming the layer. One device
  // sync for all layers; the layer is looked up only when something is wrong.
  std::vector<torch::Tensor> finite;
  for (auto& x : s)
    for (auto* t : {&x.ssm, &x.conv})
      if (t->defined()) finite.push_back(torch::isfinite(*t).all());
  if (finite.empty() || torch::stack(finite).all().item<bool>()) return;
  for (size_t i = 0; i < s.size(); ++i)
    for (auto [t, what] : {std::pair{&s[i].ssm, "SSM"}, std::pair{&s[i].conv, "conv"}})
      if (t->defined() && !torch::isfinite(*t).all().item<bool>())
        throw Error(source + ": layer " + std::to_string(i) + " " + what + " state holds " +
                    std::to_string((~torch::isfinite(*t)).sum().item<int64_t>()) + " non-finite values (NaN or Inf)");
}

void RecurrentLMImpl::check_attention(const std::vector<KVCache>& caches, int64_t batch, const std::string& source) const {
  const auto& l = layout_;
  if (caches.empty()) return;
  if (static_cast<int64_t>(caches.size()) != l.attention_layers)
    throw Error(source + ": state has " + std::to_string(caches.size()) + " attention caches, model has " +
                std::to_string(l.attention_layers) + " attention layers");
  const int64_t T = caches.front().length();
  for (size_t i = 0; i < caches.size(); ++i) {
    const auto& c = caches[i];
    for (auto [t, what] : {std::pair{&c.keys, "keys"}, std::pair{&c.values, "values"}}) {
      const std::vector<int64_t> want{batch, l.kv_heads, T, l.head_dim};
      if (T > 0 && (!t->defined() || t->sizes().vec() != want))
        throw Error(source + ": attention layer " + std::to_string(i) + " " + what + " are " +
                    (t->defined() ? shape_str(*t) : std::string("missing")) + ", expected [batch, kv_heads, positions, head_dim] = " +
                    shape_str(want));
      if (T == 0 && t->defined() && t->size(2) != 0)
        throw Error(source + ": attention layer " + std::to_string(i) + " " + what + " hold positions but its keys hold none");
      if (T > 0 && !torch::isfinite(*t).all().item<bool>())
        throw Error(source + ": attention layer " + std::to_string(i) + " " + what + " hold non-finite values (NaN or Inf)");
    }
  }
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  auto xf = x.to(at_least_f32(x.scalar_type()));
  auto y = xf * torch::rsqrt(xf.square().mean(-1, /*keepdim=*/true) + eps);
  return (w.defined() ? y * w.to(y.scalar_type()) : y).to(x.scalar_type());
}

torch::Tensor short_conv_silu(const torch::Tensor& x_in, const torch::Tensor& weight, const torch::Tensor& init_conv,
                              torch::Tensor& final_conv) {
  const int64_t b = x_in.size(0), L = x_in.size(1), C = x_in.size(2), W = weight.size(-1);
  auto x = x_in.transpose(1, 2);                                                    // [b, C, L]
  auto conv0 = init_conv.defined() ? init_conv.to(x.scalar_type()) : torch::zeros({b, C, W - 1}, x.options());
  auto xin = torch::cat({conv0, x}, 2);                                             // [b, C, W-1+L]
  final_conv = xin.narrow(2, L, W - 1);                                             // the newest inputs, oldest first
  if (L == 0) return x_in;
  namespace F = torch::nn::functional;
  return F::silu(F::conv1d(xin, weight.to(x.scalar_type()), F::Conv1dFuncOptions().groups(C))).transpose(1, 2);  // [b, L, C]
}

AutocastScope::AutocastScope(c10::DeviceType d)
    : d_(d), was_on_(at::autocast::is_autocast_enabled(d)), was_(at::autocast::get_autocast_dtype(d)) {
  at::autocast::set_autocast_enabled(d_, true);
  at::autocast::set_autocast_dtype(d_, at::kBFloat16);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(d_, was_on_);
  at::autocast::set_autocast_dtype(d_, was_);
}

}  // namespace statescope

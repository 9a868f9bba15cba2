// toy/model.cpp — the toy recurrence, sequential (model.h).
#include "core/model/toy/model.h"
#include "core/model/toy/arch.h"

#include <torch/torch.h>

#include "core/model/dense.h"

namespace statescope {

ToyMixerImpl::ToyMixerImpl(const ToyConfig& c) : cfg(c) {
  const int64_t D = c.d_model;
  in_proj = register_module("in_proj", ParamHolder(std::vector<int64_t>{D, D}, false));
  out_proj = register_module("out_proj", ParamHolder(std::vector<int64_t>{D, D}, false));
  a_logit = register_module("a_logit", ParamHolder(std::vector<int64_t>{D}, false));
}

torch::Tensor ToyMixerImpl::forward(const torch::Tensor& u, const LayerState* init, const ForwardOptions&,
                                    LayerState& fin, torch::Tensor* norms, torch::Tensor* delta_norm,
                                    torch::Tensor* log_decay) {
  const int64_t b = u.size(0), L = u.size(1), D = cfg.d_model;
  auto x = dense(u, in_proj->weight).to(torch::kFloat32);        // [b, L, D]
  auto a = torch::sigmoid(a_logit->weight.to(torch::kFloat32));  // [D]
  auto h = (init && init->ssm.defined()) ? init->ssm.to(torch::kFloat32) : torch::zeros({b, D}, x.options());
  std::vector<torch::Tensor> hs;
  for (int64_t t = 0; t < L; ++t) hs.push_back(h = a * h + (1 - a) * x.select(1, t));
  auto H = torch::stack(hs, 1);  // [b, L, D]
  fin.ssm = h;
  if (norms) *norms = H.norm(2, -1, true);  // [b, L, 1]
  if (delta_norm) *delta_norm = (H - torch::cat({(init && init->ssm.defined()) ? init->ssm.unsqueeze(1).to(H.dtype())
                                                                                 : torch::zeros_like(H.narrow(1, 0, 1)),
                                                  H.narrow(1, 0, L - 1)}, 1)).norm(2, -1);
  if (log_decay) *log_decay = torch::log(a).mean().expand({b, L, 1});
  return dense(H.to(u.scalar_type()), out_proj->weight);
}

ToyLMImpl::ToyLMImpl(const ToyConfig& c) : ResidualLMOf(c, "toy config", {"a_logit"}) {
  build_layers(c, mixers_);
  reset_parameters(0);
}

void ToyLMImpl::reset_parameters(uint64_t seed, double, double) {
  reset_layers(seed, 0.02, [&](ToyMixerImpl& m, at::Generator& gen) {
    init_normal(m.in_proj->weight, 0.02, gen);
    init_normal(m.out_proj->weight, 0.02, gen);
    init_uniform(m.a_logit->weight, 0.0, 4.0, gen);
  });
}

RecurrentLM Arch<ToyConfig>::make(const ToyConfig& c) { return ToyLM(c); }

}  // namespace statescope

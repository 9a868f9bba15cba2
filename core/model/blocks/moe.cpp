// blocks/moe.cpp — routers and experts (moe.h).
#include "core/model/blocks/moe.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/dense.h"

namespace statescope {

void MoeConfig::validate(const std::string& source) const {
  auto in = [&](int64_t v, int64_t lo, int64_t hi, const char* what) {
    if (v < lo || v > hi)
      throw Error(source + ": " + what + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                  std::to_string(v));
  };
  in(hidden, 1, int64_t{1} << 20, "the hidden size");
  in(experts, 1, 1 << 16, "the number of experts");
  in(top_k, 1, experts, "num_experts_per_tok");
  in(inner, 1, int64_t{1} << 20, "the experts' intermediate size");
  if (family == Family::NemotronH) {
    in(n_group, 1, experts, "n_group");
    if (experts % n_group != 0 || experts / n_group < 2)
      throw Error(source + ": n_routed_experts (" + std::to_string(experts) + ") must split into n_group (" +
                  std::to_string(n_group) + ") groups of at least 2");
    in(topk_group, 1, n_group, "topk_group");
    if (top_k > topk_group * (experts / n_group))
      throw Error(source + ": num_experts_per_tok (" + std::to_string(top_k) + ") is more than the " +
                  std::to_string(topk_group * (experts / n_group)) + " experts of the topk_group groups kept");
  }
}

MoeImpl::MoeImpl(const MoeConfig& c) : cfg(c) {
  const int64_t E = c.experts, H = c.hidden, I = c.inner, X = c.latent > 0 ? c.latent : H;
  using Shape = std::vector<int64_t>;
  switch (c.family) {
    case MoeConfig::Family::NemotronH:
    case MoeConfig::Family::Qwen3Next: {
      gate = register_module("gate", ParamHolder(Shape{E, H}, false));
      if (c.family == MoeConfig::Family::NemotronH)
        score_bias = gate->register_buffer("e_score_correction_bias", torch::zeros({E}));
      auto list = register_module("experts", std::make_shared<torch::nn::Module>());
      const auto kind = c.family == MoeConfig::Family::NemotronH ? MlpConfig::Kind::Relu2 : MlpConfig::Kind::SwiGLU;
      for (int64_t e = 0; e < E; ++e) experts.push_back(list->register_module(std::to_string(e), Mlp(MlpConfig{kind, X, I})));
      if (c.shared_inner > 0)
        shared = register_module(c.family == MoeConfig::Family::NemotronH ? "shared_experts" : "shared_expert",
                                 Mlp(MlpConfig{kind, H, c.shared_inner}));
      if (c.family == MoeConfig::Family::Qwen3Next) shared_gate = register_module("shared_expert_gate", ParamHolder(Shape{1, H}, false));
      if (c.latent > 0) {
        fc1_latent = register_module("fc1_latent_proj", ParamHolder(Shape{c.latent, H}, false));
        fc2_latent = register_module("fc2_latent_proj", ParamHolder(Shape{H, c.latent}, false));
      }
      break;
    }
    case MoeConfig::Family::Granite: {
      auto router = register_module("router", std::make_shared<torch::nn::Module>());
      gate = router->register_module("layer", ParamHolder(Shape{E, H}, false));
      input_linear = register_module("input_linear", ParamHolder(Shape{E, 2 * I, H}, false));
      output_linear = register_module("output_linear", ParamHolder(Shape{E, H, I}, false));
      break;
    }
  }
}

std::pair<torch::Tensor, torch::Tensor> MoeImpl::route(const torch::Tensor& x) const {
  const auto& c = cfg;
  const int64_t k = c.top_k;
  switch (c.family) {
    case MoeConfig::Family::NemotronH: {  // all in float32, as transformers keeps this router
      auto scores = torch::sigmoid(torch::matmul(x.to(torch::kFloat32), gate->weight.to(torch::kFloat32).t()));  // [T, E]
      auto choice = scores + score_bias.to(torch::kFloat32);
      const int64_t T = x.size(0), G = c.n_group, per = c.experts / G;
      auto group_scores = std::get<0>(choice.view({T, G, per}).topk(2, -1)).sum(-1);                // [T, G]
      auto keep = torch::zeros_like(group_scores).scatter_(1, std::get<1>(group_scores.topk(c.topk_group, -1)), 1.0);
      auto mask = keep.unsqueeze(-1).expand({T, G, per}).reshape({T, c.experts}).to(torch::kBool);
      choice = choice.masked_fill(~mask, -std::numeric_limits<float>::infinity());
      auto idx = std::get<1>(choice.topk(k, -1));
      auto w = scores.gather(1, idx);
      if (c.norm_topk_prob) w = w / (w.sum(-1, true) + 1e-20);
      return {idx, w * c.routed_scaling};
    }
    case MoeConfig::Family::Granite: {  // logits in the model's dtype, then float32
      auto logits = dense(x, gate->weight).to(torch::kFloat32);
      auto [top, idx] = logits.topk(k, -1);
      return {idx, torch::softmax(top, -1).to(x.scalar_type())};
    }
    case MoeConfig::Family::Qwen3Next: {
      auto logits = dense(x, gate->weight);
      auto [top, idx] = torch::softmax(logits.to(torch::kFloat32), -1).topk(k, -1);
      if (c.norm_topk_prob) top = top / top.sum(-1, true);
      return {idx, top.to(logits.scalar_type())};
    }
  }
  return {};
}

torch::Tensor MoeImpl::forward(const torch::Tensor& x) {
  const auto& c = cfg;
  const auto shape = x.sizes().vec();
  auto xf = x.reshape({-1, c.hidden});                           // [T, H]
  auto [idx, w] = route(xf);                                      // [T, k]
  auto xin = c.latent > 0 ? dense(xf, fc1_latent->weight) : xf;  // [T, H or latent]
  auto y = torch::zeros_like(xin);
  for (int64_t e = 0; e < c.experts; ++e) {
    auto hit = (idx == e).nonzero();                              // [n, 2]: (token, slot)
    if (hit.size(0) == 0) continue;
    auto tok = hit.select(1, 0), slot = hit.select(1, 1);
    auto xe = xin.index_select(0, tok);
    torch::Tensor he;
    if (c.family == MoeConfig::Family::Granite) {
      auto gu = dense(xe, input_linear->weight[e]);              // [n, 2I]: [gate | up]
      he = dense(torch::silu(gu.narrow(-1, 0, c.inner)) * gu.narrow(-1, c.inner, c.inner), output_linear->weight[e]);
    } else {
      he = experts[e]->forward(xe);
    }
    auto we = w.index({tok, slot}).to(he.scalar_type()).unsqueeze(-1);  // [n, 1]
    y.index_add_(0, tok, he * we);
  }
  if (c.latent > 0) y = dense(y, fc2_latent->weight);
  if (shared) {
    auto s = shared->forward(xf);
    if (shared_gate) s = torch::sigmoid(dense(xf, shared_gate->weight)) * s;
    y = y + s;
  }
  return y.view(shape);
}

}  // namespace statescope

// blocks/mlp.cpp — the dense feed-forward blocks (mlp.h).
#include "core/model/blocks/mlp.h"

#include <torch/torch.h>

#include "core/model/dense.h"

namespace statescope {

MlpImpl::MlpImpl(const MlpConfig& c) : cfg(c) {
  const int64_t D = c.hidden, I = c.inner;
  auto linear = [&](const char* name, int64_t out, int64_t in) {
    return register_module(name, ParamHolder(std::vector<int64_t>{out, in}, false));
  };
  switch (c.kind) {
    case MlpConfig::Kind::SwiGLU:
      gate_proj = linear("gate_proj", I, D);
      up_proj = linear("up_proj", I, D);
      down_proj = linear("down_proj", D, I);
      break;
    case MlpConfig::Kind::Relu2:
      up_proj = linear("up_proj", I, D);
      down_proj = linear("down_proj", D, I);
      break;
    case MlpConfig::Kind::FusedSwiGLU:
      up_proj = linear("input_linear", 2 * I, D);
      down_proj = linear("output_linear", D, I);
      break;
  }
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) {
  switch (cfg.kind) {
    case MlpConfig::Kind::SwiGLU: {
      auto g = dense(x, gate_proj->weight);
      if (cfg.gate_multiplier != 1.0) g = g * cfg.gate_multiplier;
      auto y = dense(torch::silu(g) * dense(x, up_proj->weight), down_proj->weight);
      return cfg.down_multiplier != 1.0 ? y * cfg.down_multiplier : y;
    }
    case MlpConfig::Kind::Relu2:
      return dense(torch::relu(dense(x, up_proj->weight)).square(), down_proj->weight);
    case MlpConfig::Kind::FusedSwiGLU: {
      auto ab = dense(x, up_proj->weight);  // [b, L, 2 inner]: [a | b]
      return dense(torch::silu(ab.narrow(-1, 0, cfg.inner)) * ab.narrow(-1, cfg.inner, cfg.inner), down_proj->weight);
    }
  }
  return {};
}

}  // namespace statescope

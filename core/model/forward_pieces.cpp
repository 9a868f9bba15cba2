// forward_pieces.cpp — a forward cut at an intervention's reset period (forward_pieces.h).
#include "core/model/forward_pieces.h"

#include <torch/torch.h>

#include "core/base/error.h"
#include "core/model/intervention.h"

namespace statescope {

ForwardOutput forward_in_pieces(
    const torch::Tensor& tokens, const ModelState* init, const ForwardOptions& opt,
    const std::function<ForwardOutput(const torch::Tensor&, const ModelState*, const ForwardOptions&)>& span,
    const std::function<ModelState(const ModelState&)>& reset) {
  const int64_t k = opt.intervention ? opt.intervention->reset_period : 0;
  const int64_t L = tokens.dim() == 2 ? tokens.size(1) : 0;
  if (opt.logits_from < 0 || opt.logits_from > L)
    throw Error("forward: logits_from " + std::to_string(opt.logits_from) + " outside [0, " + std::to_string(L) + "]");
  if (k <= 0 || L == 0) return span(tokens, init, opt);
  // Pieces between the multiples of k; the first keeps `init` unless it starts on a multiple.
  std::vector<ForwardOutput> parts;
  ModelState fresh_state;  // what a piece after a cut starts from
  int64_t a = 0;
  while (a < L) {
    const int64_t pos = opt.position + a;
    const int64_t b = std::min(L, a + (k - pos % k));
    ForwardOptions o = opt;
    o.position = pos;
    o.logits_from = 0;  // the pieces' logits are cut below
    const ModelState* before = a == 0 ? init : &parts.back().final_state;
    const ModelState* from = before;
    if (pos % k == 0 && (pos > 0 || a > 0)) {  // a cut
      fresh_state = before ? reset(*before) : ModelState();
      from = fresh_state.empty() && fresh_state.attention.empty() ? nullptr : &fresh_state;
    }
    parts.push_back(span(tokens.narrow(1, a, b - a), from, o));
    a = b;
  }
  if (parts.size() == 1) return std::move(parts[0]);
  auto cat = [&](auto get, int64_t dim) {  // the pieces' tensors joined along the position axis
    std::vector<torch::Tensor> ts;
    for (auto& p : parts) ts.push_back(get(p));
    return ts.front().defined() ? torch::cat(ts, dim) : torch::Tensor();
  };
  ForwardOutput out;
  out.logits = cat([](ForwardOutput& p) { return p.logits; }, 1);               // [b, L, vocab]
  if (opt.logits_from > 0) out.logits = out.logits.narrow(1, opt.logits_from, L - opt.logits_from);
  out.final_state = std::move(parts.back().final_state);
  out.norm_per_head = cat([](ForwardOutput& p) { return p.norm_per_head; }, 2);  // [NL, b, L, groups]
  out.norm = cat([](ForwardOutput& p) { return p.norm; }, 2);                    // [NL, b, L]
  out.delta_norm = cat([](ForwardOutput& p) { return p.delta_norm; }, 2);        // [NL, b, L]
  out.log_decay = cat([](ForwardOutput& p) { return p.log_decay; }, 2);          // [NL, b, L, groups]
  out.attention_entropy = cat([](ForwardOutput& p) { return p.attention_entropy; }, 2);  // [NA, b, L, heads]
  out.attention_first = cat([](ForwardOutput& p) { return p.attention_first; }, 2);      // [NA, b, L, heads]
  out.attention_q = cat([](ForwardOutput& p) { return p.attention_q; }, 2);              // [b, H, L, d]
  out.attention_k = parts.back().attention_k;  // the last piece's cache holds every key  [b, H, T, d]
  out.attention_scale = parts.back().attention_scale, out.attention_window = parts.back().attention_window;
  for (size_t i = 0; i < parts.front().mixer_inputs.size(); ++i)
    out.mixer_inputs.push_back(cat([i](ForwardOutput& p) { return p.mixer_inputs[i]; }, 1));  // [b, L, d_model]
  return out;
}

}  // namespace statescope

// step.cpp — effective attention as a step of an experiment run: the first `length` tokens of the
// validation split (the same bytes for every run), every head of the chosen layer (or one).
#include <torch/torch.h>

#include "core/analyses/attention/attention.h"
#include "core/analyses/attention/record.h"
#include "core/analyses/attention/step.h"
#include "core/base/error.h"
#include "core/experiment/analyses.h"

namespace statescope {

void run_attention(RecurrentLM& model, const nlohmann::json& opt, const AnalysisContext& ctx, ExperimentFile& file,
                   const std::string& run) {
  AttentionResult r;
  r.layer = opt.at("layer").get<int64_t>();
  const int64_t length = opt.at("length").get<int64_t>(), head = opt.at("head").get<int64_t>();
  for (const auto& d : *ctx.validation) {
    for (int32_t t : d.tokens) {
      if (static_cast<int64_t>(r.tokens.size()) >= length) break;
      r.tokens.push_back(t);
    }
    if (static_cast<int64_t>(r.tokens.size()) >= length) break;
  }
  if (r.tokens.empty()) throw Error("attention: the validation split is empty");
  r.length = static_cast<int64_t>(r.tokens.size());
  auto tokens = torch::tensor(std::vector<int64_t>(r.tokens.begin(), r.tokens.end()), torch::kInt64).view({1, r.length});
  const int64_t groups = model->state_layout().groups;
  if (head >= groups) throw Error("attention: head " + std::to_string(head) + " is outside 0.." + std::to_string(groups - 1));
  for (int64_t h = head < 0 ? 0 : head; h < (head < 0 ? groups : head + 1); ++h) r.heads.push_back(h);
  for (size_t i = 0; i < r.heads.size(); ++i) {
    if (ctx.progress && !ctx.progress("attention", static_cast<int64_t>(i), static_cast<int64_t>(r.heads.size()), 0))
      throw Error("attention cancelled");
    const auto a = effective_attention(model, tokens, r.layer, r.heads[i]);
    using Copy = std::pair<std::vector<double>*, const torch::Tensor*>;
    for (auto [dst, src] : {Copy{&r.M, &a.M}, Copy{&r.init, &a.init}, Copy{&r.by_distance, &a.by_distance}}) {
      auto c = src->contiguous();
      dst->insert(dst->end(), c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
    }
  }
  write_attention(file, run, r);
}

}  // namespace statescope

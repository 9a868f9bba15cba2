// toy.cpp — next-token entropy per position, one full pass (toy.h).
#include "core/analyses/toy/toy.h"

#include <torch/torch.h>

#include "core/analyses/eval/evaluate.h"

namespace statescope {

ToyResult toy_entropy(RecurrentLM& model, const std::vector<Document>& docs, int64_t length, int64_t sequences) {
  torch::NoGradGuard ng;
  model->eval();
  const auto seqs = eval_sequences(docs, length - 1, sequences);
  auto toks = torch::empty({sequences, length}, torch::kInt64);  // [S, length]
  for (int64_t i = 0; i < sequences; ++i)
    for (int64_t t = 0; t < length; ++t) toks[i][t] = seqs[i][t];
  auto out = model->forward(toks.to(model->output_weight().device()), nullptr, model->forward_options(0));
  auto logp = torch::log_softmax(out.logits.to(torch::kCPU, torch::kFloat64), -1);  // [S, length, V]
  auto h = -(logp.exp() * logp).sum(-1).mean(0);                                    // [length]
  ToyResult r;
  r.sequences = sequences;
  for (int64_t t = 0; t < length; ++t) r.position.push_back(t), r.entropy.push_back(h[t].item<double>());
  return r;
}

}  // namespace statescope

// passkey.cpp — passkey generation, greedy decoding and the length x depth grid.
#include "passkey.h"

#include <torch/torch.h>

#include "error.h"
#include "runtime.h"

namespace statescope {
namespace {

const std::string kFiller = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. ";
const std::string kQuestion = "What is the pass key? The pass key is ";

std::string filler(int64_t n) {
  std::string s;
  while (static_cast<int64_t>(s.size()) < n) s += kFiller;
  return s.substr(0, n);
}

}  // namespace

PasskeySample make_passkey(int64_t length, double depth, std::mt19937_64& rng) {
  if (depth < 0 || depth > 1) throw Error("passkey: depth must be in [0, 1], got " + std::to_string(depth));
  std::uniform_int_distribution<int> digit(10000, 99999);
  PasskeySample s;
  s.key = std::to_string(digit(rng));
  const std::string fact = "The pass key is " + s.key + ". Remember it. " + s.key + " is the pass key. ";
  const int64_t fill = length - static_cast<int64_t>(fact.size() + kQuestion.size());
  if (fill < 0)
    throw Error("passkey: length " + std::to_string(length) + " is shorter than the fixed text (" +
                std::to_string(fact.size() + kQuestion.size()) + " bytes)");
  const std::string f = filler(fill);
  const int64_t at = static_cast<int64_t>(std::llround(depth * static_cast<double>(fill)));
  s.key_offset = at;
  s.prompt = f.substr(0, at) + fact + f.substr(at) + kQuestion;
  return s;
}

torch::Tensor greedy_decode(Mamba2LM& model, const torch::Tensor& prompt, int64_t n) {
  torch::NoGradGuard ng;
  ForwardOptions fo;  // with --scan fused on a GPU: the chunked scan kernel for the prompt, the step kernel per token
  if (fused_scan_requested()) fo.scan = ScanImpl::Fused;
  auto out = model->forward(prompt, nullptr, fo);
  std::vector<torch::Tensor> toks;
  auto next = out.logits.select(1, prompt.size(1) - 1).argmax(-1, /*keepdim=*/true);  // [b, 1]
  ModelState st = out.final_state;
  for (int64_t i = 0; i < n; ++i) {
    toks.push_back(next);
    if (i + 1 == n) break;
    auto o = model->forward(next, &st, fo);
    st = o.final_state;
    next = o.logits.select(1, 0).argmax(-1, true);
  }
  return torch::cat(toks, 1);  // [b, n]
}

PasskeyGrid evaluate_passkey(Mamba2LM& model, const std::vector<int64_t>& lengths, const std::vector<double>& depths,
                             int64_t samples, uint64_t seed) {
  model->eval();
  PasskeyGrid g;
  g.lengths = lengths;
  g.depths = depths;
  g.samples = samples;
  std::mt19937_64 rng(seed);
  const auto dev = model->output_weight().device();
  for (auto L : lengths) {
    for (auto d : depths) {
      std::vector<PasskeySample> batch;
      for (int64_t i = 0; i < samples; ++i) batch.push_back(make_passkey(L, d, rng));
      auto prompt = torch::empty({samples, L}, torch::kInt64);
      for (int64_t i = 0; i < samples; ++i)
        for (int64_t t = 0; t < L; ++t) prompt[i][t] = static_cast<unsigned char>(batch[i].prompt[t]);
      auto ans = greedy_decode(model, prompt.to(dev), 5).cpu();
      double exact = 0, digits = 0;
      for (int64_t i = 0; i < samples; ++i) {
        int correct = 0;
        for (int k = 0; k < 5; ++k) correct += ans[i][k].item<int64_t>() == static_cast<unsigned char>(batch[i].key[k]);
        digits += correct / 5.0;
        exact += correct == 5;
      }
      g.accuracy.push_back(exact / samples);
      g.digit_accuracy.push_back(digits / samples);
    }
  }
  return g;
}

std::vector<Document> passkey_training_docs(int64_t n, int64_t length, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> depth(0.0, 1.0);
  std::vector<Document> docs;
  for (int64_t i = 0; i < n; ++i) {
    auto s = make_passkey(length, depth(rng), rng);
    docs.push_back({"passkey" + std::to_string(i), encode_bytes(s.prompt + s.key)});
  }
  return docs;
}

}  // namespace statescope

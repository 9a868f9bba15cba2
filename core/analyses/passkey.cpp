// passkey.cpp — passkey prompts (bytes or the model's BPE tokens), greedy decoding, the grid.
#include "core/analyses/passkey.h"

#include <torch/torch.h>

#include <cctype>
#include <map>
#include <mutex>

#include "core/base/error.h"
#include "core/compute/runtime.h"

namespace statescope {
namespace {

const std::string kFiller = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. ";
const std::string kQuestion = "What is the pass key? The pass key is ";

std::string filler(int64_t n) {
  std::string s;
  while (static_cast<int64_t>(s.size()) < n) s += kFiller;
  return s.substr(0, n);
}

std::string draw_key(std::mt19937_64& rng) { return std::to_string(std::uniform_int_distribution<int>(10000, 99999)(rng)); }

void check_depth(double depth) {
  if (depth < 0 || depth > 1) throw Error("passkey: depth must be in [0, 1], got " + std::to_string(depth));
}

// The byte-level prompt of `length` bytes with `key` at `depth`.
PasskeySample bytes_prompt(int64_t length, double depth, const std::string& key) {
  PasskeySample s;
  s.key = key;
  const std::string fact = "The pass key is " + key + ". Remember it. " + key + " is the pass key. ";
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

// At least n filler tokens of a BPE tokenizer, encoded once per tokenizer and length class.
std::vector<int32_t> filler_tokens(const Tokenizer& tok, int64_t n) {
  static std::mutex mu;
  static std::map<std::string, std::vector<int32_t>> cache;  // fingerprint -> the longest encoded so far
  std::lock_guard<std::mutex> lock(mu);
  auto& ids = cache[tok.fingerprint()];
  for (int64_t bytes = std::max<int64_t>(4096, 2 * n); static_cast<int64_t>(ids.size()) < n; bytes *= 2)
    ids = tok.encode(filler(bytes));
  return {ids.begin(), ids.begin() + n};
}

// What the model should continue with: the key's bytes after "... is ", or encode(" NNNNN") (BPE).
std::vector<int32_t> answer_ids(const Tokenizer& tok, const std::string& key) {
  return tok.kind() == "bytes" ? encode_bytes(key) : tok.encode(" " + key);
}

PasskeyPrompt token_prompt(const Tokenizer& tok, int64_t length, double depth, const std::string& key) {
  PasskeyPrompt p;
  p.key = key;
  if (tok.kind() == "bytes") {
    auto s = bytes_prompt(length, depth, key);
    p.ids = encode_bytes(s.prompt);
    p.answer = answer_ids(tok, key);
    p.key_at = s.key_offset;
    return p;
  }
  const auto fact = tok.encode(" The pass key is " + key + ". Remember it. " + key + " is the pass key.");
  const auto question = tok.encode(" What is the pass key? The pass key is");
  p.answer = answer_ids(tok, key);
  const int64_t fill = length - static_cast<int64_t>(fact.size() + question.size());
  if (fill < 0)
    throw Error("passkey: length " + std::to_string(length) + " is shorter than the fixed text (" +
                std::to_string(fact.size() + question.size()) + " tokens)");
  const auto f = filler_tokens(tok, fill);
  p.key_at = static_cast<int64_t>(std::llround(depth * static_cast<double>(fill)));
  p.ids.assign(f.begin(), f.begin() + p.key_at);
  p.ids.insert(p.ids.end(), fact.begin(), fact.end());
  p.ids.insert(p.ids.end(), f.begin() + p.key_at, f.end());
  p.ids.insert(p.ids.end(), question.begin(), question.end());
  return p;
}

}  // namespace

PasskeySample make_passkey(int64_t length, double depth, std::mt19937_64& rng) {
  check_depth(depth);
  return bytes_prompt(length, depth, draw_key(rng));
}

PasskeyPrompt make_passkey_prompt(const Tokenizer& tok, int64_t length, double depth, std::mt19937_64& rng) {
  check_depth(depth);
  return token_prompt(tok, length, depth, draw_key(rng));
}

torch::Tensor greedy_decode(Mamba2LM& model, const torch::Tensor& prompt, int64_t n) {
  torch::NoGradGuard ng;
  ForwardOptions fo;  // with --scan fused on a GPU: the chunked scan kernel for the prompt, the step kernel per token
  fo.scan = model->scan_impl();
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
                             int64_t samples, uint64_t seed, const Tokenizer* tok) {
  model->eval();
  const ByteTokenizer bytes{};
  const Tokenizer& t = tok ? *tok : bytes;
  PasskeyGrid g;
  g.lengths = lengths;
  g.depths = depths;
  g.samples = samples;
  std::mt19937_64 rng(seed);
  const auto dev = model->output_weight().device();
  for (auto L : lengths) {
    for (auto d : depths) {
      std::vector<PasskeyPrompt> batch;
      int64_t n = 0;
      for (int64_t i = 0; i < samples; ++i) {
        batch.push_back(make_passkey_prompt(t, L, d, rng));
        n = std::max<int64_t>(n, static_cast<int64_t>(batch.back().answer.size()));
      }
      auto prompt = torch::empty({samples, L}, torch::kInt64);  // [samples, L]
      auto pa = prompt.accessor<int64_t, 2>();
      for (int64_t i = 0; i < samples; ++i)
        for (int64_t k = 0; k < L; ++k) pa[i][k] = batch[i].ids[k];
      auto ans = greedy_decode(model, prompt.to(dev), n).cpu();  // [samples, n]
      double exact = 0, digits = 0;
      for (int64_t i = 0; i < samples; ++i) {
        const std::string target = t.decode(batch[i].answer);  // "NNNNN" (bytes) or " NNNNN" (BPE)
        std::vector<int32_t> got_ids(static_cast<size_t>(n));
        for (int64_t k = 0; k < n; ++k) got_ids[k] = static_cast<int32_t>(ans[i][k].item<int64_t>());
        const std::string got = t.decode(got_ids);
        int correct = 0;
        for (size_t j = 0; j < target.size(); ++j)
          if (std::isdigit(static_cast<unsigned char>(target[j]))) correct += j < got.size() && got[j] == target[j];
        digits += correct / 5.0;
        exact += correct == 5;
      }
      g.accuracy.push_back(exact / samples);
      g.digit_accuracy.push_back(digits / samples);
    }
  }
  return g;
}

std::vector<Document> passkey_training_docs(int64_t n, int64_t window, uint64_t seed, const Tokenizer* tok) {
  const ByteTokenizer bytes{};
  const Tokenizer& t = tok ? *tok : bytes;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> depth(0.0, 1.0);
  std::vector<Document> docs;
  for (int64_t i = 0; i < n; ++i) {
    const double d = depth(rng);
    const std::string key = draw_key(rng);
    auto p = token_prompt(t, window - static_cast<int64_t>(answer_ids(t, key).size()), d, key);
    p.ids.insert(p.ids.end(), p.answer.begin(), p.answer.end());
    docs.push_back({"passkey" + std::to_string(i), std::move(p.ids)});
  }
  return docs;
}

}  // namespace statescope

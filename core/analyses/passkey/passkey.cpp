// passkey.cpp — passkey prompts (bytes or the model's BPE tokens), greedy decoding, the grid.
#include "core/analyses/passkey/passkey.h"

#include <torch/torch.h>

#include <cctype>
#include <map>
#include <mutex>

#include "core/base/error.h"
#include "core/dist/comm.h"
#include "core/compute/runtime.h"

namespace statescope {
namespace {

const std::string kFiller = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. ";
const std::string kQuestion = "What is the pass key? The pass key is ";
const std::string kHeader =  // Mohtashami & Jaggi (2023), the standard prompt's task statement
    "There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. I will quiz you "
    "about the important information there.";

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
  const auto header = tok.encode(kHeader);
  const auto fact = tok.encode(" The pass key is " + key + ". Remember it. " + key + " is the pass key.");
  const auto question = tok.encode(" What is the pass key? The pass key is");
  p.answer = answer_ids(tok, key);
  const int64_t fill = length - static_cast<int64_t>(header.size() + fact.size() + question.size());
  if (fill < 0)
    throw Error("passkey: length " + std::to_string(length) + " is shorter than the fixed text (" +
                std::to_string(header.size() + fact.size() + question.size()) + " tokens)");
  const auto f = filler_tokens(tok, fill);
  const int64_t at = static_cast<int64_t>(std::llround(depth * static_cast<double>(fill)));
  p.key_at = static_cast<int64_t>(header.size()) + at;
  p.ids = header;
  p.ids.insert(p.ids.end(), f.begin(), f.begin() + at);
  p.ids.insert(p.ids.end(), fact.begin(), fact.end());
  p.ids.insert(p.ids.end(), f.begin() + at, f.end());
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

int passkey_digits_right(const std::string& target, const std::string& got) {
  int correct = 0;
  for (size_t j = 0; j < target.size(); ++j)
    if (std::isdigit(static_cast<unsigned char>(target[j]))) correct += j < got.size() && got[j] == target[j];
  return correct;
}

PasskeyGrid evaluate_passkey(RecurrentLM& model, const std::vector<int64_t>& lengths, const std::vector<double>& depths,
                             int64_t samples, uint64_t seed, const Tokenizer* tok) {
  return score_passkey(*model_answerer(model), lengths, depths, samples, seed, tok);
}

PasskeyGrid score_passkey(Answerer& answerer, const std::vector<int64_t>& lengths, const std::vector<double>& depths,
                          int64_t samples, uint64_t seed, const Tokenizer* tok) {
  if (samples < 1) throw Error("passkey: need at least one sample per cell, got " + std::to_string(samples));
  const ByteTokenizer bytes{};
  const Tokenizer& t = tok ? *tok : bytes;
  PasskeyGrid g;
  g.lengths = lengths;
  g.depths = depths;
  g.samples = samples;
  std::mt19937_64 rng(seed);
  // Data parallel: cell k of the grid is answered by rank k mod N; every rank draws every prompt
  // (cheap) so the random stream is one process's, and the cells' scores are summed over the ranks.
  int64_t cell = 0;
  for (auto L : lengths) {
    for (auto d : depths) {
      std::vector<PasskeyPrompt> batch;
      TokenRows prompts;
      int64_t n = 0;
      for (int64_t i = 0; i < samples; ++i) {
        batch.push_back(make_passkey_prompt(t, L, d, rng));
        prompts.push_back(batch.back().ids);
        n = std::max<int64_t>(n, static_cast<int64_t>(batch.back().answer.size()));
      }
      if (!dist::mine(cell++)) {  // another rank's cell
        g.accuracy.push_back(0);
        g.digit_accuracy.push_back(0);
        continue;
      }
      const TokenRows got = answerer.greedy(prompts, n);  // [samples][n]
      double exact = 0, digits = 0;
      for (int64_t i = 0; i < samples; ++i) {
        const std::string target = t.decode(batch[i].answer);  // "NNNNN" (bytes) or " NNNNN" (BPE)
        const int correct = passkey_digits_right(target, t.decode(got.at(i)));
        digits += correct / 5.0;
        exact += correct == 5;
      }
      g.accuracy.push_back(exact / samples);
      g.digit_accuracy.push_back(digits / samples);
    }
  }
  dist::sum_over_ranks({&g.accuracy, &g.digit_accuracy});  // each cell from its one rank
  return g;
}

std::vector<TaskExample> passkey_training_examples(int64_t n, int64_t T, uint64_t seed, const Tokenizer* tok) {
  const ByteTokenizer bytes{};
  const Tokenizer& t = tok ? *tok : bytes;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> depth(0.0, 1.0);
  std::vector<TaskExample> out;
  for (int64_t i = 0; i < n; ++i) {
    const double d = depth(rng);
    const std::string key = draw_key(rng);
    const int64_t answer = static_cast<int64_t>(answer_ids(t, key).size());
    auto p = token_prompt(t, T - answer, d, key);
    TaskExample e;
    e.ids = p.ids;
    e.ids.insert(e.ids.end(), p.answer.begin(), p.answer.end());
    e.mask.assign(p.ids.size(), 0);
    e.mask.resize(e.ids.size(), 1);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<Document> passkey_training_docs(int64_t n, int64_t T, int64_t per_doc, uint64_t seed, const Tokenizer* tok) {
  return task_documents(passkey_training_examples(n, T, seed, tok), T, per_doc, 0, "passkey");
}

}  // namespace statescope

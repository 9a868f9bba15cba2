// babi.cpp — single-supporting-fact questions in long prose: generation, training docs, evaluation.
#include "babi.h"

#include <torch/torch.h>

#include <algorithm>

#include "error.h"
#include "passkey.h"  // greedy_decode

namespace statescope {
namespace {

// Names and places chosen to be absent from the Austen corpus, so the prose never answers.
const std::vector<std::string> kPeople{"Sandra", "Daniel", "Gertrude", "Winston"};
const std::vector<std::string> kLocations{"bathroom", "hallway", "office", "kitchen", "bedroom", "cellar"};
const std::vector<std::string> kVerbs{"went to", "moved to", "journeyed to", "travelled to"};

struct Facts {
  std::vector<std::string> sentences;
  std::string person, answer, question;
  size_t support = 0;  // index of the supporting sentence
};

Facts draw_facts(int64_t n, std::mt19937_64& rng) {
  if (n < 1) throw Error("babi: need at least one fact, got " + std::to_string(n));
  auto pick = [&](const std::vector<std::string>& v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  Facts f;
  std::vector<std::pair<std::string, std::string>> who_where;
  for (int64_t i = 0; i < n; ++i) {
    who_where.emplace_back(pick(kPeople), pick(kLocations));
    f.sentences.push_back(" " + who_where.back().first + " " + pick(kVerbs) + " the " + who_where.back().second + ".");
  }
  f.support = std::uniform_int_distribution<size_t>(0, who_where.size() - 1)(rng);
  f.person = who_where[f.support].first;
  for (size_t i = f.support + 1; i < who_where.size(); ++i)  // the person's last fact answers
    if (who_where[i].first == f.person) f.support = i;
  f.answer = who_where[f.support].second;
  f.question = " Where is " + f.person + "? " + f.person + " is in the ";
  return f;
}

BabiSample compose(const Facts& f, int64_t length, const std::string& prose, std::mt19937_64& rng) {
  size_t fixed = f.question.size();
  for (auto& s : f.sentences) fixed += s.size();
  const int64_t fill = length - static_cast<int64_t>(fixed);
  if (fill < 0)
    throw Error("babi: length " + std::to_string(length) + " is shorter than the facts and question (" +
                std::to_string(fixed) + " bytes)");
  if (static_cast<int64_t>(prose.size()) < fill + 1)
    throw Error("babi: the distractor prose (" + std::to_string(prose.size()) + " bytes) is shorter than " +
                std::to_string(fill) + " bytes");
  const size_t start = std::uniform_int_distribution<size_t>(0, prose.size() - fill)(rng);
  const std::string text = prose.substr(start, fill);
  // Insertion points: sorted random offsets, each moved to the next sentence end (or word boundary).
  std::vector<size_t> at;
  for (size_t i = 0; i < f.sentences.size(); ++i) {
    size_t p = std::uniform_int_distribution<size_t>(0, text.size())(rng);
    // The next sentence end within 300 bytes, else the next word boundary, else the end.
    const size_t dot = text.find_first_of(".!?", p);
    const size_t space = text.find(' ', p);
    if (dot != std::string::npos && dot - p < 300) at.push_back(dot + 1);
    else if (space != std::string::npos) at.push_back(space);
    else at.push_back(text.size());  // only a word fragment left: after it
  }
  std::sort(at.begin(), at.end());
  BabiSample s;
  size_t prev = 0;
  for (size_t i = 0; i < at.size(); ++i) {
    s.prompt += text.substr(prev, at[i] - prev) + f.sentences[i];
    prev = at[i];
    if (i == f.support) s.distance = static_cast<int64_t>(s.prompt.size());  // its end, for now
  }
  s.prompt += text.substr(prev) + f.question;
  s.distance = static_cast<int64_t>(s.prompt.size()) - s.distance;
  s.answer = f.answer;
  return s;
}

}  // namespace

const std::vector<std::string>& babi_people() { return kPeople; }
const std::vector<std::string>& babi_locations() { return kLocations; }

BabiSample make_babi(int64_t length, const std::string& prose, int64_t facts, std::mt19937_64& rng) {
  return compose(draw_facts(facts, rng), length, prose, rng);
}

std::vector<Document> babi_training_docs(int64_t n, int64_t window, const std::string& prose, int64_t facts,
                                         uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Document> docs;
  for (int64_t i = 0; i < n; ++i) {
    Facts f = draw_facts(facts, rng);
    const int64_t len = window + 1 - static_cast<int64_t>(f.answer.size()) - 1;
    auto s = compose(f, len, prose, rng);
    docs.push_back({"babi" + std::to_string(i), encode_bytes(s.prompt + s.answer + ".")});
  }
  return docs;
}

std::string prose_of(const std::vector<Document>& docs, size_t max_bytes) {
  std::string s;
  for (auto& d : docs) {
    if (s.size() >= max_bytes) break;
    for (int32_t t : d.tokens) s += static_cast<char>(t);
    s += "\n\n";
  }
  return s;
}

BabiResult evaluate_babi(Mamba2LM& model, const std::vector<int64_t>& lengths, const std::string& prose, int64_t facts,
                         int64_t samples, uint64_t seed) {
  torch::NoGradGuard ng;
  model->eval();
  BabiResult r;
  r.lengths = lengths;
  r.samples = samples;
  r.candidates = static_cast<int64_t>(kLocations.size());
  std::mt19937_64 rng(seed);
  const auto dev = model->output_weight().device();
  size_t longest = 0;
  for (auto& c : kLocations) longest = std::max(longest, c.size());
  for (int64_t L : lengths) {
    std::vector<BabiSample> batch;
    for (int64_t i = 0; i < samples; ++i) batch.push_back(make_babi(L, prose, facts, rng));
    auto prompt = torch::empty({samples, L}, torch::kInt64);  // [samples, L]
    auto pa = prompt.accessor<int64_t, 2>();
    double dist = 0;
    for (int64_t i = 0; i < samples; ++i) {
      for (int64_t t = 0; t < L; ++t) pa[i][t] = static_cast<unsigned char>(batch[i].prompt[t]);
      dist += static_cast<double>(batch[i].distance);
    }
    auto out = model->forward(prompt.to(dev));
    auto last = torch::log_softmax(out.logits.select(1, L - 1).to(torch::kFloat64), -1).cpu();  // [samples, V]
    // Log-likelihood of each candidate from the carried state: [samples, candidates].
    auto score = torch::zeros({samples, r.candidates}, torch::kFloat64);
    for (int64_t c = 0; c < r.candidates; ++c) {
      const std::string& w = kLocations[c];
      auto toks = torch::empty({samples, static_cast<int64_t>(w.size())}, torch::kInt64);
      for (size_t k = 0; k < w.size(); ++k) toks.select(1, k).fill_(static_cast<unsigned char>(w[k]));
      auto sc = last.select(1, static_cast<unsigned char>(w[0])).clone();  // [samples]
      if (w.size() > 1) {
        auto o = model->forward(toks.to(dev), &out.final_state);
        auto lp = torch::log_softmax(o.logits.to(torch::kFloat64), -1).cpu();  // [samples, |w|, V]
        for (size_t k = 1; k < w.size(); ++k) sc += lp.select(1, k - 1).select(1, static_cast<unsigned char>(w[k]));
      }
      score.select(1, c).copy_(sc);
    }
    auto best = score.argmax(1);  // [samples]
    auto greedy = greedy_decode(model, prompt.to(dev), static_cast<int64_t>(longest) + 1).cpu();  // [samples, longest+1]
    double acc = 0, choice = 0;
    for (int64_t i = 0; i < samples; ++i) {
      const std::string& a = batch[i].answer;
      const auto truth = std::find(kLocations.begin(), kLocations.end(), a) - kLocations.begin();
      choice += best[i].item<int64_t>() == truth;
      bool ok = true;
      for (size_t k = 0; k < a.size() && ok; ++k) ok = greedy[i][k].item<int64_t>() == static_cast<unsigned char>(a[k]);
      const int64_t after = greedy[i][a.size()].item<int64_t>();
      acc += ok && !std::isalpha(static_cast<int>(after));
    }
    r.accuracy.push_back(acc / samples);
    r.choice_accuracy.push_back(choice / samples);
    r.mean_distance.push_back(dist / samples);
  }
  return r;
}

}  // namespace statescope

// babi.cpp — single-supporting-fact questions in long prose: generation, training docs, evaluation.
#include "core/analyses/babi/babi.h"

#include <torch/torch.h>

#include <algorithm>
#include <cctype>

#include "core/base/error.h"
#include "core/dist/comm.h"

namespace statescope {
namespace {

// Names and places chosen to be absent from the Austen corpus, so the prose never answers.
const std::vector<std::string> kPeople{"Sandra", "Daniel", "Gertrude", "Winston"};
const std::vector<std::string> kLocations{"bathroom", "hallway", "office", "kitchen", "bedroom", "cellar"};
const std::vector<std::string> kVerbs{"went to", "moved to", "journeyed to", "travelled to"};

struct Facts {
  std::vector<std::string> sentences;
  std::string person, answer, question, last_location;
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
  f.last_location = who_where.back().second;  // facts appear in the prompt in this order
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
  s.last_location = f.last_location;
  return s;
}

// The token-level sample for a BPE tokenizer: `length` ids = prose tokens with each fact's tokens
// after a sentence-ending token, then the question (without its trailing space: the answer's
// tokens carry the space).
BabiPrompt compose_tokens(const Facts& f, const Tokenizer& tok, int64_t length, const std::string& prose,
                          std::mt19937_64& rng) {
  std::vector<std::vector<int32_t>> facts;
  size_t fixed = 0;
  for (auto& s : f.sentences) facts.push_back(tok.encode(s)), fixed += facts.back().size();
  const auto question = tok.encode(f.question.substr(0, f.question.size() - 1));
  fixed += question.size();
  const int64_t fill = length - static_cast<int64_t>(fixed);
  if (fill < 0)
    throw Error("babi: length " + std::to_string(length) + " is shorter than the facts and question (" +
                std::to_string(fixed) + " tokens)");
  if (prose.empty()) throw Error("babi: the distractor prose is empty");
  // Prose tokens from a random start; the first token is dropped (the start may cut a word). A
  // start too near the end for `fill` tokens is drawn again from the text before it (each token
  // spans at least one byte, so only starts before size - fill can ever hold them).
  if (static_cast<int64_t>(prose.size()) < fill + 2)
    throw Error("babi: the distractor prose (" + std::to_string(prose.size()) + " bytes) is shorter than " +
                std::to_string(fill + 1) + " tokens");
  size_t hi = prose.size() - static_cast<size_t>(fill) - 1;
  std::vector<int32_t> text;
  for (;;) {
    const size_t start = std::uniform_int_distribution<size_t>(0, hi)(rng);
    for (size_t bytes = 4 * static_cast<size_t>(fill) + 64;; bytes *= 2) {
      text = tok.encode(prose.substr(start, bytes));
      if (static_cast<int64_t>(text.size()) >= fill + 1 || start + bytes >= prose.size()) break;
    }
    if (static_cast<int64_t>(text.size()) >= fill + 1) break;
    if (start == 0)
      throw Error("babi: the distractor prose (" + std::to_string(prose.size()) + " bytes) holds fewer than " +
                  std::to_string(fill + 1) + " tokens");
    hi = start - 1;
  }
  text.erase(text.begin());
  text.resize(static_cast<size_t>(fill));
  auto ends_sentence = [&](int32_t id) {
    const std::string s = tok.decode({id});
    return !s.empty() && (s.back() == '.' || s.back() == '!' || s.back() == '?');
  };
  std::vector<size_t> at;
  for (size_t i = 0; i < facts.size(); ++i) {
    size_t p = std::uniform_int_distribution<size_t>(0, text.size())(rng);
    size_t q = p;
    while (q < text.size() && q < p + 80 && !ends_sentence(text[q])) ++q;  // the next sentence end within 80 tokens
    at.push_back(q < text.size() && q < p + 80 ? q + 1 : p);
  }
  std::sort(at.begin(), at.end());
  BabiPrompt s;
  size_t prev = 0;
  int64_t support_end = 0;
  for (size_t i = 0; i < at.size(); ++i) {
    s.ids.insert(s.ids.end(), text.begin() + prev, text.begin() + at[i]);
    s.ids.insert(s.ids.end(), facts[i].begin(), facts[i].end());
    prev = at[i];
    if (i == f.support) support_end = static_cast<int64_t>(s.ids.size());
  }
  s.ids.insert(s.ids.end(), text.begin() + prev, text.end());
  s.ids.insert(s.ids.end(), question.begin(), question.end());
  s.distance = static_cast<int64_t>(s.ids.size()) - support_end;
  s.answer = f.answer;
  s.last_location = f.last_location;
  return s;
}

// The ids a location is scored and checked as: its bytes after "... in the ", or its BPE tokens
// with the leading space after "... in the".
std::vector<int32_t> candidate_ids(const Tokenizer& tok, const std::string& location) {
  return tok.kind() == "bytes" ? encode_bytes(location) : tok.encode(" " + location);
}

}  // namespace

BabiPrompt make_babi_prompt(const Tokenizer& tok, int64_t length, const std::string& prose, int64_t facts,
                            std::mt19937_64& rng) {
  if (tok.kind() == "bytes") {
    auto s = make_babi(length, prose, facts, rng);
    return {encode_bytes(s.prompt), s.answer, s.distance, s.last_location};
  }
  return compose_tokens(draw_facts(facts, rng), tok, length, prose, rng);
}

const std::vector<std::string>& babi_people() { return kPeople; }
const std::vector<std::string>& babi_locations() { return kLocations; }

BabiSample make_babi(int64_t length, const std::string& prose, int64_t facts, std::mt19937_64& rng) {
  return compose(draw_facts(facts, rng), length, prose, rng);
}

std::vector<TaskExample> babi_training_examples(int64_t n, int64_t T, const std::string& prose, int64_t facts,
                                                uint64_t seed, const Tokenizer* tok) {
  const ByteTokenizer bytes{};
  const Tokenizer& tk = tok ? *tok : bytes;
  std::mt19937_64 rng(seed);
  const auto dot = tk.kind() == "bytes" ? encode_bytes(".") : tk.encode(".");
  std::vector<TaskExample> out;
  for (int64_t i = 0; i < n; ++i) {
    Facts f = draw_facts(facts, rng);
    const auto answer = candidate_ids(tk, f.answer);
    const int64_t len = T - static_cast<int64_t>(answer.size() + dot.size());
    TaskExample e;
    e.ids = tk.kind() == "bytes" ? encode_bytes(compose(f, len, prose, rng).prompt) : compose_tokens(f, tk, len, prose, rng).ids;
    e.mask.assign(e.ids.size(), 0);
    e.ids.insert(e.ids.end(), answer.begin(), answer.end());
    e.ids.insert(e.ids.end(), dot.begin(), dot.end());
    e.mask.resize(e.ids.size(), 1);  // the answer and its full stop: greedy scoring needs the word to end
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<Document> babi_training_docs(int64_t n, int64_t T, int64_t per_doc, const std::string& prose,
                                         int64_t facts, uint64_t seed, const Tokenizer* tok) {
  return task_documents(babi_training_examples(n, T, prose, facts, seed, tok), T, per_doc, 0, "babi");
}

std::string prose_of(const std::vector<Document>& docs, size_t max_bytes, const Tokenizer* tok) {
  const bool bpe = tok && tok->kind() != "bytes";
  std::string s;
  for (auto& d : docs) {
    if (s.size() >= max_bytes) break;
    if (bpe) {
      s += tok->decode(std::vector<int32_t>(d.tokens.begin(), d.tokens.end()));
    } else {
      for (int32_t t : d.tokens) s += static_cast<char>(t);
    }
    s += "\n\n";
  }
  return s;
}

BabiResult evaluate_babi(RecurrentLM& model, const std::vector<int64_t>& lengths, const std::string& prose, int64_t facts,
                         int64_t samples, uint64_t seed, const Tokenizer* tok) {
  return score_babi(*model_answerer(model), lengths, prose, facts, samples, seed, tok);
}

BabiResult score_babi(Answerer& answerer, const std::vector<int64_t>& lengths, const std::string& prose, int64_t facts,
                      int64_t samples, uint64_t seed, const Tokenizer* tok) {
  if (samples < 1) throw Error("babi: need at least one question per length, got " + std::to_string(samples));
  const ByteTokenizer bytes{};
  const Tokenizer& tk = tok ? *tok : bytes;
  BabiResult r;
  r.lengths = lengths;
  r.samples = samples;
  r.candidates = static_cast<int64_t>(kLocations.size());
  std::mt19937_64 rng(seed);
  TokenRows cand;  // each location's ids
  size_t longest = 0;
  for (auto& c : kLocations) cand.push_back(candidate_ids(tk, c)), longest = std::max(longest, cand.back().size());
  // Data parallel: length k is answered by rank k mod N; every rank draws every prompt (cheap) so
  // the random stream is one process's; the model's scores are summed over the ranks at the end.
  int64_t item = 0;
  for (int64_t L : lengths) {
    std::vector<BabiPrompt> batch;
    TokenRows prompts;
    double distance = 0, recency = 0;
    for (int64_t i = 0; i < samples; ++i) {
      batch.push_back(make_babi_prompt(tk, L, prose, facts, rng));
      prompts.push_back(batch.back().ids);
      distance += static_cast<double>(batch.back().distance);
      recency += batch.back().last_location == batch.back().answer;
    }
    r.last_mentioned_accuracy.push_back(recency / samples);
    r.mean_distance.push_back(distance / samples);
    if (!dist::mine(item++)) {  // another rank's length
      r.accuracy.push_back(0);
      r.choice_accuracy.push_back(0);
      continue;
    }
    const auto score = answerer.loglik(prompts, cand);                                   // [samples][candidates]
    const auto greedy = answerer.greedy(prompts, static_cast<int64_t>(longest) + 1);     // [samples][longest+1]
    double acc = 0, choice = 0;
    for (int64_t i = 0; i < samples; ++i) {
      const auto truth = std::find(kLocations.begin(), kLocations.end(), batch[i].answer) - kLocations.begin();
      const auto& sc = score.at(i);
      choice += std::max_element(sc.begin(), sc.end()) - sc.begin() == truth;
      // Greedy: the decoded continuation starts with the answer's text, and no letter follows it.
      const std::string target = tk.decode(cand[truth]);
      const std::string got = tk.decode(greedy.at(i));
      const bool ok = got.compare(0, target.size(), target) == 0;
      acc += ok && (got.size() == target.size() || !std::isalpha(static_cast<unsigned char>(got[target.size()])));
    }
    r.accuracy.push_back(acc / samples);
    r.choice_accuracy.push_back(choice / samples);
  }
  dist::sum_over_ranks({&r.accuracy, &r.choice_accuracy});  // each length's scores from its one rank
  return r;
}

}  // namespace statescope

// babi.h — bAbI-style single-supporting-fact questions (Weston et al. 2015, task 1: "who is where")
// hidden in long distractor prose. A few facts ("Sandra went to the kitchen.") are scattered at
// sentence boundaries through corpus text; the prompt ends with "Where is Sandra? Sandra is in the"
// and the answer is the location of that person's last fact. Lengths count the model's tokens:
// bytes for byte-level models; for BPE checkpoints the prose, each fact and the question are
// encoded apart and joined (facts after a sentence-ending token), so lengths are exact in tokens.
//
// Two scores per context length: greedy (the decoded bytes start with the location word followed
// by a non-letter) and choice (the location with the highest log-likelihood among all candidates;
// chance = 1 / candidates), so a weak model's partial knowledge still shows. Beside them the
// last-mentioned baseline: answering the location of the prompt's last fact, whoever it was about
// (about 0.5 with 4 facts about 4 people) — the score a model gets from recency alone.
#pragma once
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/data/corpus.h"
#include "core/model/recurrent_lm.h"
#include "core/base/results.h"
#include "core/data/tokenizer.h"
#include "core/analyses/answerer.h"
#include "core/analyses/task_docs.h"

namespace statescope {

struct BabiSample {
  std::string prompt;       // exactly the requested length in bytes
  std::string answer;       // a location word
  int64_t distance = 0;     // bytes from the end of the supporting fact to the end of the prompt
  std::string last_location;  // the location of the prompt's last fact (the recency baseline's answer)
};

const std::vector<std::string>& babi_people();
const std::vector<std::string>& babi_locations();

// prose: distractor text (e.g. the validation corpus); facts: number of fact sentences (>= 1).
BabiSample make_babi(int64_t length, const std::string& prose, int64_t facts, std::mt19937_64& rng);

// The same in the model's tokens: exactly `length` ids; distance in tokens. Bytes: make_babi encoded.
struct BabiPrompt {
  std::vector<int32_t> ids;
  std::string answer;
  int64_t distance = 0;
  std::string last_location;
};
BabiPrompt make_babi_prompt(const Tokenizer& tok, int64_t length, const std::string& prose, int64_t facts,
                            std::mt19937_64& rng);

// Fine-tuning examples: each exactly T tokens, a prompt followed by its answer and "."; the loss
// mask on the answer and its full stop only (a model must learn where the word ends to be scored
// right greedily). Documents: task_documents (per_doc > 1 for TBTT).
std::vector<TaskExample> babi_training_examples(int64_t n, int64_t T, const std::string& prose, int64_t facts,
                                                uint64_t seed, const Tokenizer* tok = nullptr);
std::vector<Document> babi_training_docs(int64_t n, int64_t T, int64_t per_doc, const std::string& prose,
                                         int64_t facts, uint64_t seed, const Tokenizer* tok = nullptr);

// Accuracy per prompt length, `samples` fresh samples each. tok: the model's tokenizer (null: bytes);
// candidates are scored as the tokens of the location (BPE: of " location").
BabiResult evaluate_babi(RecurrentLM& model, const std::vector<int64_t>& lengths, const std::string& prose, int64_t facts,
                         int64_t samples, uint64_t seed, const Tokenizer* tok = nullptr);
// The same, answered by any Answerer (the model, or a test's oracle).
BabiResult score_babi(Answerer& answerer, const std::vector<int64_t>& lengths, const std::string& prose, int64_t facts,
                      int64_t samples, uint64_t seed, const Tokenizer* tok = nullptr);

// Joins documents' text into one prose string (documents separated by a blank line): bytes, or the
// decoded ids when `tok` is a BPE tokenizer.
std::string prose_of(const std::vector<Document>& docs, size_t max_bytes = size_t{16} << 20, const Tokenizer* tok = nullptr);

}  // namespace statescope

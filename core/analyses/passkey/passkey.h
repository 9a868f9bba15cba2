// passkey.h — the classic passkey retrieval task (Mohtashami & Jaggi 2023): filler text with
// "The pass key is NNNNN. Remember it. NNNNN is the pass key." stated once at a chosen depth, ending
// with "What is the pass key? The pass key is"; the 5-digit answer is decoded greedily, one token at
// a time from the carried state. Lengths count the model's tokens: bytes for byte-level models,
// BPE tokens for checkpoints with a tokenizer.json (the prompt is assembled from separately encoded
// header, filler, fact and question, so its length is exact; the answer is the encoding of " NNNNN").
//
// BPE models get the standard prompt: it opens with the task statement "There is an important info
// hidden inside a lot of irrelevant text. Find it and memorize them. I will quiz you about the
// important information there." Byte-level models (trained here on short windows) get the filler,
// fact and question only, so that short training prompts are mostly the part that matters.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "core/data/corpus.h"
#include "core/model/recurrent_lm.h"
#include "core/base/results.h"
#include "core/data/tokenizer.h"
#include "core/analyses/answerer.h"  // Answerer, greedy_decode
#include "core/analyses/task_docs.h"

namespace statescope {

struct PasskeySample {
  std::string prompt;   // exactly `length` bytes
  std::string key;      // 5 digits
  int64_t key_offset;   // byte offset of the key statement in the prompt
};

// length: prompt bytes (>= the fixed parts, about 120); depth in [0, 1] (0: key at the start).
PasskeySample make_passkey(int64_t length, double depth, std::mt19937_64& rng);

// A prompt in the model's tokens: exactly `length` ids; answer = the ids the model should continue
// with (bytes: the 5 digits after "... is "; BPE: encode(" NNNNN") after "... is"); key_at = the
// token index where the key statement starts. Throws Error when `length` cannot hold the fixed parts.
struct PasskeyPrompt {
  std::vector<int32_t> ids, answer;
  std::string key;
  int64_t key_at = 0;
};
PasskeyPrompt make_passkey_prompt(const Tokenizer& tok, int64_t length, double depth, std::mt19937_64& rng);

using PasskeyGrid = PasskeyResult;  // results.h

// Greedy answers are scored on decoded text: a digit counts when the decoded continuation has it at
// its place in the decoded answer; exact = all five. tok: the model's tokenizer (null: bytes).
PasskeyGrid evaluate_passkey(RecurrentLM& model, const std::vector<int64_t>& lengths, const std::vector<double>& depths,
                             int64_t samples, uint64_t seed, const Tokenizer* tok = nullptr);
// The same grid, answered by any Answerer (the model, or a test's oracle).
PasskeyGrid score_passkey(Answerer& answerer, const std::vector<int64_t>& lengths, const std::vector<double>& depths,
                          int64_t samples, uint64_t seed, const Tokenizer* tok = nullptr);

// Digits of `target` (decoded answer text) that `got` (decoded continuation) has at the same place.
int passkey_digits_right(const std::string& target, const std::string& got);

// Fine-tuning examples: each exactly T tokens, a prompt of T - |answer| tokens then the answer,
// the loss mask on the answer only. tok null: bytes.
std::vector<TaskExample> passkey_training_examples(int64_t n, int64_t T, uint64_t seed, const Tokenizer* tok = nullptr);
// Those examples as documents for windows of T + 1 (task_documents; per_doc > 1 for TBTT).
std::vector<Document> passkey_training_docs(int64_t n, int64_t T, int64_t per_doc, uint64_t seed,
                                            const Tokenizer* tok = nullptr);

}  // namespace statescope

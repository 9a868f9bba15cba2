// passkey.h — the classic passkey retrieval task (Mohtashami & Jaggi 2023), byte-level:
// filler text with "The pass key is NNNNN. Remember it. NNNNN is the pass key." stated once at a
// chosen depth, ending with "What is the pass key? The pass key is"; the 5-digit answer is decoded
// greedily, one token at a time from the carried state.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "corpus.h"
#include "mamba2_model.h"
#include "results.h"

namespace statescope {

struct PasskeySample {
  std::string prompt;   // exactly `length` bytes
  std::string key;      // 5 digits
  int64_t key_offset;   // byte offset of the key statement in the prompt
};

// length: prompt bytes (>= the fixed parts, about 120); depth in [0, 1] (0: key at the start).
PasskeySample make_passkey(int64_t length, double depth, std::mt19937_64& rng);

// Greedy decoding of `n` tokens after `prompt` tokens: one forward over the prompt, then single-token
// steps from the carried state. prompt [b, L] -> [b, n].
torch::Tensor greedy_decode(Mamba2LM& model, const torch::Tensor& prompt, int64_t n);

using PasskeyGrid = PasskeyResult;  // results.h

PasskeyGrid evaluate_passkey(Mamba2LM& model, const std::vector<int64_t>& lengths, const std::vector<double>& depths,
                             int64_t samples, uint64_t seed);

// Training documents for passkey fine-tuning: each exactly length+5 bytes (prompt + answer), so a
// window of T+1 = length+5 tokens is a whole sample.
std::vector<Document> passkey_training_docs(int64_t n, int64_t length, uint64_t seed);

}  // namespace statescope

// task_docs.h — task examples (copying, passkey, bAbI) laid out as training documents that a
// window never cuts, with a loss mask on what the model must produce. No LibTorch.
//
// Each example is padded with `pad` (masked) to exactly T tokens. A document holds `per_doc`
// examples one after another and one trailing pad token, so with training windows of T + 1 tokens:
// per_doc = 1: a document is exactly one window (zero, noise and state-passing training);
// per_doc > 1: TBTT's consecutive windows (stride T) are the examples in order, each window one
// example plus the next one's first token (masked), so the carried state crosses from one finished
// example into the next — the only thing TBTT can mean on task data.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/data/corpus.h"
#include "core/train/options.h"  // PolicySpec

namespace statescope {

struct TaskExample {
  std::vector<int32_t> ids;    // the example's tokens, at most T
  std::vector<uint8_t> mask;   // one per token: 1 = scored as a target (the answer), 0 = context
};

// Throws Error naming the example when one is empty, longer than T, or its mask size differs.
std::vector<Document> task_documents(const std::vector<TaskExample>& examples, int64_t T, int64_t per_doc,
                                     int32_t pad, const std::string& name);

// Examples per TBTT document (the stream length in examples before a row starts afresh).
constexpr int64_t kTaskExamplesPerStream = 8;

// Examples per training document under a policy: a stream of them for TBTT (so the carried state
// crosses examples), one per window otherwise.
inline int64_t examples_per_doc(const PolicySpec& ps) { return ps.kind == "tbtt" ? kTaskExamplesPerStream : 1; }

}  // namespace statescope

// evaluate.h — per-position loss far past the training context, streamed in segments with the state
// carried between them (memory does not grow with length), the windowed reference that gives the
// "excess" loss, and SSM state norms per position, layer and head.
//
// Position p (0-based) is the prediction of token p+1 from tokens 0..p. Losses are in nats.
#pragma once
#include <functional>
#include <vector>

#include "core/data/corpus.h"
#include "core/model/recurrent_lm.h"
#include "core/analyses/options.h"  // EvalOptions
#include "core/base/results.h"

namespace statescope {

// Cuts the concatenated documents into `sequences` consecutive, non-overlapping spans of length+1.
// Throws Error when the text is too short, saying how many fit.
std::vector<std::vector<int32_t>> eval_sequences(const std::vector<Document>& docs, int64_t length, int64_t sequences);

// progress(done, total) counts forward calls (segments and window groups); return false to cancel
// (throws Error "cancelled").
EvalResult evaluate_positions(RecurrentLM& model, const std::vector<Document>& docs, const EvalOptions& opt,
                              const std::function<bool(int64_t, int64_t)>& progress = {});

}  // namespace statescope

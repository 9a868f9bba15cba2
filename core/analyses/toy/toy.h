// toy.h — the toy analysis: next-token entropy per position (issue 51's proof by addition).
#pragma once
#include <vector>

#include "core/analyses/toy/result.h"
#include "core/data/corpus.h"
#include "core/model/recurrent_lm.h"

namespace statescope {
ToyResult toy_entropy(RecurrentLM& model, const std::vector<Document>& docs, int64_t length, int64_t sequences);
}  // namespace statescope

// decay.h — decay timescales (result.h): the distribution of each layer's and group's memory length
// -1 / (dt_t A) over evaluation tokens, within T and far past it. LibTorch.
#pragma once
#include <functional>
#include <vector>

#include "core/analyses/decay/result.h"
#include "core/data/corpus.h"
#include "core/model/recurrent_lm.h"

namespace statescope {

struct DecayOptions {
  int64_t T = 32;          // the training context
  int64_t length = 0;      // positions per sequence (0: 16T)
  int64_t sequences = 8;
  int64_t bins = 160;      // over log10(memory length) in [-1, 7): 0.05 decades each
  int64_t segment = 1024;  // tokens per forward; the state is carried between segments
};

// progress(done, total) per forward; false cancels (throws Error "decay cancelled").
DecayResult decay_timescales(RecurrentLM& model, const std::vector<Document>& docs, const DecayOptions& o,
                             const std::function<bool(int64_t, int64_t)>& progress = {});

// The median of a histogram over `edges` ([bins + 1]) holding `h` ([bins], summing to 1),
// interpolated linearly inside the bin where the cumulative share crosses one half; returned as
// 10^x (edges are log10 values). NaN for an empty histogram.
double histogram_median(const double* h, const std::vector<double>& edges);

}  // namespace statescope

// copying.h — synthetic copying (as in the paper's length-generalization probes): a random string
// over a small alphabet, a separator, then the same string again. A model is trained from scratch
// on windows of packed samples with strings up to L long, with any initial-state policy, and
// evaluated on strings up to 4L long: exact match and per-token accuracy, decoded greedily from a
// zero state after "s|".
//
// Byte-level: letters 'a'.. of the alphabet, separator '|', sample terminator '\n'.
// Training window = T + 1 bytes of whole samples "s|s\n" packed from its first byte (the last one
// is cut by the window), T = 4L by default, so the longest training sample (2L + 2 bytes) fits.
#pragma once
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/data/corpus.h"
#include "core/model/mamba2_model.h"
#include "core/analyses/options.h"  // CopyOptions
#include "core/base/results.h"
#include "core/compute/runtime.h"  // Compute
#include "core/train/state_policy.h"
#include "core/train/trainer.h"

namespace statescope {

// One sample "s|s\n" for a string of n letters.
std::string make_copy_sample(int64_t n, int64_t alphabet, std::mt19937_64& rng);

// Training documents: each exactly window + 1 bytes of packed samples with lengths uniform in [1, L].
std::vector<Document> copy_training_docs(int64_t n, int64_t window, int64_t L, int64_t alphabet, uint64_t seed);

// Scores greedy answers against targets: exact match (all tokens) and per-token accuracy.
// answers, targets [samples, n] (row-major) -> {exact, token accuracy}.
std::pair<double, double> score_copies(const std::vector<int32_t>& answers, const std::vector<int32_t>& targets,
                                       int64_t samples, int64_t n);

// Evaluates a model on fresh strings of each length: decodes n tokens after "s|" from a zero state.
CopyResult evaluate_copying(Mamba2LM& model, const std::vector<int64_t>& lengths, int64_t alphabet, int64_t samples,
                            uint64_t seed);

// Builds a fresh model (opt.model, seeded), trains it on copying with `policy` (after
// opt.pretrain_steps zero-state steps when set; the history then holds both phases), evaluates it.
// `progress` sees every training step (return false to cancel: status "cancelled", no evaluation).
// The model runs with `compute` (the analysed run's).
struct CopyRun {
  TrainResult train;
  CopyResult result;
};
CopyRun run_copying(const CopyOptions& opt, const PolicySpec& policy, TrainOptions train_opt,
                    const ProgressFn& progress = {}, const Compute& compute = default_compute());

}  // namespace statescope

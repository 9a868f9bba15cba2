// copying.h — synthetic copying, the protocol of Jelassi et al. (2024, "Repeat After Me") that the
// paper's length-generalization probe follows: each training sequence is one example
// BOS s SEP s EOS, s a random string over a small alphabet, padded to the window and never cut;
// the loss covers only the copy and EOS (the source half is unlearnable noise). A fresh model is
// trained with any initial-state policy and evaluated on strings up to 4L (and past) long: exact
// match and per-token accuracy of |s| greedy tokens after "BOS s SEP", from a zero state, from a
// passed state (the final state of a chain of training-format examples, as state passing trains),
// and from foreign states none of the policies trained from (prose, noise at the trained states'
// scale, another task's state: CopyResult::foreign).
//
// Byte-level tokens: letters 'a'.., BOS = 1, SEP = '|', EOS = '\n', PAD = 0. Training window
// T = 2L + 3 by default: the longest example fills it. State passing hands over the SSM state of
// the previous batch's finished examples; the conv state only when the policy asks (pass_conv = 1;
// the default here is off). TBTT streams several examples per document (task_docs.h), so its
// carried state crosses from one example into the next.
#pragma once
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/analyses/answerer.h"
#include "core/analyses/options.h"  // CopyOptions
#include "core/analyses/task_docs.h"
#include "core/base/results.h"
#include "core/compute/runtime.h"  // Compute
#include "core/data/corpus.h"
#include "core/model/recurrent_lm.h"
#include "core/train/state_policy.h"
#include "core/train/trainer.h"

namespace statescope {

constexpr int32_t kCopyPad = 0, kCopyBos = 1, kCopySep = '|', kCopyEos = '\n';

// One example BOS s SEP s EOS (2n + 3 tokens) for a string of n letters; mask on the copy and EOS.
TaskExample make_copy_example(int64_t n, int64_t alphabet, std::mt19937_64& rng);

// The default training window for strings up to L: 2L + 3 (the longest example fills it).
int64_t copy_window(int64_t L);

// Training documents: `n` examples with lengths uniform in [1, L], each padded to T tokens
// (task_documents; per_doc > 1 streams them for TBTT). Throws when T cannot hold length L.
std::vector<Document> copy_training_docs(int64_t n, int64_t T, int64_t per_doc, int64_t L, int64_t alphabet,
                                         uint64_t seed);

// Scores greedy answers against targets: exact match (all tokens) and per-token accuracy.
// answers, targets [samples, n] (row-major) -> {exact, token accuracy}.
std::pair<double, double> score_copies(const std::vector<int32_t>& answers, const std::vector<int32_t>& targets,
                                       int64_t samples, int64_t n);

// Prompts "BOS s SEP" for `samples` fresh strings of each length, answered by `answerer`:
// {exact[length], token accuracy[length]}. The same seed gives the same strings.
std::pair<std::vector<double>, std::vector<double>> score_copying(Answerer& answerer, const std::vector<int64_t>& lengths,
                                                                  int64_t alphabet, int64_t samples, uint64_t seed);

// The passed state an evaluation prompt starts from: `chain` training-format examples (lengths
// 1..L, padded to T) run one after another from zero, each from the previous one's final state;
// conv state kept only when conv_passed. -> a state for `batch` rows.
ModelState copy_passed_state(RecurrentLM& model, int64_t batch, int64_t L, int64_t T, int64_t alphabet, bool conv_passed,
                             uint64_t seed, int64_t chain = 4);

// A state like `s` whose SSM entries are IID Gaussian with the mean and standard deviation of `s`'s
// entries per (layer, head) (over batch and the head's other axes); conv states zero. Same shape.
ModelState noise_like(const ModelState& s, uint64_t seed);

// The state after `chain` examples of the reverse task (BOS s SEP reverse(s) EOS, lengths 1..L,
// padded to T) run one after another from zero: a state from another task, same format.
ModelState reverse_task_state(RecurrentLM& model, int64_t batch, int64_t L, int64_t T, int64_t alphabet, bool conv_passed,
                              uint64_t seed, int64_t chain = 4);

// Evaluates a model on fresh strings of each length, from a zero state, from a passed state, and
// from the foreign states of CopyResult::foreign (prose from `prose` documents when given: windows
// of 4T tokens, all ids < the model's vocabulary, else no prose start).
CopyResult evaluate_copying(RecurrentLM& model, const std::vector<int64_t>& lengths, int64_t alphabet, int64_t samples,
                            uint64_t seed, int64_t L, int64_t T, bool conv_passed,
                            const std::vector<Document>* prose = nullptr);

// Builds a fresh model (opt.model, seeded), trains it on copying with `policy` (after
// opt.pretrain_steps zero-state steps when set; the history then holds both phases), evaluates it.
// `progress` sees every training step (return false to cancel: status "cancelled", no evaluation).
// The model runs with `compute` (the analysed run's).
struct CopyRun {
  TrainResult train;
  CopyResult result;
};
CopyRun run_copying(const CopyOptions& opt, const PolicySpec& policy, TrainOptions train_opt,
                    const ProgressFn& progress, const Compute& compute,
                    const std::vector<Document>* prose = nullptr);

}  // namespace statescope

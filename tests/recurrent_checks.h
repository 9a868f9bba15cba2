// recurrent_checks.h — the checks every architecture behind RecurrentLM passes, written once: a model
// against an fla golden file (make_golden_fla.py's layout), two pieces with the state handed over
// against one pass, and parameter gradients from a random non-zero state on one scan against another.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "core/model/intervention.h"
#include "core/model/recurrent_lm.h"
#include "core/store/h5file.h"

namespace statescope::test {

// tests/golden/<dir> (a model and its golden.h5) on the chunked form and the sequential recurrence:
// logits, loss, final states and per-position state norms from the zero state, logits over the long
// input, logits and final states from the file's non-zero initial states.
void expect_matches_fla_golden(const std::string& dir, const std::string& architecture);

// ids split at `split`: logits, per-head norms, delta norms and final states of the two pieces (the
// state handed over) equal one pass, for each scan.
void expect_pieces_equal_one_pass(RecurrentLM& m, const torch::Tensor& ids, int64_t split,
                                  const std::vector<ScanImpl>& scans, int64_t chunk_size = 0);

// The forward's logits against the golden file's "logits" and their next-token loss over `ids`
// against its "loss", both to 1e-4; `what` names the case in failures.
void expect_logits_and_loss(const ForwardOutput& out, const torch::Tensor& ids, const H5File& g, const std::string& what);

// `steps` [b, n] fed one token at a time from `s`, which ends as the state after them; returns the
// logits [b, n, V].
torch::Tensor step_through(RecurrentLM& m, const torch::Tensor& steps, ModelState& s, const ForwardOptions& opt);

// Every parameter's gradient of the next-token loss from a random non-zero initial state (seeded).
std::vector<torch::Tensor> parameter_grads(RecurrentLM& m, const torch::Tensor& ids, ScanImpl scan, int64_t chunk_size = 0);

// tests/golden/<dir> saved by statescope and read back gives the same logits bit for bit, and the
// model holds as many parameters as its config counts.
void expect_saves_and_reloads(const std::string& dir);

// Each config text (a field added to a valid one) is refused naming the source and that field.
void expect_refused_by_name(const std::function<std::string(const std::string&)>& config,
                            const std::vector<std::pair<std::string, std::string>>& extra_and_field);

// tests/golden/<dir> (a model without short convolutions) refuses a conv state, and an ssm state of
// shape `wrong_ssm` in layer 1 naming the axes (heads, head_k_dim, head_v_dim).
void expect_misfit_states_refused(const std::string& dir, const std::vector<int64_t>& wrong_ssm);

// An fla golden model (2 layers, 4 heads), 30 seeded random ids, and its forward with per-head norms
// and log decay from the zero state, for the interventions' tests: run() applies `iv`, whose two
// layers start with no intervention.
struct InterventionProbe {
  explicit InterventionProbe(const std::string& dir);
  ForwardOutput run();
  RecurrentLM m{nullptr};
  torch::Tensor ids;  // [1, 30]
  ForwardOptions opt;
  ForwardOutput base;
  Intervention iv;
};

// Clipping layer 0's state at half the largest norm it reaches bounds every head's norm there,
// and the cap binds.
void expect_clip_bounds_the_norm(InterventionProbe& p);

}  // namespace statescope::test

// fuzz_experiment_file.cpp — an experiment file opened the way the app, `inspect` and the report open
// it: the format check, then every run through the one run-record reader (every registered
// analysis's reader), then each analysis's `inspect` lines and report section on what was read.
// Seeds: experiment files written by statescope-cli (bench/fuzz.sh) and tests/golden/hostile/sparse.h5.
#include <cstdint>
#include <sstream>
#include <string>

#include "core/base/error.h"
#include "core/store/experiment_store.h"
#include "core/store/h5file.h"
#include "core/store/run_record.h"
#include "tests/fuzz/fuzz_util.h"

using namespace statescope;

namespace {

// The promises of results.h that views index by without checking: a reader that returns a
// struct breaking one is a finding, not an error message.
template <class V>
void sized(const V& v, size_t n) {
  if (v.size() != n) __builtin_trap();
}

void check(const EvalResult& r) {
  sized(r.nll, r.length);
  sized(r.nll_seq, r.sequences * r.length);
  if (!r.windowed_nll.empty()) sized(r.windowed_nll, r.length), sized(r.windowed_seq, r.sequences * r.length);
  sized(r.norm, r.n_layer * r.length);
  sized(r.norm_per_head, r.n_layer * r.nheads * r.length);
}
void check(const EffRemResult& r) { sized(r.value, r.T.size() * r.t.size()), sized(r.stderr_, r.T.size() * r.t.size()); }
void check(const StateStatsResult& r) {
  if (r.bin_edges.size() < 2) __builtin_trap();
  const size_t cells = r.layers.size() * r.positions.size() * r.nheads;
  sized(r.histogram, cells * (r.bin_edges.size() - 1));
  sized(r.mean, cells), sized(r.std, cells);
  sized(r.fitted_mean, r.layers.size() * r.nheads), sized(r.fitted_std, r.layers.size() * r.nheads);
  sized(r.delta_norm, r.n_layer * r.length);
}
void check(const PasskeyResult& r) {
  sized(r.accuracy, r.lengths.size() * r.depths.size()), sized(r.digit_accuracy, r.lengths.size() * r.depths.size());
}
void check(const CopyResult& r) {
  sized(r.exact, r.lengths.size()), sized(r.token_accuracy, r.lengths.size());
  if (!r.exact_passed.empty()) sized(r.exact_passed, r.lengths.size()), sized(r.token_accuracy_passed, r.lengths.size());
}
void check(const UnexploredResult& r) {
  const size_t np = r.positions.size(), cells = r.n_layer * r.nheads;
  sized(r.outside, np * cells), sized(r.outside_mean, np), sized(r.outside_seq, r.sequences * np);
  sized(r.excess, np), sized(r.heldout_outside, cells), sized(r.threshold, cells);
}
void check(const BabiResult& r) {
  sized(r.accuracy, r.lengths.size()), sized(r.choice_accuracy, r.lengths.size()), sized(r.mean_distance, r.lengths.size());
  if (!r.last_mentioned_accuracy.empty()) sized(r.last_mentioned_accuracy, r.lengths.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = fuzz::write_file("experiment.h5", data, size);
  try {
    H5File f(path, H5File::Mode::Read);
    const auto runs = read_run_records(f);
    for (const auto& r : runs) {
      if (r.eval) check(*r.eval);
      if (r.effrem) check(*r.effrem);
      if (r.states) check(*r.states);
      if (r.unexplored) check(*r.unexplored);
      if (r.passkey) check(*r.passkey);
      if (r.copying) check(*r.copying);
      if (r.babi) check(*r.babi);
    }
    std::ostringstream sink;  // what inspect and the report make of it: must not read out of bounds
    for (const auto& a : analysis_records()) {
      for (const auto& r : runs)
        if (a.present(r)) a.inspect(r, sink);
      sink << a.report(runs, ReportContext{});
    }
    try {
      f.attr("/", "spec");
    } catch (const Error&) {
    }
  } catch (const Error&) {
  }
  return 0;
}

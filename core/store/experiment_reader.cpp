// experiment_reader.cpp — reading run groups back (the readers declared in experiment_store.h).
//
// A file may come from anywhere (another version, a killed writer, a hand edit, a fuzzer), so every
// reader checks what it returns: each dataset has the size its struct comment promises given the
// axes read beside it, and every number attribute is a whole number. Views, `inspect` and export
// index the structs without checking again; a file that breaks a promise is refused here with an
// Error naming the file, the run and the dataset.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/store/experiment_store.h"

namespace statescope {
namespace {

// Where a reader is: the file, the run, the group inside it; says what is wrong.
struct Group {
  const H5File& f;
  std::string run, g;  // g: "<run>/<group>"
  [[noreturn]] void fail(const std::string& what) const { throw Error(f.path() + ": run '" + run + "': " + what); }

  std::string ds(const std::string& name) const { return g + "/" + name; }
  void require(const std::string& name) const {
    if (!f.has(ds(name))) fail("has no " + g.substr(run.size() + 1) + "/" + name);
  }
  // A whole-number attribute of the group ("" or absent -> `missing`).
  int64_t attr_int(const std::string& key, int64_t missing = 0) const {
    std::string v;
    try {
      v = f.attr(g, key);
    } catch (const Error&) {
      return missing;
    }
    if (v.empty()) return missing;
    errno = 0;
    char* end = nullptr;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (errno != 0 || end == v.c_str() || *end != '\0' || x < 0)
      fail("attribute '" + key + "' of " + g.substr(run.size() + 1) + " is '" + v.substr(0, 40) +
           "', not a whole number >= 0");
    return x;
  }
  // Checks that dataset `name` holds `want` values.
  template <class V>
  void size_is(const std::string& name, const V& v, int64_t want, const std::string& shape) const {
    if (static_cast<int64_t>(v.size()) != want)
      fail("dataset " + g.substr(run.size() + 1) + "/" + name + " holds " + std::to_string(v.size()) +
           " values; its axes make it " + shape + " = " + std::to_string(want));
  }
  std::vector<double> f64(const std::string& name, std::vector<int64_t>* dims = nullptr) const {
    return f.read_f64(ds(name), dims);
  }
  std::vector<int64_t> i64(const std::string& name) const { return f.read_i64(ds(name)); }
  // Reads dataset `name` and checks it holds `want` values (`shape` names the axes in the message).
  std::vector<double> f64(const std::string& name, int64_t want, const std::string& shape) const {
    auto v = f64(name);
    size_is(name, v, want, shape);
    return v;
  }
};

// a * b * ... with every factor >= 0, or fail when the product overflows.
int64_t product(const Group& g, std::initializer_list<int64_t> xs) {
  int64_t p = 1;
  for (int64_t x : xs) {
    if (x < 0 || (x > 0 && p > (int64_t{1} << 40) / x)) g.fail("declares axes too large to be results");
    p *= x;
  }
  return p;
}

}  // namespace

EvalResult read_eval(const H5File& f, const std::string& run) {
  const Group g{f, run, run + "/ppl"};
  g.require("nll");
  EvalResult r;
  r.nll = g.f64("nll");
  r.length = static_cast<int64_t>(r.nll.size());
  r.T = g.attr_int("T");
  r.sequences = g.attr_int("sequences");
  const int64_t per_seq = product(g, {r.sequences, r.length});
  r.nll_seq = f.read_f32(g.ds("nll_per_sequence"));
  g.size_is("nll_per_sequence", r.nll_seq, per_seq, "[sequences, length]");
  if (f.has(g.ds("windowed_nll"))) {
    r.windowed_nll = g.f64("windowed_nll", r.length, "[length]");
    r.windowed_seq = f.read_f32(g.ds("windowed_nll_per_sequence"));
    g.size_is("windowed_nll_per_sequence", r.windowed_seq, per_seq, "[sequences, length]");
  }
  const Group s{f, run, run + "/state_norm"};
  if (f.has(s.ds("norm"))) {
    std::vector<int64_t> d;
    r.norm = s.f64("norm", &d);
    if (d.size() != 2 || d[1] != r.length) s.fail("dataset state_norm/norm is not [n_layer, length]");
    r.n_layer = d[0];
    r.norm_per_head = s.f64("norm_per_head", &d);
    if (d.size() != 3 || d[0] != r.n_layer || d[2] != r.length)
      s.fail("dataset state_norm/norm_per_head is not [n_layer, nheads, length]");
    r.nheads = d[1];
    const auto names = f.attr_names(s.g);
    if (std::find(names.begin(), names.end(), "head_axis") != names.end()) r.group_name = f.attr(s.g, "head_axis");
  }
  return r;
}

EffRemResult read_effrem(const H5File& f, const std::string& run) {
  const Group g{f, run, run + "/effrem"};
  g.require("value");
  EffRemResult r;
  r.T = g.i64("T");
  r.t = g.i64("t");
  const int64_t n = product(g, {static_cast<int64_t>(r.T.size()), static_cast<int64_t>(r.t.size())});
  r.value = g.f64("value", n, "[T, t]");
  r.stderr_ = g.f64("stderr", n, "[T, t]");
  r.sequences = g.attr_int("sequences");
  r.forward_tokens = g.attr_int("forward_tokens");
  return r;
}

StateStatsResult read_state_stats(const H5File& f, const std::string& run) {
  const Group g{f, run, run + "/state_stats"};
  g.require("histogram");
  StateStatsResult r;
  r.positions = g.i64("position");
  r.layers = g.i64("layer");
  r.nheads = static_cast<int64_t>(g.i64("head").size());
  r.bin_edges = g.f64("bin_edges");
  if (r.bin_edges.size() < 2) g.fail("dataset state_stats/bin_edges holds fewer than 2 edges");
  const int64_t nl = static_cast<int64_t>(r.layers.size()), np = static_cast<int64_t>(r.positions.size());
  const int64_t bins = static_cast<int64_t>(r.bin_edges.size()) - 1;
  r.histogram = g.f64("histogram", product(g, {nl, np, r.nheads, bins}), "[layer, position, head, bins]");
  r.mean = g.f64("mean", product(g, {nl, np, r.nheads}), "[layer, position, head]");
  r.std = g.f64("std", product(g, {nl, np, r.nheads}), "[layer, position, head]");
  r.fitted_mean = g.f64("fitted_mean", product(g, {nl, r.nheads}), "[layer, head]");
  r.fitted_std = g.f64("fitted_std", product(g, {nl, r.nheads}), "[layer, head]");
  std::vector<int64_t> d;
  r.delta_norm = g.f64("delta_norm", &d);
  if (d.size() != 2) g.fail("dataset state_stats/delta_norm is not [n_layer, length]");
  r.n_layer = d[0];
  r.length = d[1];
  r.T = g.attr_int("T");
  r.sequences = g.attr_int("sequences");
  return r;
}

UnexploredResult read_unexplored(const H5File& f, const std::string& run) {
  const Group g{f, run, run + "/unexplored"};
  g.require("outside");
  UnexploredResult r;
  r.positions = g.i64("position");
  r.T = g.attr_int("T"), r.length = g.attr_int("length"), r.sequences = g.attr_int("sequences");
  r.n_layer = g.attr_int("n_layer"), r.nheads = g.attr_int("nheads"), r.components = g.attr_int("components");
  r.train_samples = g.attr_int("train_samples"), r.train_steps = g.attr_int("train_steps");
  r.train_batch = g.attr_int("train_batch");
  r.recorded_samples = g.attr_int("recorded_samples");  // 0 in files from before it was recorded
  const int64_t np = static_cast<int64_t>(r.positions.size());
  r.outside = g.f64("outside", product(g, {np, r.n_layer, r.nheads}), "[position, layer, head]");
  r.outside_mean = g.f64("outside_mean", np, "[position]");
  r.outside_seq = g.f64("outside_seq", product(g, {r.sequences, np}), "[sequence, position]");
  r.excess = g.f64("excess", np, "[position]");
  r.heldout_outside = g.f64("heldout_outside", product(g, {r.n_layer, r.nheads}), "[layer, head]");
  r.threshold = g.f64("threshold", product(g, {r.n_layer, r.nheads}), "[layer, head]");
  const auto rho = g.f64("excess_rho", 3, "[rho, low, high]");
  r.excess_rho = rho[0], r.excess_rho_lo = rho[1], r.excess_rho_hi = rho[2];
  r.quantile = g.f64("quantile", 1, "[1]")[0];
  return r;
}

SweepCell read_sweep_cell(const H5File& f, const std::string& run) {
  SweepCell c;
  try {
    const auto spec = nlohmann::json::parse(f.attr(run, "spec"));
    const auto& info = spec.at("run");
    if (!info.contains("sweep_cell")) return c;
    c.group = info.at("sweep_group").get<std::string>();
    for (auto it = info.at("sweep_cell").begin(); it != info.at("sweep_cell").end(); ++it)
      c.values.emplace_back(it.key(), it.value().get<double>());
  } catch (const nlohmann::json::exception&) {
    return {};  // no spec or not ours: not a sweep's run
  } catch (const Error&) {
    return {};
  }
  return c;
}

PasskeyResult read_passkey(const H5File& f, const std::string& run) {
  const Group g{f, run, run + "/passkey"};
  g.require("accuracy");
  PasskeyResult r;
  r.lengths = g.i64("length");
  r.depths = g.f64("depth");
  const int64_t n = product(g, {static_cast<int64_t>(r.lengths.size()), static_cast<int64_t>(r.depths.size())});
  r.accuracy = g.f64("accuracy", n, "[length, depth]");
  r.digit_accuracy = g.f64("digit_accuracy", n, "[length, depth]");
  r.samples = g.attr_int("samples");
  return r;
}

CopyResult read_copying(const H5File& f, const std::string& run) {
  const Group g{f, run, run + "/copying"};
  g.require("exact");
  CopyResult r;
  r.lengths = g.i64("length");
  const int64_t n = static_cast<int64_t>(r.lengths.size());
  r.exact = g.f64("exact", n, "[length]");
  r.token_accuracy = g.f64("token_accuracy", n, "[length]");
  if (f.has(g.ds("exact_passed"))) {  // files before the passed-state evaluation have none
    r.exact_passed = g.f64("exact_passed", n, "[length]");
    r.token_accuracy_passed = g.f64("token_accuracy_passed", n, "[length]");
  }
  r.conv_passed = g.attr_int("conv_passed") == 1;
  r.L = g.attr_int("L");
  r.alphabet = g.attr_int("alphabet");
  r.T = g.attr_int("T");
  r.samples = g.attr_int("samples");
  return r;
}

BabiResult read_babi(const H5File& f, const std::string& run) {
  const Group g{f, run, run + "/babi"};
  g.require("accuracy");
  BabiResult r;
  r.lengths = g.i64("length");
  const int64_t n = static_cast<int64_t>(r.lengths.size());
  r.accuracy = g.f64("accuracy", n, "[length]");
  r.choice_accuracy = g.f64("choice_accuracy", n, "[length]");
  if (f.has(g.ds("last_mentioned_accuracy")))  // files before the recency baseline have none
    r.last_mentioned_accuracy = g.f64("last_mentioned_accuracy", n, "[length]");
  r.mean_distance = g.f64("mean_distance", n, "[length]");
  r.samples = g.attr_int("samples");
  r.candidates = g.attr_int("candidates");
  return r;
}

std::vector<StepInfo> read_train(const H5File& f, const std::string& run) {
  const std::string g = run + "/train";
  std::vector<StepInfo> out;
  if (!f.has(g + "/loss")) return out;
  auto step = f.read_i64(g + "/step");
  auto loss = f.read_f64(g + "/loss"), lr = f.read_f64(g + "/lr"), gn = f.read_f64(g + "/grad_norm");
  const size_t n = std::min({step.size(), loss.size(), lr.size(), gn.size()});  // a killed writer may leave one short
  for (size_t i = 0; i < n; ++i) {
    StepInfo s;
    s.step = step[i];
    s.steps = step[n - 1];
    s.loss = loss[i];
    s.lr = lr[i];
    s.grad_norm = gn[i];
    out.push_back(s);
  }
  return out;
}

}  // namespace statescope

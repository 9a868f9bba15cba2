// experiment_store.cpp — writing and reading run groups.
#include "core/store/experiment_store.h"

#include <algorithm>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>

#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/names.h"
#include "core/base/version.h"

namespace statescope {

std::string iso8601_now() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {
bool has_attr(const H5File& f, const std::string& object, const std::string& key) {
  const auto names = f.attr_names(object);
  return std::find(names.begin(), names.end(), key) != names.end();
}

// A NeXus NXdata group: `signal` names the plotted dataset, `axes` one dataset per signal dimension
// (a string for one dimension, an array of strings for more) and <axis>_indices the dimension each
// axis spans, so NeXus viewers (nexusformat, silx, NeXpy) plot it without help.
void nx_data(H5File& f, const std::string& group, const std::string& signal, const std::vector<std::string>& axes) {
  f.set_attr(group, "NX_class", "NXdata");
  f.set_attr(group, "signal", signal);
  if (axes.size() == 1) f.set_attr(group, "axes", axes[0]);
  else f.set_attr_strings(group, "axes", axes);
  for (size_t i = 0; i < axes.size(); ++i) f.set_attr_i64(group, axes[i] + "_indices", static_cast<int64_t>(i));
}

// A run's `default` plot: the per-position loss when there is one, else the first other result in
// this order, else its training loss.
void prefer_default(H5File& f, const std::string& run, const std::string& child) {
  static const std::vector<std::string> order{"ppl", "effrem", "passkey", "copying", "babi", "unexplored", "train"};
  auto rank = [&](const std::string& c) { return std::find(order.begin(), order.end(), c) - order.begin(); };
  const std::string now = has_attr(f, run, "default") ? f.attr(run, "default") : "train";
  if (rank(child) <= rank(now)) f.set_attr(run, "default", child);
}
}  // namespace

ExperimentFile::ExperimentFile(std::unique_ptr<H5File> f, std::unique_ptr<StagedOutput> out, std::string path)
    : out_(std::move(out)), f_(std::move(f)), path_(std::move(path)), uncaught_(std::uncaught_exceptions()) {}

ExperimentFile::~ExperimentFile() {
  if (closed_) return;
  try {
    close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "statescope: %s\n", e.what());
  }
}

std::string ExperimentFile::close() {
  if (closed_) return path_;
  closed_ = true;
  const bool write_failed = f_->failed();
  std::string close_error;
  try {
    f_->close();
  } catch (const Error& e) {
    close_error = e.what();
  }
  f_.reset();
  if (!out_) {
    if (!close_error.empty()) throw Error(close_error);
    return path_;
  }
  using Outcome = StagedOutput::Outcome;
  if (write_failed || !close_error.empty()) {
    out_->finish(Outcome::Discard);
    const std::string what = out_->replaces() ? " was left as it was" : " was not written";
    if (!close_error.empty()) throw Error(close_error + "; " + path_ + what);
    std::fprintf(stderr, "statescope: a write failed: %s%s (the unfinished copy was removed)\n", path_.c_str(), what.c_str());
    return "";
  }
  const bool unwinding = std::uncaught_exceptions() > uncaught_;
  bool all_finished = !unwinding;
  std::lock_guard<std::mutex> g(begun_mu_);
  if (unwinding && begun_.empty()) return out_->finish(Outcome::Discard);  // refused before any run began
  for (const auto& [run, status] : begun_) all_finished = all_finished && status == "finished";
  return out_->finish(all_finished ? Outcome::Replace : Outcome::KeepNew);
}

std::unique_ptr<ExperimentFile> ExperimentFile::create(const std::string& path, const WriteOptions& w) {
  std::unique_ptr<StagedOutput> out;
  if (w.in_place) {
    check_output(path, OutputRule{w.overwrite, w.inputs, false});
  } else {
    out = std::make_unique<StagedOutput>(path, OutputRule{w.overwrite, w.inputs, false});
  }
  auto f = std::make_unique<H5File>(out ? out->staging() : path, H5File::Mode::Create);
  f->set_attr("/", "format", kFormatName);
  f->set_attr_i64("/", "format_version", std::strtol(kFormatVersion, nullptr, 10));
  f->set_attr("/", "NX_class", "NXroot");
  f->set_attr("/", "creator", kVersionString);
  f->set_attr("/", "created", iso8601_now());
  f->flush();
  return std::unique_ptr<ExperimentFile>(new ExperimentFile(std::move(f), std::move(out), path));
}

void check_experiment_file(const H5File& f) {
  std::string fmt, version;
  try {
    fmt = f.attr("/", "format");
    version = f.attr("/", "format_version");
  } catch (const Error&) {
  }
  if (fmt != kFormatName)
    throw Error(f.path() + ": not a statescope experiment file (root attribute 'format' is '" + fmt + "')");
  char* end = nullptr;
  const long v = std::strtol(version.c_str(), &end, 10);
  if (version.empty() || *end != '\0' || v < 1)
    throw Error(f.path() + ": root attribute 'format_version' is '" + version + "', not a version number");
  if (v > std::strtol(kFormatVersion, nullptr, 10))
    throw Error(f.path() + ": written by a newer statescope (format_version " + version + "; this one reads up to " +
                kFormatVersion + ")");
}

std::vector<std::string> run_names(const H5File& f) {
  std::vector<std::string> out;
  for (auto& name : f.children("/"))
    if (f.is_group(name)) {
      const auto attrs = f.attr_names(name);
      if (std::find(attrs.begin(), attrs.end(), "status") != attrs.end()) out.push_back(name);
    }
  return out;
}

std::unique_ptr<ExperimentFile> ExperimentFile::open(const std::string& path, const WriteOptions& w) {
  {  // refused before a copy is made: not ours, or from a newer version
    require_regular_file(path, "the experiment file to append to");
    H5File probe(path, H5File::Mode::Read);
    check_experiment_file(probe);
  }
  std::unique_ptr<StagedOutput> out;
  if (!w.in_place) out = std::make_unique<StagedOutput>(path, OutputRule{true, w.inputs, false}, StagedOutput::Start::CopyTarget);
  auto f = std::make_unique<H5File>(out ? out->staging() : path, H5File::Mode::ReadWrite);
  return std::unique_ptr<ExperimentFile>(new ExperimentFile(std::move(f), std::move(out), path));
}

void ExperimentFile::begin_run(const RunInfo& i, bool replace) {
  check_name(i.name, path_, "run name");
  if (!replace && f_->has(i.name))
    throw Error(path_ + ": already holds a run '" + i.name + "'; choose another --run or pass --replace-run");
  const std::string g = i.name;
  for (const char* d : {"step", "loss", "lr", "grad_norm"})
    f_->create_growable(g + "/train/" + d, std::string(d) == "step");
  f_->set_attr(g, "spec", i.spec_json);
  f_->set_attr(g, "model", i.model);
  f_->set_attr(g, "checkpoint_hash", i.checkpoint_hash);
  f_->set_attr(g, "intervention", i.intervention);
  f_->set_attr_i64(g, "seed", static_cast<int64_t>(i.seed));
  f_->set_attr(g, "versions", i.versions);
  f_->set_attr(g, "device", i.device);
  f_->set_attr(g, "started", iso8601_now());
  nx_data(*f_, g + "/train", "loss", {"step"});
  f_->set_attr(g, "NX_class", "NXentry");
  f_->set_attr(g, "default", "train");  // until a result with a better plot arrives (prefer_default)
  f_->set_attr(g, "status", "running");
  {
    std::lock_guard<std::mutex> g_(begun_mu_);
    begun_[g] = "running";
  }
  // The file's plot is its first run's (by name, so the same whatever order parallel jobs start in).
  f_->set_attr("/", "default", run_names(*f_).front());
  f_->flush();
}

void ExperimentFile::append_train(const std::string& run, const StepInfo& s) {
  const int64_t step = s.step;
  if (!f_->has(run + "/train/step")) {  // a nested training record, e.g. run/copying/train
    for (const char* d : {"step", "loss", "lr", "grad_norm"})
      f_->create_growable(run + "/train/" + d, std::string(d) == "step");
    nx_data(*f_, run + "/train", "loss", {"step"});
  }
  f_->append(run + "/train/step", &step, 1);
  f_->append(run + "/train/loss", &s.loss, 1);
  f_->append(run + "/train/lr", &s.lr, 1);
  f_->append(run + "/train/grad_norm", &s.grad_norm, 1);
  f_->flush();
}

void ExperimentFile::write_eval(const std::string& run, const EvalResult& r) {
  const int64_t L = r.length, n = std::max<int64_t>(1, r.sequences);
  std::vector<int64_t> pos(L);
  for (int64_t i = 0; i < L; ++i) pos[i] = i;
  const std::string p = run + "/ppl";
  f_->write(p + "/position", pos.data(), {L});
  f_->write(p + "/nll", r.nll.data(), {L});
  // Standard errors over sequences, per position.
  auto stderr_of = [&](const std::vector<float>& a, const std::vector<float>* b) {
    std::vector<double> se(L, 0.0);
    if (n < 2) return se;
    for (int64_t i = 0; i < L; ++i) {
      double s1 = 0, s2 = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double v = a[k * L + i] - (b ? (*b)[k * L + i] : 0.0f);
        s1 += v;
        s2 += v * v;
      }
      const double mean = s1 / n;
      se[i] = std::sqrt(std::max(0.0, s2 / n - mean * mean) / static_cast<double>(n - 1));
    }
    return se;
  };
  auto se = stderr_of(r.nll_seq, nullptr);
  f_->write(p + "/nll_stderr", se.data(), {L});
  f_->write(p + "/nll_per_sequence", r.nll_seq.data(), {n, L});
  nx_data(*f_, p, "nll", {"position"});
  prefer_default(*f_, run, "ppl");
  f_->set_attr(p, "units", "nats per token; position p predicts token p+1");
  f_->set_attr_i64(p, "T", r.T);
  f_->set_attr_i64(p, "sequences", r.sequences);
  if (!r.windowed_nll.empty()) {
    f_->write(p + "/windowed_nll", r.windowed_nll.data(), {L});
    f_->write(p + "/windowed_nll_per_sequence", r.windowed_seq.data(), {n, L});
    std::vector<double> ex(L);
    for (int64_t i = 0; i < L; ++i) ex[i] = r.nll[i] - r.windowed_nll[i];
    auto exse = stderr_of(r.nll_seq, &r.windowed_seq);
    f_->write(p + "/excess", ex.data(), {L});
    f_->write(p + "/excess_stderr", exse.data(), {L});
  }
  if (!r.norm.empty()) {
    const std::string s = run + "/state_norm";
    std::vector<int64_t> layer(r.n_layer), head(r.nheads);
    for (int64_t i = 0; i < r.n_layer; ++i) layer[i] = i;
    for (int64_t i = 0; i < r.nheads; ++i) head[i] = i;
    f_->write(s + "/position", pos.data(), {L});
    f_->write(s + "/layer", layer.data(), {r.n_layer});
    f_->write(s + "/head", head.data(), {r.nheads});
    f_->write(s + "/norm", r.norm.data(), {r.n_layer, L});
    f_->write(s + "/norm_per_head", r.norm_per_head.data(), {r.n_layer, r.nheads, L});
    nx_data(*f_, s, "norm", {"layer", "position"});
    f_->set_attr(s, "units", "Frobenius norm of the SSM state after token p, mean over sequences");
    f_->set_attr(s, "head_axis", r.group_name);  // what 'head' counts: heads, or Mamba-1's channel groups
    f_->set_attr_i64(s, "T", r.T);  // positions >= T lie beyond the training context
  }
  f_->flush();
}

void ExperimentFile::write_effrem(const std::string& run, const EffRemResult& r) {
  const std::string g = run + "/effrem";
  const int64_t nT = static_cast<int64_t>(r.T.size()), nt = static_cast<int64_t>(r.t.size());
  f_->write(g + "/T", r.T.data(), {nT});
  f_->write(g + "/t", r.t.data(), {nt});
  f_->write(g + "/value", r.value.data(), {nT, nt});
  f_->write(g + "/stderr", r.stderr_.data(), {nT, nt});
  nx_data(*f_, g, "value", {"T", "t"});
  prefer_default(*f_, run, "effrem");
  f_->set_attr(g, "definition", "TV(p(.|x[0:T]), p(.|x[t:T])), mean over sequences; NaN where t >= T");
  f_->set_attr_i64(g, "sequences", r.sequences);
  f_->set_attr_i64(g, "forward_tokens", r.forward_tokens);
  f_->flush();
}

void ExperimentFile::write_unexplored(const std::string& run, const UnexploredResult& r) {
  const std::string g = run + "/unexplored";
  const int64_t np = static_cast<int64_t>(r.positions.size()), NL = r.n_layer, H = r.nheads;
  f_->write(g + "/position", r.positions.data(), {np});
  f_->write(g + "/outside", r.outside.data(), {np, NL, H});
  f_->write(g + "/outside_mean", r.outside_mean.data(), {np});
  f_->write(g + "/outside_seq", r.outside_seq.data(), {r.sequences, np});
  f_->write(g + "/excess", r.excess.data(), {np});
  f_->write(g + "/heldout_outside", r.heldout_outside.data(), {NL, H});
  f_->write(g + "/threshold", r.threshold.data(), {NL, H});
  const std::vector<double> rho{r.excess_rho, r.excess_rho_lo, r.excess_rho_hi}, q{r.quantile};
  f_->write(g + "/excess_rho", rho.data(), {3});
  f_->write(g + "/quantile", q.data(), {1});
  nx_data(*f_, g, "outside_mean", {"position"});
  prefer_default(*f_, run, "unexplored");
  for (auto [k, v] : {std::pair{"T", r.T}, {"length", r.length}, {"sequences", r.sequences}, {"n_layer", NL},
                      {"nheads", H}, {"components", r.components}, {"train_samples", r.train_samples},
                      {"train_steps", r.train_steps}, {"train_batch", r.train_batch},
                      {"recorded_samples", r.recorded_samples}})
    f_->set_attr_i64(g, k, v);
  f_->set_attr(g, "definition",
               "outside[position, layer, head]: fraction of evaluation sequences whose SSM state after the position "
               "lies outside the envelope of the states met in training (training windows replayed under the run's "
               "policy; per (layer, head) PCA score T^2/k + Q/E[Q] above the quantile of held-out training scores); "
               "heldout_outside: the same for training states held out of the fit and the threshold; excess: mean "
               "excess loss over the stride ending at each position (NaN below T); excess_rho: Spearman rank "
               "correlation of outside_mean and excess over positions >= T, with a 95% interval from resampling "
               "sequences");
  f_->flush();
}

void ExperimentFile::write_state_stats(const std::string& run, const StateStatsResult& r) {
  const std::string g = run + "/state_stats";
  const int64_t np = static_cast<int64_t>(r.positions.size()), nl = static_cast<int64_t>(r.layers.size());
  const int64_t nb = static_cast<int64_t>(r.bin_edges.size()) - 1, H = r.nheads;
  std::vector<int64_t> head(H), pos(r.length);
  for (int64_t i = 0; i < H; ++i) head[i] = i;
  for (int64_t i = 0; i < r.length; ++i) pos[i] = i;
  f_->write(g + "/position", r.positions.data(), {np});
  f_->write(g + "/layer", r.layers.data(), {nl});
  f_->write(g + "/head", head.data(), {H});
  f_->write(g + "/bin_edges", r.bin_edges.data(), {nb + 1});
  f_->write(g + "/histogram", r.histogram.data(), {nl, np, H, nb});
  f_->write(g + "/mean", r.mean.data(), {nl, np, H});
  f_->write(g + "/std", r.std.data(), {nl, np, H});
  f_->write(g + "/fitted_mean", r.fitted_mean.data(), {nl, H});
  f_->write(g + "/fitted_std", r.fitted_std.data(), {nl, H});
  f_->write(g + "/delta_position", pos.data(), {r.length});
  f_->write(g + "/delta_norm", r.delta_norm.data(), {r.n_layer, r.length});
  nx_data(*f_, g, "mean", {"layer", "position", "head"});  // the per-(layer, position, head) state mean
  f_->set_attr_i64(g, "T", r.T);
  f_->set_attr_i64(g, "sequences", r.sequences);
  f_->set_attr(g, "definition",
               "histogram: density of SSM state entries of each (layer, position, head) over sequences, headdim and "
               "d_state; fitted_*: Gaussian per (layer, head) of states at position T-1; delta_norm: mean "
               "||S_t - S_{t-1}||_F");
  f_->flush();
}

void ExperimentFile::write_passkey(const std::string& run, const PasskeyResult& r) {
  const std::string g = run + "/passkey";
  const int64_t nl = static_cast<int64_t>(r.lengths.size()), nd = static_cast<int64_t>(r.depths.size());
  f_->write(g + "/length", r.lengths.data(), {nl});
  f_->write(g + "/depth", r.depths.data(), {nd});
  f_->write(g + "/accuracy", r.accuracy.data(), {nl, nd});
  f_->write(g + "/digit_accuracy", r.digit_accuracy.data(), {nl, nd});
  nx_data(*f_, g, "accuracy", {"length", "depth"});
  prefer_default(*f_, run, "passkey");
  f_->set_attr_i64(g, "samples", r.samples);
  f_->set_attr(g, "definition", "greedy decoding of the 5-digit key; accuracy = all 5 digits right");
  f_->flush();
}

void ExperimentFile::write_copying(const std::string& run, const CopyResult& r) {
  const std::string g = run + "/copying";
  const int64_t n = static_cast<int64_t>(r.lengths.size());
  f_->write(g + "/length", r.lengths.data(), {n});
  f_->write(g + "/exact", r.exact.data(), {n});
  f_->write(g + "/token_accuracy", r.token_accuracy.data(), {n});
  if (!r.exact_passed.empty()) {
    f_->write(g + "/exact_passed", r.exact_passed.data(), {n});
    f_->write(g + "/token_accuracy_passed", r.token_accuracy_passed.data(), {n});
  }
  f_->set_attr_i64(g, "conv_passed", r.conv_passed ? 1 : 0);
  nx_data(*f_, g, "exact", {"length"});
  prefer_default(*f_, run, "copying");
  f_->set_attr_i64(g, "L", r.L);
  f_->set_attr_i64(g, "alphabet", r.alphabet);
  f_->set_attr_i64(g, "T", r.T);
  f_->set_attr_i64(g, "samples", r.samples);
  f_->set_attr(g, "definition",
               "fresh model trained on examples BOS s SEP s EOS (strings of 1..L letters, one example per window of "
               "T tokens, padded, loss on the copy and EOS only); evaluated on 'BOS s SEP', decoding |s| tokens "
               "greedily; exact = whole string right, token_accuracy = fraction of right letters; *_passed: each "
               "prompt starts from the final state of a training-format example (conv state too iff conv_passed)");
  f_->flush();
}

void ExperimentFile::write_babi(const std::string& run, const BabiResult& r) {
  const std::string g = run + "/babi";
  const int64_t n = static_cast<int64_t>(r.lengths.size());
  f_->write(g + "/length", r.lengths.data(), {n});
  f_->write(g + "/accuracy", r.accuracy.data(), {n});
  f_->write(g + "/choice_accuracy", r.choice_accuracy.data(), {n});
  if (!r.last_mentioned_accuracy.empty()) f_->write(g + "/last_mentioned_accuracy", r.last_mentioned_accuracy.data(), {n});
  f_->write(g + "/mean_distance", r.mean_distance.data(), {n});
  nx_data(*f_, g, "accuracy", {"length"});
  prefer_default(*f_, run, "babi");
  f_->set_attr_i64(g, "samples", r.samples);
  f_->set_attr_i64(g, "candidates", r.candidates);
  f_->set_attr(g, "definition",
               "single-supporting-fact 'where is X?' in distractor prose; accuracy = greedy answer is the location; "
               "choice_accuracy = most likely of the candidate locations is right (chance 1/candidates); "
               "last_mentioned_accuracy = baseline answering the location of the prompt's last fact; "
               "mean_distance = tokens from the supporting fact to the end of the prompt");
  f_->flush();
}

void ExperimentFile::set_status(const std::string& run, const std::string& status, const std::string& message) {
  f_->set_attr(run, "finished", iso8601_now());
  f_->set_attr(run, "message", message);
  f_->set_attr(run, "status", status);  // last
  std::lock_guard<std::mutex> g(begun_mu_);
  if (auto it = begun_.find(run); it != begun_.end()) it->second = status;
  f_->flush();
}

}  // namespace statescope

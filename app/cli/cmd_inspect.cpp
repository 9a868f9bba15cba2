// cmd_inspect.cpp — `inspect FILE.h5 [MORE.h5 ...]`: a readable summary of every group in experiment
// files; with several files, one closing table compares all their runs (named file/run).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <numeric>

#include "app/cli/commands.h"
#include "app/cli/common.h"
#include "core/base/error.h"
#include "core/experiment/experiment.h"
#include "core/store/experiment_store.h"

namespace statescope::cli {
namespace {

void walk(const H5File& f, const std::string& group, int depth) {
  for (auto& name : f.children(group)) {
    const std::string path = group == "/" ? name : group + "/" + name;
    const std::string pad(2 * depth, ' ');
    if (f.is_group(path)) {
      std::cout << pad << name << "/\n";
      walk(f, path, depth + 1);
    } else {
      std::cout << pad << name << " " << dims_str(f.dims(path)) << "\n";
    }
  }
}

// Which heads' states grow past T: ||h|| at the last position / at T-1, per (layer, head).
void head_growth(const EvalResult& r) {
  const int64_t L = r.length, rows = r.n_layer * r.nheads;
  if (r.T < 1 || r.T > L || static_cast<int64_t>(r.norm_per_head.size()) != rows * L || rows == 0) return;
  std::vector<std::pair<double, int64_t>> g;
  for (int64_t i = 0; i < rows; ++i) {
    const double ref = r.norm_per_head[i * L + r.T - 1];
    if (ref > 0) g.emplace_back(r.norm_per_head[i * L + L - 1] / ref, i);
  }
  if (g.empty()) return;
  std::sort(g.begin(), g.end(), std::greater<>());  // largest growth first
  const size_t n = g.size();
  const double median = n % 2 ? g[n / 2].first : 0.5 * (g[n / 2 - 1].first + g[n / 2].first);
  const auto over5 = std::count_if(g.begin(), g.end(), [](const auto& x) { return x.first > 5; });
  std::cout << "  state norm per head, position " << L << " / position " << r.T << ": median " << std::fixed
            << std::setprecision(2) << median << ", largest";
  for (size_t k = 0; k < std::min<size_t>(3, g.size()); ++k)
    std::cout << (k ? ", " : " ") << std::setprecision(1) << g[k].first << " (L" << g[k].second / r.nheads << " H"
              << g[k].second % r.nheads << ")";
  std::cout << "; " << over5 << "/" << g.size() << " heads grew more than 5x\n" << std::defaultfloat;
}

// One file's report; its runs' summaries (named prefix + run) go to `sums` for the closing table.
// A report printed in the order a reader reads it, one group after the other (~80 lines on purpose).
void inspect_file(const std::string& path, const std::string& prefix, bool tree, std::vector<RunSummary>& sums) {
  H5File f(path, H5File::Mode::Read);
  check_experiment_file(f);  // a foreign or newer file is named, not listed as runs
  const auto runs = run_names(f);
  if (runs.empty()) throw Error(path + ": holds no runs (damaged, or no run was ever started in it)");
  std::cout << path << "\n";
  for (auto& a : f.attr_names("/"))
    if (a != "spec") std::cout << "  " << a << ": " << f.attr("/", a) << "\n";
  for (auto& run : runs) {
    auto get = [&](const char* k) {
      try { return f.attr(run, k); } catch (const Error&) { return std::string("?"); }
    };
    std::cout << "run " << run << ": status " << get("status") << ", intervention " << get("intervention")
              << ", seed " << get("seed") << ", model " << get("model") << "\n";
    const std::string msg = get("message");
    if (!msg.empty() && msg != "?") std::cout << "  message: " << msg << "\n";
    if (f.has(run + "/train/loss")) {
      auto loss = f.read_f64(run + "/train/loss");
      if (!loss.empty())
        std::cout << "  train: " << loss.size() << " steps, loss " << loss.front() << " -> " << loss.back()
                  << " nats/token\n";
    }
    if (f.has(run + "/ppl/nll")) {
      auto r = read_eval(f, run);
      auto s = summarize(r, prefix + run, get("intervention"));
      s.status = get("status");
      const SweepCell cell = read_sweep_cell(f, run);  // a sweep's run: its group for the sweep table
      s.group = prefix + cell.group, s.cell = cell.values;
      sums.push_back(s);
      std::cout << "  eval: " << r.sequences << " sequences x " << r.length << " positions, T = " << r.T << "\n";
      head_growth(r);
    }
    if (f.has(run + "/effrem/value")) {
      auto e = read_effrem(f, run);
      std::cout << "  effrem: T = {";
      for (size_t i = 0; i < e.T.size(); ++i) std::cout << (i ? ", " : "") << e.T[i];
      std::cout << "}, " << e.t.size() << " truncation points, " << e.sequences << " sequences, "
                << e.forward_tokens << " forward tokens; EffRem at the largest grid t < T:";
      for (size_t i = 0; i < e.T.size(); ++i) {
        double last = NAN;
        for (size_t j = 0; j < e.t.size(); ++j)
          if (!std::isnan(e.value[i * e.t.size() + j])) last = e.value[i * e.t.size() + j];
        std::cout << " " << last;
      }
      std::cout << "\n";
    }
    if (f.has(run + "/state_stats/histogram")) {
      auto pos = f.read_i64(run + "/state_stats/position");
      auto std_ = f.read_f64(run + "/state_stats/std");
      auto fit = f.read_f64(run + "/state_stats/fitted_std");
      std::cout << "  state_stats: positions {";
      for (size_t i = 0; i < pos.size(); ++i) std::cout << (i ? ", " : "") << pos[i];
      double m_last = 0, m_fit = 0;
      const size_t H = fit.size() / f.read_i64(run + "/state_stats/layer").size();
      for (size_t h = 0; h < H; ++h) {
        m_last += std_[(pos.size() - 1) * H + h] / H;
        m_fit += fit[h] / H;
      }
      std::cout << "}; first layer's state std at the last position / fitted at T-1: " << m_last / m_fit << "\n";
    }
    if (f.has(run + "/unexplored/outside")) {
      const auto u = read_unexplored(f, run);
      const double held = std::accumulate(u.heldout_outside.begin(), u.heldout_outside.end(), 0.0) /
                          static_cast<double>(u.heldout_outside.size());
      char buf[400];
      std::snprintf(buf, sizeof buf,
                    "  unexplored: fraction of states outside the envelope of the training states (%lld per layer, "
                    "%lld components, quantile %.3f; held-out training states outside: %.3f)\n    by position:",
                    (long long)u.train_samples, (long long)u.components, u.quantile, held);
      std::cout << buf;
      for (int64_t lo = 0, hi = u.T; lo < u.length; lo = hi, hi *= 2) {  // [0, T), [T, 2T), [2T, 4T), ...
        double sum = 0;
        int n = 0;
        for (size_t j = 0; j < u.positions.size(); ++j)
          if (u.positions[j] >= lo && u.positions[j] < hi) sum += u.outside_mean[j], ++n;
        if (n) std::snprintf(buf, sizeof buf, " [%lld, %lld) %.3f", (long long)lo, (long long)std::min(hi, u.length), sum / n),
               std::cout << buf;
      }
      std::snprintf(buf, sizeof buf, "\n    Spearman with the excess over positions >= T: %.3f (95%% %.3f to %.3f)\n",
                    u.excess_rho, u.excess_rho_lo, u.excess_rho_hi);
      std::cout << buf;
    }
    if (f.has(run + "/passkey/accuracy")) {
      auto p = read_passkey(f, run);
      double acc = 0, dig = 0;
      for (size_t i = 0; i < p.accuracy.size(); ++i) acc += p.accuracy[i] / p.accuracy.size(), dig += p.digit_accuracy[i] / p.accuracy.size();
      std::cout << "  passkey: " << p.lengths.size() << " lengths (" << p.lengths.front() << ".." << p.lengths.back()
                << ") x " << p.depths.size() << " depths, " << p.samples << " samples per cell; mean exact "
                << acc << ", mean digit accuracy " << dig << " (chance 0.1)\n";
    }
    if (f.has(run + "/copying/exact")) {
      auto c = read_copying(f, run);
      std::cout << "  copying: L = " << c.L << ", alphabet " << c.alphabet << ", T = " << c.T
                << "; exact (token accuracy) by length, from a zero state";
      if (!c.exact_passed.empty()) std::cout << " | from a passed state (conv " << (c.conv_passed ? "passed" : "zero") << ")";
      std::cout << ":";
      for (size_t i = 0; i < c.lengths.size(); ++i) {
        std::cout << " " << c.lengths[i] << ": " << c.exact[i] << " (" << c.token_accuracy[i] << ")";
        if (!c.exact_passed.empty()) std::cout << " | " << c.exact_passed[i] << " (" << c.token_accuracy_passed[i] << ")";
      }
      std::cout << "\n";
    }
    if (f.has(run + "/babi/accuracy")) {
      auto b = read_babi(f, run);
      std::cout << "  babi: greedy / choice accuracy by length (chance " << 1.0 / std::max<int64_t>(1, b.candidates)
                << (b.last_mentioned_accuracy.empty() ? "" : "; last-mentioned baseline in brackets") << "):";
      for (size_t i = 0; i < b.lengths.size(); ++i) {
        std::cout << " " << b.lengths[i] << ": " << b.accuracy[i] << " / " << b.choice_accuracy[i];
        if (!b.last_mentioned_accuracy.empty()) std::cout << " [" << b.last_mentioned_accuracy[i] << "]";
      }
      std::cout << "\n";
    }
    if (tree) walk(f, run, 1);
  }
}

}  // namespace

Runner add_inspect(CLI::App& app, const std::string&) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto tree = std::make_shared<bool>(false);
  app.add_option("files", *paths, "experiment files (HDF5); several: one table compares all their runs")->required();
  app.add_flag("--tree", *tree, "also list every dataset with its shape");
  return [paths, tree]() {
    std::vector<RunSummary> sums;
    for (size_t i = 0; i < paths->size(); ++i) {
      const std::string& path = (*paths)[i];
      if (i) std::cout << "\n";
      inspect_file(path, paths->size() > 1 ? std::filesystem::path(path).stem().string() + "/" : "", *tree, sums);
    }
    if (!sums.empty()) std::cout << "\n" << format_summary_table(sums) << format_sweep_table(sums);
    return 0;
  };
}

}  // namespace statescope::cli

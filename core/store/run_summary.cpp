// run_summary.cpp — a run's summary from its evaluation, and the tables of summaries (run_summary.h).
#include "core/store/run_summary.h"

#include "core/base/interval.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "core/base/constants.h"
#include "core/base/eval_reference.h"

namespace statescope {
namespace {

double mean_range(const std::vector<double>& v, int64_t a, int64_t b) {
  double s = 0;
  for (int64_t i = a; i < b; ++i) s += v[i];
  return b > a ? s / static_cast<double>(b - a) : NAN;
}

// The mean over sequences of each sequence's mean (loss - reference) over positions [a, b), its
// standard error, and the reference's own mean (nats).
struct BinExcess {
  double mean = 0, se = 0, reference = 0;
};
BinExcess bin_excess(const std::vector<float>& nll, const std::vector<float>& ref, int64_t n, int64_t L, int64_t a,
                     int64_t b) {
  std::vector<double> per(n, 0.0);  // bin-mean excess of each sequence
  BinExcess e;
  for (int64_t q = 0; q < n; ++q) {
    for (int64_t i = a; i < b; ++i) {
      per[q] += static_cast<double>(nll[q * L + i]) - ref[q * L + i];  // in double, not float
      e.reference += ref[q * L + i];
    }
    per[q] /= static_cast<double>(b - a);
  }
  e.reference /= static_cast<double>(n * (b - a));
  double v = 0;
  for (double x : per) e.mean += x;
  e.mean /= n;
  for (double x : per) v += (x - e.mean) * (x - e.mean);
  e.se = n > 1 ? std::sqrt(v / (n - 1) / n) : 0.0;
  return e;
}

}  // namespace

RunSummary summarize(const EvalResult& r, const std::string& name, const std::string& intervention) {
  RunSummary s;
  s.name = name;
  s.intervention = intervention;
  s.T = r.T;
  const double k = kBitsPerNat;  // nats -> bits (bytes are tokens)
  const int64_t L = r.length, T = r.T, n = r.sequences;
  s.loss_near = k * mean_range(r.nll, std::min(T, L), std::min(2 * T, L));
  s.loss_far = k * mean_range(r.nll, L / 2, L);
  const std::vector<float>& reference = reference_seq(r);  // the one yardstick, else the run's own
  s.fixed = !r.fixed_seq.empty();
  for (int64_t a = T; a < L; a *= 2) {
    const int64_t b = std::min(2 * a, L);
    s.bins.emplace_back(a, b);
    if (!reference.empty()) {
      const BinExcess e = bin_excess(r.nll_seq, reference, n, L, a, b);
      s.reference.push_back(k * e.reference), s.excess.push_back(k * e.mean), s.excess_se.push_back(k * e.se);
    }
    if (s.fixed && !r.windowed_seq.empty()) {
      const BinExcess e = bin_excess(r.nll_seq, r.windowed_seq, n, L, a, b);
      s.own_reference.push_back(k * e.reference), s.own_excess.push_back(k * e.mean), s.own_excess_se.push_back(k * e.se);
    }
  }
  if (!r.norm.empty() && T - 1 < L) {
    double at = 0, far = 0;
    for (int64_t l = 0; l < r.n_layer; ++l) {
      at += r.norm[l * L + T - 1];
      far += mean_range(std::vector<double>(r.norm.begin() + l * L, r.norm.begin() + (l + 1) * L), L / 2, L);
    }
    s.norm_ratio = at > 0 ? far / at : NAN;
  }
  return s;
}

namespace {

// The runs measured against the one yardstick, grouped by position bins as the first table.
// The intervention column: wide enough for the longest label ("clip at 1x max norm within T (training-free)").
int intervention_width(const std::vector<RunSummary>& runs) {
  size_t w = 20;
  for (auto& r : runs) w = std::max(w, r.intervention.size() + 2);
  return static_cast<int>(w);
}

// Runs measured against the one yardstick that also have their own state-reset reference, against
// that (the baseline's own reference is the yardstick itself: left out when it equals it).
std::string format_own_table(const std::vector<RunSummary>& runs, size_t name_w) {
  const int iv_w = intervention_width(runs);
  std::ostringstream o;
  o << std::fixed;
  std::vector<bool> done(runs.size(), false);
  for (size_t g = 0; g < runs.size(); ++g) {
    if (done[g] || !has_distinct_own_reference(runs[g])) continue;
    const auto& bins = runs[g].bins;
    o << "\n" << std::left << std::setw(static_cast<int>(name_w)) << "run" << std::setw(iv_w) << "intervention" << std::right;
    for (auto& [a, b] : bins) {
      std::ostringstream h;
      h << "own " << a << "-" << b << " (ref)";
      o << std::setw(26) << h.str();
    }
    o << "\n";
    for (size_t k = g; k < runs.size(); ++k) {
      const auto& r = runs[k];
      if (done[k] || r.bins != bins || !has_distinct_own_reference(r)) continue;
      done[k] = true;
      o << std::left << std::setw(static_cast<int>(name_w)) << r.name << std::setw(iv_w) << r.intervention << std::right;
      for (size_t i = 0; i < r.own_excess.size(); ++i) {
        std::ostringstream c;
        c << std::showpos << std::setprecision(3) << std::fixed << r.own_excess[i] << std::noshowpos << "±"
          << r.own_excess_se[i] << " (" << r.own_reference[i] << ")";
        o << std::setw(27) << c.str();  // "±" is two bytes
      }
      o << "\n";
    }
  }
  if (o.str().empty()) return "";
  o << "(own: full-context loss minus the run's own state-reset loss, a reference the run's post-training moved: "
       "it says whether longer context helps this model, not which run is better; (ref) = that reference loss)\n";
  return o.str();
}

}  // namespace

std::string format_summary_table(const std::vector<RunSummary>& runs) {
  if (runs.empty()) return "";
  const int iv_w = intervention_width(runs);
  std::ostringstream o;
  o << std::fixed;
  size_t name_w = 12;  // runs from several files are named file/run
  for (auto& r : runs) name_w = std::max(name_w, r.name.size() + 2);
  // Runs whose position bins differ (other T or evaluation length) get a table of their own.
  std::vector<bool> done(runs.size(), false);
  for (size_t g = 0; g < runs.size(); ++g) {
    if (done[g]) continue;
    const auto& bins = runs[g].bins;
    if (g) o << "\n";
    o << std::left << std::setw(static_cast<int>(name_w)) << "run" << std::setw(iv_w) << "intervention" << std::right
      << std::setw(10) << "loss@T..2T" << std::setw(10) << "loss far";
    for (auto& [a, b] : bins) {
      std::ostringstream h;
      h << "exc " << a << "-" << b << " (ref)";
      o << std::setw(26) << h.str();
    }
    o << std::setw(11) << "norm far/T" << "\n";
    for (size_t k = g; k < runs.size(); ++k) {
      const auto& r = runs[k];
      if (done[k] || r.bins != bins) continue;
      done[k] = true;
      o << std::left << std::setw(static_cast<int>(name_w)) << r.name << std::setw(iv_w) << r.intervention << std::right
        << std::setprecision(3) << std::setw(10) << r.loss_near << std::setw(10) << r.loss_far;
      for (size_t i = 0; i < r.excess.size(); ++i) {
        std::ostringstream c;
        c << std::showpos << std::fixed << std::setprecision(3) << r.excess[i] << std::noshowpos << "±"
          << std::setprecision(3) << r.excess_se[i];
        if (i < r.reference.size()) c << " (" << std::setprecision(3) << r.reference[i] << ")";
        o << std::setw(27) << c.str();  // "±" is two bytes
      }
      o << std::setw(11) << std::setprecision(2) << r.norm_ratio
        << (r.status.empty() || r.status == "finished" ? "" : "  [" + r.status + "]") << "\n";
    }
  }
  const bool all_fixed = std::all_of(runs.begin(), runs.end(), [](const RunSummary& r) { return r.fixed || r.excess.empty(); });
  const bool any_fixed = std::any_of(runs.begin(), runs.end(), [](const RunSummary& r) { return r.fixed; });
  o << "(losses and excess in bits per token, i.e. per byte for byte-level models; excess = full-context loss minus "
    << (all_fixed && any_fixed ? "the loaded model's state-reset loss on the same bytes, one reference for every run: lower is better, and runs compare"
        : any_fixed ? "the loaded model's state-reset loss on the same bytes where a run has it, else the run's own state-reset loss"
                    : "the state-reset windowed loss")
    << "; mean ± standard error over sequences; (ref) = that reference loss itself; bins are positions)\n";
  o << format_own_table(runs, name_w);
  return o.str();
}

std::string format_sweep_table(const std::vector<RunSummary>& runs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const RunSummary*>> by;
  std::map<std::string, std::pair<size_t, std::vector<double>>> rank;  // (its policy's first appearance, cell values)
  std::map<std::string, size_t> policy_at;
  // Runs outside the grid (the loaded model's baseline of a swept spec) are groups of their own, so
  // the table holds the reference every row is read against; without any swept run there is no table.
  const bool swept = std::any_of(runs.begin(), runs.end(), [](const RunSummary& r) { return !r.cell.empty(); });
  if (!swept) return {};
  for (const auto& r : runs) {
    const std::string& group = r.cell.empty() || r.group.empty() ? r.name : r.group;
    if (!by.count(group)) {
      order.push_back(group);
      const std::string policy = group.substr(0, group.find('@'));
      policy_at.emplace(policy, policy_at.size());
      std::vector<double> values;
      for (const auto& [field, v] : r.cell)
        if (field != "seed") values.push_back(v);
      rank[group] = {policy_at[policy], values};
    }
    by[group];
    if (r.status == "finished" && !r.excess.empty()) by[group].push_back(&r);
  }
  if (order.empty()) return {};
  // Groups by policy (as they first appear), then by their swept values as numbers (16 before 256).
  std::stable_sort(order.begin(), order.end(), [&](const std::string& x, const std::string& y) { return rank[x] < rank[y]; });
  // Against the one yardstick when every run has it (runs compare), else each run's own reference.
  bool fixed = true;
  for (const auto& g : order)
    for (auto* r : by[g]) fixed = fixed && r->fixed;
  auto stat = [](const std::vector<double>& v, int digits, bool sign) {
    const MeanInterval m = mean_interval(v);
    std::ostringstream c;
    c << std::fixed << std::setprecision(digits) << (sign ? std::showpos : std::noshowpos) << m.mean << std::noshowpos;
    if (m.n > 1)
      c << " ±" << m.half << " [" << (sign ? std::showpos : std::noshowpos) << m.lo << ", " << m.hi << std::noshowpos << "]";
    return c.str();
  };
  std::vector<std::vector<std::string>> rows{
      {"group", "seeds", fixed ? "excess far vs base" : "excess far", "loss T..2T", "loss far", "norm far/T"}};
  for (const auto& g : order) {
    const auto& rs = by[g];
    if (rs.empty()) {
      rows.push_back({g, "0", "(no finished run)", "", "", ""});
      continue;
    }
    std::vector<double> ex, ln, lf, nr;
    for (auto* r : rs) {
      ex.push_back(fixed || r->own_excess.empty() ? r->excess.back() : r->own_excess.back()), ln.push_back(r->loss_near), lf.push_back(r->loss_far);
      if (std::isfinite(r->norm_ratio) && r->norm_ratio > 0) nr.push_back(r->norm_ratio);
    }
    rows.push_back({g, std::to_string(rs.size()), stat(ex, 3, true), stat(ln, 3, false), stat(lf, 3, false), nr.empty() ? "-" : stat(nr, 2, false)});
  }
  std::vector<size_t> w(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], row[i].size());  // "±" counts 2 bytes in every row alike
  std::ostringstream o;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i == 0) o << std::left << std::setw(static_cast<int>(w[i])) << row[i];
      else o << "  " << std::right << std::setw(static_cast<int>(w[i])) << row[i];
    }
    o << "\n";
  }
  o << "(sweep groups: the runs of one setting over its seeds: mean ±95% t-interval [min, max]; excess far = the last "
       "position bin, bits/token, "
    << (fixed ? "against the experiment's one yardstick (the loaded model's state-reset loss on the same bytes)"
              : "against each run's own state-reset reference")
    << "; loss T..2T = the full-context loss just past T, what an intervention costs there; norm far/T = mean layer state norm over the last half / at T-1)\n";
  return o.str();
}

}  // namespace statescope

// record.cpp — the evaluation's groups written and read back, and its `inspect` lines (record.h).
#include "core/analyses/eval/record.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>

#include "core/store/group_io.h"

namespace statescope {

void write_eval(ExperimentFile& file, const std::string& run, const EvalResult& r) {
  file.write_group([&](H5File& f) {
    const int64_t L = r.length, n = std::max<int64_t>(1, r.sequences);
    std::vector<int64_t> pos(L);
    for (int64_t i = 0; i < L; ++i) pos[i] = i;
    const std::string p = run + "/ppl";
    f.write(p + "/position", pos.data(), {L});
    f.write(p + "/nll", r.nll.data(), {L});
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
    f.write(p + "/nll_stderr", se.data(), {L});
    f.write(p + "/nll_per_sequence", r.nll_seq.data(), {n, L});
    nx_data(f, p, "nll", {"position"});
    prefer_default(f, run, "ppl");
    f.set_attr(p, "units", "nats per token; position p predicts token p+1");
    f.set_attr_i64(p, "T", r.T);
    f.set_attr_i64(p, "sequences", r.sequences);
    if (!r.windowed_nll.empty()) {
      f.write(p + "/windowed_nll", r.windowed_nll.data(), {L});
      f.write(p + "/windowed_nll_per_sequence", r.windowed_seq.data(), {n, L});
      std::vector<double> ex(L);
      for (int64_t i = 0; i < L; ++i) ex[i] = r.nll[i] - r.windowed_nll[i];
      auto exse = stderr_of(r.nll_seq, &r.windowed_seq);
      f.write(p + "/excess", ex.data(), {L});
      f.write(p + "/excess_stderr", exse.data(), {L});
    }
    if (!r.fixed_seq.empty()) {  // the one yardstick: the loaded model's state-reset loss
      std::vector<double> ref(L, 0.0), fx(L);
      for (int64_t k = 0; k < n; ++k)
        for (int64_t i = 0; i < L; ++i) ref[i] += r.fixed_seq[k * L + i] / static_cast<double>(n);
      for (int64_t i = 0; i < L; ++i) fx[i] = r.nll[i] - ref[i];
      auto fxse = stderr_of(r.nll_seq, &r.fixed_seq);
      f.write(p + "/fixed_reference_nll", ref.data(), {L});
      f.write(p + "/fixed_reference_per_sequence", r.fixed_seq.data(), {n, L});
      f.write(p + "/fixed_excess", fx.data(), {L});
      f.write(p + "/fixed_excess_stderr", fxse.data(), {L});
      f.set_attr(p, "fixed_reference", "the loaded model's loss with the state reset every T/2 on the same bytes: "
                                       "one reference for every run of the experiment");
    }
    if (!r.norm.empty()) {
      const std::string s = run + "/state_norm";
      std::vector<int64_t> layer(r.n_layer), head(r.nheads);
      for (int64_t i = 0; i < r.n_layer; ++i) layer[i] = i;
      for (int64_t i = 0; i < r.nheads; ++i) head[i] = i;
      f.write(s + "/position", pos.data(), {L});
      f.write(s + "/layer", layer.data(), {r.n_layer});
      f.write(s + "/head", head.data(), {r.nheads});
      f.write(s + "/norm", r.norm.data(), {r.n_layer, L});
      f.write(s + "/norm_per_head", r.norm_per_head.data(), {r.n_layer, r.nheads, L});
      nx_data(f, s, "norm", {"layer", "position"});
      f.set_attr(s, "units", "Frobenius norm of the SSM state after token p, mean over sequences");
      f.set_attr(s, "head_axis", r.group_name);  // what 'head' counts: heads, or Mamba-1's channel groups
      f.set_attr_i64(s, "T", r.T);  // positions >= T lie beyond the training context
    }
  });
}

EvalResult read_eval(const H5File& f, const std::string& run) {
  const GroupReader g{f, run, "ppl"};
  g.require("nll");
  EvalResult r;
  r.nll = g.f64("nll");
  r.length = g.count(r.nll.size());
  r.T = g.attr_int("T");
  r.sequences = g.attr_int("sequences");
  const int64_t per_seq = g.product({r.sequences, r.length});
  r.nll_seq = g.f32("nll_per_sequence", per_seq, "[sequences, length]");
  if (g.has("windowed_nll")) {
    r.windowed_nll = g.f64("windowed_nll", r.length, "[length]");
    r.windowed_seq = g.f32("windowed_nll_per_sequence", per_seq, "[sequences, length]");
  }
  if (g.has("fixed_reference_per_sequence"))  // files from before the one yardstick have none
    r.fixed_seq = g.f32("fixed_reference_per_sequence", per_seq, "[sequences, length]");
  const GroupReader s{f, run, "state_norm"};
  if (s.has("norm")) {
    std::vector<int64_t> d;
    r.norm = s.f64("norm", &d);
    if (d.size() != 2 || d[1] != r.length) s.fail("dataset state_norm/norm is not [n_layer, length]");
    r.n_layer = d[0];
    r.norm_per_head = s.f64("norm_per_head", &d);
    if (d.size() != 3 || d[0] != r.n_layer || d[2] != r.length)
      s.fail("dataset state_norm/norm_per_head is not [n_layer, nheads, length]");
    r.nheads = d[1];
    if (has_attr(f, s.g, "head_axis")) r.group_name = f.attr(s.g, "head_axis");
  }
  return r;
}

namespace {

// Which heads' states grow past T: ||h|| at the last position / at T-1, per (layer, head).
void head_growth(const EvalResult& r, std::ostream& out) {
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
  const bool heads = r.group_name == "head";  // Mamba-1's columns are channel groups (G)
  out << "  state norm per " << r.group_name << ", position " << L << " / position " << r.T << ": median " << std::fixed
      << std::setprecision(2) << median << ", largest";
  for (size_t k = 0; k < std::min<size_t>(3, g.size()); ++k)
    out << (k ? ", " : " ") << std::setprecision(1) << g[k].first << " (L" << g[k].second / r.nheads << (heads ? " H" : " G")
        << g[k].second % r.nheads << ")";
  out << "; " << over5 << "/" << g.size() << " " << r.group_name << "s grew more than 5x\n" << std::defaultfloat;
}

}  // namespace

void inspect_eval(const RunRecord& rec, std::ostream& out) {
  const EvalResult& r = *rec.eval;
  out << "  eval: " << r.sequences << " sequences x " << r.length << " positions, T = " << r.T << "\n";
  head_growth(r, out);
}

AnalysisRecord record_eval() {
  return make_record<&RunResults::eval, read_eval>("eval", "ppl", "ppl/nll", "Per position", "Per position", true,
                                                   inspect_eval, report_eval);
}

}  // namespace statescope

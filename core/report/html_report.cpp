// html_report.cpp — an experiment file as one HTML page (see html_report.h).
#include "core/report/html_report.h"
#include "core/base/constants.h"

#include "core/base/output_rule.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/base/error.h"
#include "core/experiment/experiment.h"
#include "core/report/svg_chart.h"
#include "core/store/experiment_store.h"

namespace statescope::report {
namespace {

constexpr double kBits = kBitsPerNat;

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;" : std::string(1, c);
  return o;
}

std::string fmt(double v, const char* f = "%.3f") {
  if (!std::isfinite(v)) return "–";
  char b[48];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

struct Run {
  std::string name, status, intervention, message, versions, device, seed;
  std::vector<StepInfo> train;
  std::optional<EvalResult> eval;
  std::optional<UnexploredResult> unexplored;
  std::optional<PasskeyResult> passkey;
  std::optional<CopyResult> copying;
  std::optional<BabiResult> babi;
  std::optional<EffRemResult> effrem;
  std::optional<StateStatsResult> states;
  std::vector<std::pair<std::string, double>> cell;
  std::string group;
};

Run read_one(const H5File& f, const std::string& name) {
  Run r;
  r.name = name;
  auto attr = [&](const char* k) {
    try {
      return f.attr(name, k);
    } catch (const Error&) {
      return std::string();
    }
  };
  r.status = attr("status"), r.intervention = attr("intervention"), r.message = attr("message");
  r.versions = attr("versions"), r.device = attr("device"), r.seed = attr("seed");
  r.train = read_train(f, name);
  if (f.has(name + "/ppl/nll")) r.eval = read_eval(f, name);
  if (f.has(name + "/unexplored/outside")) r.unexplored = read_unexplored(f, name);
  if (f.has(name + "/passkey/accuracy")) r.passkey = read_passkey(f, name);
  if (f.has(name + "/copying/exact")) r.copying = read_copying(f, name);
  if (f.has(name + "/babi/accuracy")) r.babi = read_babi(f, name);
  if (f.has(name + "/effrem/value")) r.effrem = read_effrem(f, name);
  if (f.has(name + "/state_stats/histogram")) r.states = read_state_stats(f, name);
  const SweepCell cell = read_sweep_cell(f, name);
  r.group = cell.group;
  r.cell = cell.values;
  return r;
}

// Log-spaced averages of a per-position curve (positions 1..L on a log axis), at most ~n points.
void log_binned(const std::vector<double>& v, std::vector<double>& x, std::vector<double>& y, int n = 240) {
  const double L = static_cast<double>(v.size());
  size_t a = 0;
  for (int k = 1; k <= n && a < v.size(); ++k) {
    const size_t b = std::max(a + 1, static_cast<size_t>(std::ceil(std::pow(L, static_cast<double>(k) / n))));
    double s = 0;
    for (size_t i = a; i < b && i < v.size(); ++i) s += v[i];
    const size_t e = std::min(b, v.size());
    x.push_back(0.5 * static_cast<double>(a + 1 + e));  // positions are 1-based on the axis
    y.push_back(s / static_cast<double>(e - a));
    a = e;
  }
}

std::string section(const std::string& id, const std::string& title, const std::string& body) {
  return "<section id=\"" + id + "\"><h2>" + esc(title) + "</h2>\n" + body + "</section>\n";
}

const char* kStyle = R"(body{font-family:sans-serif;max-width:1100px;margin:24px auto;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}pre{background:#f7f7f7;padding:8px;font-size:12px;
overflow-x:auto}.bad{color:#b00;font-weight:bold}.note{font-size:13px;color:#444}svg.chart{display:block;margin:8px 0}
)";

}  // namespace

std::string html_report(const std::string& h5_path) {
  H5File f(h5_path, H5File::Mode::Read);
  check_experiment_file(f);
  const auto names = run_names(f);
  if (names.empty()) throw Error(h5_path + ": holds no runs");
  std::vector<Run> runs;
  for (auto& n : names) runs.push_back(read_one(f, n));
  auto root = [&](const char* k) {
    try {
      return f.attr("/", k);
    } catch (const Error&) {
      return std::string();
    }
  };
  std::string spec = root("spec");
  try {
    spec = nlohmann::json::parse(spec).dump(2);
  } catch (const nlohmann::json::exception&) {
  }
  int64_t T = 0;
  for (auto& r : runs)
    if (r.eval) T = r.eval->T;
  std::ostringstream o;
  const std::string file = std::filesystem::path(h5_path).filename().string();
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>statescope report: " << esc(file)
    << "</title><style>" << kStyle << "</style></head><body>\n";
  o << "<h1>statescope report: " << esc(file) << "</h1>\n<p class=\"note\">File " << esc(h5_path) << ", created "
    << esc(root("created")) << " by " << esc(root("creator")) << "; spec from " << esc(root("spec_source"))
    << ". Regenerate: <code>statescope-cli report " << esc(file) << " -o report.html</code>.</p>\n";

  // Reading notes.
  o << section("notes", "How to read this",
               "<p class=\"note\">Losses are in bits per token (bits per byte for byte-level models). T = " +
                   std::to_string(T) +
                   " is the training context: positions below it are what the model was trained on, positions past "
                   "it measure length generalization (dashed line in every per-position plot). The <b>excess</b> at a "
                   "position is the model's loss with its full context minus its loss on the same token with the "
                   "state reset every T/2 (each token then sees T/2..T tokens back): 0 below T by construction, > 0 "
                   "where reading far past T hurts, < 0 where the long context helps. Excess in bins [T, 2T), [2T, "
                   "4T), ... is the mean over the bin ± its standard error over sequences. <i>norm far/T</i> is the "
                   "SSM state norm over the last half of positions relative to its value at T-1.</p>");

  // Environment.
  {
    std::ostringstream e;
    std::map<std::string, int> seen;
    for (auto& r : runs) ++seen[r.versions + " | " + r.device];
    e << "<table><tr><th>versions</th><th>device, precision, scan</th><th>runs</th></tr>\n";
    for (auto& [k, n] : seen) {
      const auto bar = k.find(" | ");
      e << "<tr><td>" << esc(k.substr(0, bar)) << "</td><td>" << esc(k.substr(bar + 3)) << "</td><td>" << n << "</td></tr>\n";
    }
    e << "</table>\n";
    o << section("environment", "Environment", e.str());
  }

  // Summary of every run.
  {
    std::vector<RunSummary> sums;
    std::ostringstream t;
    std::vector<std::pair<int64_t, int64_t>> bins;
    for (auto& r : runs)
      if (r.eval) {
        sums.push_back(summarize(*r.eval, r.name, r.intervention));
        sums.back().status = r.status, sums.back().group = r.group, sums.back().cell = r.cell;
        if (sums.back().bins.size() > bins.size()) bins = sums.back().bins;
      }
    t << "<table><tr><th>run</th><th>intervention</th><th>status</th><th>loss T..2T</th><th>loss far</th>";
    for (auto& [a, b] : bins) t << "<th>excess " << a << "-" << b << "</th>";
    t << "<th>norm far/T</th></tr>\n";
    for (auto& r : runs) {
      const bool ok = r.status == "finished";
      t << "<tr><td>" << esc(r.name) << "</td><td>" << esc(r.intervention) << "</td><td"
        << (ok ? "" : " class=\"bad\"") << ">" << esc(r.status.empty() ? "unknown" : r.status)
        << (ok || r.message.empty() ? "" : ": " + esc(r.message)) << "</td>";
      const RunSummary* s = nullptr;
      for (auto& x : sums)
        if (x.name == r.name) s = &x;
      if (!s) {
        t << "<td colspan=\"" << bins.size() + 3 << "\">not evaluated</td></tr>\n";
        continue;
      }
      t << "<td>" << fmt(s->loss_near) << "</td><td>" << fmt(s->loss_far) << "</td>";
      for (size_t i = 0; i < bins.size(); ++i)
        t << "<td>" << (i < s->excess.size() ? fmt(s->excess[i], "%+.3f") + " ± " + fmt(s->excess_se[i]) : "–") << "</td>";
      t << "<td>" << fmt(s->norm_ratio, "%.2f") << "</td></tr>\n";
    }
    t << "</table>\n";
    if (const std::string sw = format_sweep_table(sums); !sw.empty())
      t << "<p class=\"note\">Sweep: the runs of one setting over its seeds.</p><pre>" << esc(sw) << "</pre>\n";
    o << section("summary", "Runs", t.str());
  }

  // Plots per position and training.
  {
    Chart loss{"Training loss", "step", "loss (bits/token)", false, {}, {}};
    Chart exc{"Excess over the state-reset reference", "position (tokens)", "excess (bits/token)", true, {}, {{double(T), "T"}}};
    Chart nll{"Loss per position", "position (tokens)", "loss (bits/token)", true, {}, {{double(T), "T"}}};
    Chart norm{"SSM state norm per position (mean over layers)", "position (tokens)", "||h_t||", true, {}, {{double(T), "T"}}};
    for (size_t ri = 0; ri < runs.size(); ++ri) {  // one colour per run in every chart
      const auto& r = runs[ri];
      const std::string col = series_color(ri);
      if (!r.train.empty()) {
        ChartSeries s{r.name, {}, {}, {}, col};
        for (auto& st : r.train) s.x.push_back(double(st.step)), s.y.push_back(st.loss * kBits);
        loss.series.push_back(s);
      }
      if (!r.eval) continue;
      const auto& e = *r.eval;
      std::vector<double> ex(e.length), lv(e.length), nv(e.length, 0.0);
      for (int64_t p = 0; p < e.length; ++p) {
        ex[p] = e.windowed_nll.empty() ? NAN : (e.nll[p] - e.windowed_nll[p]) * kBits;
        lv[p] = e.nll[p] * kBits;
        for (int64_t l = 0; l < e.n_layer && !e.norm.empty(); ++l) nv[p] += e.norm[l * e.length + p] / double(e.n_layer);
      }
      for (auto [c, v] : {std::pair{&exc, &ex}, {&nll, &lv}, {&norm, &nv}}) {
        ChartSeries s{r.name, {}, {}, {}, col};
        log_binned(*v, s.x, s.y);
        c->series.push_back(s);
      }
    }
    std::string body = "<p class=\"note\">Per-position curves are averaged over log-spaced position bins (about 240 "
                       "points) so they stay readable; the file holds every position.</p>\n";
    for (auto* c : {&exc, &nll, &norm, &loss}) body += render_svg(*c);
    o << section("positions", "Per position", body);
  }

  // Unexplored states.
  if (std::any_of(runs.begin(), runs.end(), [](auto& r) { return r.unexplored.has_value(); })) {
    Chart c{"States outside the envelope of the run's training states", "position (tokens)", "fraction outside", true, {}, {{double(T), "T"}}};
    std::ostringstream t;
    t << "<table><tr><th>run</th><th>held-out outside</th><th>Spearman with excess (95%)</th></tr>\n";
    for (size_t ri = 0; ri < runs.size(); ++ri) {
      const auto& r = runs[ri];
      if (!r.unexplored) continue;
      const auto& u = *r.unexplored;
      ChartSeries s{r.name, {}, {}, {}, series_color(ri)};
      for (size_t j = 0; j < u.positions.size(); ++j) s.x.push_back(double(u.positions[j] + 1)), s.y.push_back(u.outside_mean[j]);
      c.series.push_back(s);
      double held = 0;
      for (double h : u.heldout_outside) held += h / double(u.heldout_outside.size());
      t << "<tr><td>" << esc(r.name) << "</td><td>" << fmt(held) << "</td><td>" << fmt(u.excess_rho, "%.2f") << " ["
        << fmt(u.excess_rho_lo, "%.2f") << ", " << fmt(u.excess_rho_hi, "%.2f") << "]</td></tr>\n";
    }
    t << "</table>\n";
    o << section("unexplored", "Unexplored states",
                 "<p class=\"note\">The fraction of evaluation states outside the envelope of the states each run met in "
                 "training (training windows replayed under its own policy; PCA envelope per layer and head at the "
                 "99th percentile of held-out training states, so about 0.01 of training states fall outside).</p>\n" +
                     render_svg(c) + t.str());
  }

  // Sweep: far excess against the first swept field other than the seed.
  if (std::any_of(runs.begin(), runs.end(), [](auto& r) { return !r.cell.empty(); })) {
    std::string field;
    for (auto& r : runs)
      for (auto& [k, v] : r.cell)
        if (field.empty() && k != "seed") field = k;
    if (!field.empty()) {
      std::map<std::string, std::map<double, std::vector<double>>> lines;
      std::vector<std::string> order;
      for (auto& r : runs) {
        if (!r.eval || r.status != "finished") continue;
        double x = NAN;
        std::string key = r.name.substr(0, r.name.find('@'));
        for (auto& [k, v] : r.cell)
          if (k == field) x = v;
          else if (k != "seed") key += " " + k + "=" + fmt(v, "%g");
        if (std::isnan(x)) continue;
        const auto s = summarize(*r.eval, r.name, r.intervention);
        if (s.excess.empty()) continue;
        if (!lines.count(key)) order.push_back(key);
        lines[key][x].push_back(s.excess.back());
      }
      Chart c{"Sweep: excess in the last position bin, mean over seeds (band: one standard deviation)", field,
              "excess far (bits/token)", false, {}, {}};
      for (auto& key : order) {
        ChartSeries s{key, {}, {}, {}, ""};
        for (auto& [x, v] : lines[key]) {
          double m = 0, q = 0;
          for (double y : v) m += y / double(v.size());
          for (double y : v) q += (y - m) * (y - m);
          s.x.push_back(x), s.y.push_back(m), s.err.push_back(v.size() > 1 ? std::sqrt(q / double(v.size() - 1)) : 0);
        }
        c.series.push_back(s);
      }
      o << section("sweep", "Sweep", render_svg(c));
    }
  }

  // Effective Remembrance: one chart per run, a line per context length T.
  if (std::any_of(runs.begin(), runs.end(), [](auto& r) { return r.effrem.has_value(); })) {
    std::string body = "<p class=\"note\">EffRem_T(t) = TV(p(.|x[0:T]), p(.|x[t:T])): how much the tokens before t "
                       "still change the prediction at T (1: everything, 0: nothing), mean over sequences.</p>\n";
    for (auto& r : runs) {
      if (!r.effrem) continue;
      const auto& e = *r.effrem;
      Chart c{"Effective Remembrance: " + r.name, "t (tokens dropped from the start)", "EffRem_T(t)", false, {}, {}};
      for (size_t i = 0; i < e.T.size(); ++i) {
        ChartSeries s{"T = " + std::to_string(e.T[i]), {}, {}, {}, ""};
        for (size_t j = 0; j < e.t.size(); ++j) {
          s.x.push_back(double(e.t[j])), s.y.push_back(e.value[i * e.t.size() + j]);
          s.err.push_back(e.stderr_[i * e.t.size() + j]);
        }
        c.series.push_back(s);
      }
      body += render_svg(c);
    }
    o << section("effrem", "Effective Remembrance", body);
  }

  // State distributions: std of the state entries per position (mean over heads), the fit at T-1.
  if (std::any_of(runs.begin(), runs.end(), [](auto& r) { return r.states.has_value(); })) {
    std::ostringstream t;
    t << "<p class=\"note\">Standard deviation of the SSM state entries at each position (first listed layer, mean "
         "over heads) and the Gaussian fitted at T-1 (what fitted noise draws from).</p>\n";
    for (auto& r : runs) {
      if (!r.states) continue;
      const auto& st = *r.states;
      const size_t H = size_t(st.nheads), np = st.positions.size();
      double fit = 0;
      for (size_t h = 0; h < H; ++h) fit += st.fitted_std[h] / double(H);
      t << "<h3>" << esc(r.name) << "</h3><table><tr><th>position</th>";
      for (auto p : st.positions) t << "<th>" << p << "</th>";
      t << "<th>fit at T-1</th></tr><tr><td>std (layer " << (st.layers.empty() ? 0 : st.layers[0]) << ")</td>";
      for (size_t k = 0; k < np; ++k) {
        double v = 0;
        for (size_t h = 0; h < H; ++h) v += st.std[k * H + h] / double(H);
        t << "<td>" << fmt(v, "%.4f") << "</td>";
      }
      t << "<td>" << fmt(fit, "%.4f") << "</td></tr></table>\n";
    }
    o << section("states", "State distributions", t.str());
  }

  // Task tables.
  {
    std::ostringstream t;
    for (auto& r : runs) {
      if (r.passkey) {
        const auto& p = *r.passkey;
        t << "<h3>Passkey: " << esc(r.name) << " (exact retrieval, " << p.samples << " samples per cell)</h3><table><tr><th>length \\ depth</th>";
        for (double d : p.depths) t << "<th>" << fmt(d, "%.2f") << "</th>";
        t << "</tr>\n";
        for (size_t i = 0; i < p.lengths.size(); ++i) {
          t << "<tr><td>" << p.lengths[i] << "</td>";
          for (size_t j = 0; j < p.depths.size(); ++j) t << "<td>" << fmt(p.accuracy[i * p.depths.size() + j], "%.2f") << "</td>";
          t << "</tr>\n";
        }
        t << "</table>\n";
      }
      if (r.copying) {
        const auto& c = *r.copying;
        t << "<h3>Copying: " << esc(r.name) << " (exact match; L = " << c.L << ")</h3><table><tr><th>length</th><th>zero state</th>"
          << (c.exact_passed.empty() ? "" : "<th>passed state</th>") << "</tr>\n";
        for (size_t i = 0; i < c.lengths.size(); ++i)
          t << "<tr><td>" << c.lengths[i] << "</td><td>" << fmt(c.exact[i], "%.2f") << "</td>"
            << (c.exact_passed.empty() ? "" : "<td>" + fmt(c.exact_passed[i], "%.2f") + "</td>") << "</tr>\n";
        t << "</table>\n";
      }
      if (r.babi) {
        const auto& b = *r.babi;
        t << "<h3>bAbI: " << esc(r.name) << " (" << b.samples << " questions per length)</h3><table><tr><th>length</th>"
          << "<th>greedy</th><th>choice</th><th>last-mentioned baseline</th></tr>\n";
        for (size_t i = 0; i < b.lengths.size(); ++i)
          t << "<tr><td>" << b.lengths[i] << "</td><td>" << fmt(b.accuracy[i], "%.2f") << "</td><td>"
            << fmt(b.choice_accuracy[i], "%.2f") << "</td><td>" << fmt(b.last_mentioned_accuracy[i], "%.2f") << "</td></tr>\n";
        t << "</table>\n";
      }
    }
    if (!t.str().empty()) o << section("tasks", "Tasks", t.str());
  }

  o << section("spec", "The spec as run", "<pre>" + esc(spec) + "</pre>");
  o << "</body></html>\n";
  return o.str();
}

void write_html_report(const std::string& h5_path, const std::string& out_path, bool overwrite) {
  check_output(out_path, OutputRule{overwrite, {h5_path}, false});  // before the page is made
  write_file_staged(out_path, html_report(h5_path), OutputRule{overwrite, {h5_path}, false});
}

}  // namespace statescope::report

// html_report.cpp — an experiment file as one HTML page (see html_report.h).
#include "core/report/html_report.h"
#include "core/base/constants.h"

#include "core/base/output_rule.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/base/error.h"
#include "core/report/html.h"
#include "core/report/svg_chart.h"
#include "core/store/run_record.h"
#include "core/store/run_summary.h"

namespace statescope::report {
namespace {

constexpr double kBits = kBitsPerNat;

const char* kStyle = R"(body{font-family:sans-serif;max-width:1100px;margin:24px auto;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}pre{background:#f7f7f7;padding:8px;font-size:12px;
overflow-x:auto}.bad{color:#b00;font-weight:bold}.note{font-size:13px;color:#444}svg.chart{display:block;margin:8px 0}
)";

}  // namespace

std::string html_report(const std::string& h5_path) {
  H5File f(h5_path, H5File::Mode::Read);
  const std::vector<RunRecord> runs = read_run_records(f);
  if (runs.empty()) throw Error(h5_path + ": holds no runs");
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

  // Models: each run's model and its architecture (recorded in the file; a multi-model spec has several).
  {
    std::map<std::string, std::pair<std::string, int>> models;  // model -> (architecture, runs)
    for (auto& r : runs) {
      auto& m = models[r.model];
      if (m.first.empty()) m.first = r.architecture;
      ++m.second;
    }
    if (std::any_of(runs.begin(), runs.end(), [](auto& r) { return !r.architecture.empty(); })) {
      std::ostringstream m;
      m << "<table><tr><th>model</th><th>architecture and recurrent state per layer</th><th>runs</th></tr>\n";
      for (auto& [model, v] : models)
        m << "<tr><td>" << esc(model) << "</td><td>" << esc(v.first.empty() ? "not recorded" : v.first) << "</td><td>"
          << v.second << "</td></tr>\n";
      m << "</table>\n";
      o << section("models", models.size() > 1 ? "Models" : "Model", m.str());
    }
  }

  // Summary of every run.
  {
    std::vector<RunSummary> sums;
    std::ostringstream t;
    std::vector<std::pair<int64_t, int64_t>> bins;
    for (auto& r : runs)
      if (r.eval) {
        sums.push_back(summarize(*r.eval, r.name, r.intervention));
        sums.back().status = r.status, sums.back().group = r.sweep.group, sums.back().cell = r.sweep.values;
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
    if (std::any_of(runs.begin(), runs.end(), [](auto& r) { return r.intervention.find("(training-free)") != std::string::npos; }))
      t << "<p class=\"note\">Runs marked <i>(training-free)</i> are the loaded model run with an intervention and no "
           "training (dt or A rescaled, the state clipped or reset, LongMamba's token filtering); each run's "
           "<code>intervention</code> group holds what was applied, its calibration included.</p>\n";
    if (std::any_of(sums.begin(), sums.end(), [](auto& s) { return s.fixed; }))
      t << "<p class=\"note\">Excess against one yardstick: each run's full-context loss minus the <i>loaded</i> "
           "model's state-reset loss on the same bytes, the same reference for every run, so the runs compare "
           "(lower is better).</p>\n";
    if (std::any_of(sums.begin(), sums.end(), has_distinct_own_reference)) {
      t << "<p class=\"note\">Against each run's own state-reset reference (computed on request: "
           "<code>eval.own_reference</code>), which the run's post-training moves: whether longer context helps "
           "that model, not which run is better.</p>\n<table><tr><th>run</th><th>intervention</th>";
      for (auto& [a, b] : bins) t << "<th>own " << a << "-" << b << "</th>";
      t << "</tr>\n";
      for (auto& s : sums) {
        if (!has_distinct_own_reference(s)) continue;
        t << "<tr><td>" << esc(s.name) << "</td><td>" << esc(s.intervention) << "</td>";
        for (size_t i = 0; i < bins.size(); ++i)
          t << "<td>" << (i < s.own_excess.size() ? fmt(s.own_excess[i], "%+.3f") + " ± " + fmt(s.own_excess_se[i]) : "–")
            << "</td>";
        t << "</tr>\n";
      }
      t << "</table>\n";
    }
    if (const std::string sw = format_sweep_table(sums); !sw.empty())
      t << "<p class=\"note\">Sweep: the runs of one setting over its seeds.</p><pre>" << esc(sw) << "</pre>\n";
    o << section("summary", "Runs", t.str());
  }

  // Training loss of every run that trained.
  if (std::any_of(runs.begin(), runs.end(), [](auto& r) { return !r.train.empty(); })) {
    Chart loss{"Training loss", "step", "loss (bits/token)", false, {}, {}};
    for (size_t ri = 0; ri < runs.size(); ++ri) {  // one colour per run in every chart
      if (runs[ri].train.empty()) continue;
      ChartSeries s{runs[ri].name, {}, {}, {}, series_color(ri)};
      for (auto& st : runs[ri].train) s.x.push_back(double(st.step)), s.y.push_back(st.loss * kBits);
      loss.series.push_back(s);
    }
    o << section("training", "Training", render_svg(loss));
  }

  // Sweep: far excess against the first swept field other than the seed.
  if (std::any_of(runs.begin(), runs.end(), [](auto& r) { return !r.sweep.values.empty(); })) {
    std::string field;
    for (auto& r : runs)
      for (auto& [k, v] : r.sweep.values)
        if (field.empty() && k != "seed") field = k;
    if (!field.empty()) {
      std::map<std::string, std::map<double, std::vector<double>>> lines;
      std::vector<std::string> order;
      for (auto& r : runs) {
        if (!r.eval || r.status != "finished") continue;
        double x = NAN;
        std::string key = r.name.substr(0, r.name.find('@'));
        for (auto& [k, v] : r.sweep.values)
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

  // Every registered analysis that some run holds, in the registry's order.
  const ReportContext ctx{T};
  for (const auto& a : analysis_records())
    if (std::any_of(runs.begin(), runs.end(), [&](const RunRecord& r) { return a.present(r); }))
      if (const std::string body = a.report(runs, ctx); !body.empty()) o << section(a.key, a.title, body);

  o << section("spec", "The spec as run", "<pre>" + esc(spec) + "</pre>");
  o << "</body></html>\n";
  return o.str();
}

void write_html_report(const std::string& h5_path, const std::string& out_path, bool overwrite) {
  check_output(out_path, OutputRule{overwrite, {h5_path}, false});  // before the page is made
  write_file_staged(out_path, html_report(h5_path), OutputRule{overwrite, {h5_path}, false});
}

}  // namespace statescope::report

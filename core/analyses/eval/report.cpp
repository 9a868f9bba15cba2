// report.cpp — the evaluation's report section: excess, loss and state norm per position, one
// colour per run (record.h).
#include <cmath>

#include "core/analyses/eval/record.h"
#include "core/base/constants.h"
#include "core/base/eval_reference.h"
#include "core/report/html.h"
#include "core/report/svg_chart.h"

namespace statescope {

std::string report_eval(const std::vector<RunRecord>& runs, const ReportContext& ctx) {
  using namespace report;
  const double T = static_cast<double>(ctx.T);
  Chart exc{"Excess over the state-reset reference (the loaded model's, one for every run, where the file has it)", "position (tokens)", "excess (bits/token)", true, {}, {{T, "T"}}};
  Chart nll{"Loss per position", "position (tokens)", "loss (bits/token)", true, {}, {{T, "T"}}};
  Chart norm{"SSM state norm per position (mean over layers)", "position (tokens)", "||h_t||", true, {}, {{T, "T"}}};
  // A hybrid's attention layers: what each position's attention reads (mean over attention layers and heads).
  Chart ent{"Attention entropy per position (a hybrid's attention layers, mean over layers and heads)", "position (tokens)", "entropy (bits)", true, {}, {{T, "T"}}};
  Chart first{"Attention mass on the first tokens per position (a hybrid's attention layers, mean over layers and heads)", "position (tokens)", "mass", true, {}, {{T, "T"}}};
  bool any = false, attention = false;
  for (size_t ri = 0; ri < runs.size(); ++ri) {  // one colour per run in every chart (its index in the file)
    if (!runs[ri].eval) continue;
    any = true;
    const auto& e = *runs[ri].eval;
    std::vector<double> ex(e.length), lv(e.length), nv(e.length, 0.0);
    const std::vector<double> ref = reference_nll(e);  // the one yardstick, else the run's own reference
    for (int64_t p = 0; p < e.length; ++p) {
      ex[p] = ref.empty() ? NAN : (e.nll[p] - ref[p]) * kBitsPerNat;
      lv[p] = e.nll[p] * kBitsPerNat;
      for (int64_t l = 0; l < e.n_layer && !e.norm.empty(); ++l) nv[p] += e.norm[l * e.length + p] / double(e.n_layer);
    }
    for (auto [c, v] : {std::pair{&exc, &ex}, {&nll, &lv}, {&norm, &nv}}) {
      ChartSeries s{runs[ri].name, {}, {}, {}, series_color(ri)};
      log_binned(*v, s.x, s.y);
      c->series.push_back(s);
    }
    const int64_t rows = static_cast<int64_t>(e.attention_layers.size()) * e.attention_heads;
    if (rows > 0 && static_cast<int64_t>(e.attn_entropy.size()) == rows * e.length && e.attn_first.size() == e.attn_entropy.size()) {
      attention = true;
      first.title = "Attention mass on the first " + std::to_string(e.first_tokens) + " tokens per position (a hybrid's attention layers, mean over layers and heads)";
      for (auto [c, src] : {std::pair{&ent, &e.attn_entropy}, {&first, &e.attn_first}}) {
        std::vector<double> v(e.length, 0.0);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t p = 0; p < e.length; ++p) v[p] += (*src)[r * e.length + p] / static_cast<double>(rows);
        ChartSeries s{runs[ri].name, {}, {}, {}, series_color(ri)};
        log_binned(v, s.x, s.y);
        c->series.push_back(s);
      }
    }
  }
  if (!any) return "";
  std::string body = "<p class=\"note\">Per-position curves are averaged over log-spaced position bins (about 240 "
                     "points) so they stay readable; the file holds every position.</p>\n";
  for (auto* c : {&exc, &nll, &norm}) body += render_svg(*c);
  if (attention) {
    body += "<p class=\"note\">The attention layers of a hybrid: the entropy of each position's attention over the "
            "positions it reads (spread evenly over p+1 positions it would be log2(p+1) bits) and its share on the "
            "sequence's first tokens. Attention that spreads past T, or parks on those first tokens, shows here.</p>\n";
    body += render_svg(ent) + render_svg(first);
  }
  return body;
}

}  // namespace statescope

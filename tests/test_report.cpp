// test_report.cpp — the HTML report (core/report/html_report.h): one page with every run, a failed or
// cancelled run shown as such with its message, charts as inline SVG, the spec and the reading
// notes, nothing fetched from elsewhere; the SVG chart's edge cases.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "core/base/error.h"
#include "core/experiment/experiment.h"
#include "core/report/html_report.h"
#include "core/report/svg_chart.h"
#include "tests/scratch.h"

using namespace statescope;

TEST(Report, EveryRunTheCancelledOneAsSuchAndNothingFromElsewhere) {
  const auto out = statescope::test::scratch("statescope_report.h5");
  const std::string spec = R"({"model": "embedded", "seed": 0,
    "posttrain": {"steps": 3, "batch": 4, "lr": 5e-4, "warmup": 1},
    "policies": [{"kind": "passing"}, {"kind": "zero"}],
    "eval": {"length": 128, "sequences": 2, "segment": 64, "batch": 2},
    "analyses": {"unexplored": {"train_steps": 3, "samples": 60, "stride": 16, "bootstrap": 20},
                 "effrem": {"T": [16, 32], "points": 4, "sequences": 2},
                 "states": {"positions": [15, 31, 100], "sequences": 2, "bins": 11, "length": 128}},
    "sweep": {"seed": [0, 1]}})";
  // The zero run with seed 1 is cancelled at its second step.
  run_experiment(spec, "report.json", out, [](const ExperimentProgress& p) {
    return !(p.run == "zero@seed=1" && p.phase == "train" && p.done == 2);
  }, {}, true, 1);
  const std::string page = report::html_report(out);
  for (const char* run : {"baseline@seed=0", "passing@seed=0", "passing@seed=1", "zero@seed=0", "zero@seed=1"})
    EXPECT_NE(page.find(std::string(">") + run + "<"), std::string::npos) << run;
  EXPECT_NE(page.find("class=\"bad\">cancelled: cancelled after step 2"), std::string::npos);
  EXPECT_GE(std::count(page.begin(), page.end(), '\n'), 50);
  size_t svgs = 0;
  for (size_t at = 0; (at = page.find("<svg", at)) != std::string::npos; ++at) ++svgs;
  // excess, loss, norm, training loss, unexplored against each run's own envelope and against the
  // common one, and an EffRem chart per finished run (5: the baseline runs once per seed as the spec
  // has analyses; the cancelled run has none); a sweep of seeds only draws no sweep chart
  EXPECT_EQ(svgs, 11u);
  for (const char* part : {"How to read this", "The spec as run", "Unexplored states", "T = 32",
                           "Effective Remembrance: passing@seed=1", "State distributions", "fit at T-1",
                           "<h2>Model</h2>", "Mamba-2 \u00b7 2 layers \u00b7 state (heads, headdim, d_state) 8 \u00d7 16 \u00d7 32"})
    EXPECT_NE(page.find(part), std::string::npos) << part;
  // Self-contained: no script, no link, no URL to fetch.
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_FALSE(std::regex_search(page, std::regex("(src|href)=\"(https?:|//)")));
  // Written whole; a folder that is not there is named.
  const auto html = statescope::test::scratch("statescope_report.html");
  report::write_html_report(out, html);
  EXPECT_EQ(std::filesystem::file_size(html), page.size());
  EXPECT_THROW(report::write_html_report(out, "/no/such/dir/r.html"), Error);
  EXPECT_THROW(report::html_report("/no/such/file.h5"), Error);
}

TEST(Report, ChartsSkipWhatCannotBeDrawn) {
  report::Chart c{"t", "x", "y", true, {{"a", {0, 1, 10, 100}, {1, NAN, 2, 3}, {}, ""}}, {{10, "T"}}};
  const std::string svg = report::render_svg(c);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);  // x = 0 (log axis) and the NaN are left out
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  report::Chart empty{"e", "x", "y", false, {{"a", {1}, {NAN}, {}, ""}}, {}};
  EXPECT_NE(report::render_svg(empty).find("no data"), std::string::npos);
  report::Chart one{"o", "x", "y", false, {{"a", {2}, {3}, {0.5}, "#123456"}}, {}};
  EXPECT_NE(report::render_svg(one).find("<circle"), std::string::npos);
  EXPECT_NE(report::render_svg(one).find("#123456"), std::string::npos);
}

// html_report.h — one experiment file as one self-contained HTML page: the spec, the environment,
// every run's summary (failed and cancelled runs shown as such, with their message), each
// analysis's plots (inline SVG) and tables, and the notes a reader needs (what excess is, where T
// is). No script, no style sheet or font from elsewhere: it opens offline and prints. No Qt, no
// LibTorch: `statescope-cli report` and the app's File > Export report both call it.
#pragma once
#include <string>

namespace statescope::report {

// The page for experiment file `h5_path`; throws Error naming the file if it is not one.
std::string html_report(const std::string& h5_path);

// Writes it to `out_path` (whole or not at all: written beside, then renamed).
// Writes it to `out_path` under the output rule (core/base/output_rule.h): an existing file is
// replaced only with `overwrite`, never the experiment file itself.
void write_html_report(const std::string& h5_path, const std::string& out_path, bool overwrite = false);

}  // namespace statescope::report

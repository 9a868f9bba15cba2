// cmd_report.cpp — `report FILE.h5 -o report.html`: the experiment file as one self-contained HTML
// page (core/report/html_report.h).
#include <iostream>

#include "app/cli/commands.h"
#include "core/report/html_report.h"

namespace statescope::cli {

Runner add_report(CLI::App& app, const std::string&) {
  struct O {
    std::string file, output;
    bool overwrite = false;
  };
  auto o = std::make_shared<O>();
  app.add_option("file", o->file, "experiment file (HDF5)")->required();
  app.add_option("--output,-o", o->output, "HTML file to write (spec, environment, runs, plots as inline SVG)")
      ->required();
  app.add_flag("--overwrite", o->overwrite, "replace an existing output file (never the experiment file itself)");
  return [o]() {
    report::write_html_report(o->file, o->output, o->overwrite);
    std::cout << "-> " << o->output << "\n";
    return 0;
  };
}

}  // namespace statescope::cli

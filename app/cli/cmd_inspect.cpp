// cmd_inspect.cpp — `inspect FILE.h5 [MORE.h5 ...]`: a readable summary of every group in experiment
// files; with several files, one closing table compares all their runs (named file/run).
#include <filesystem>
#include <iostream>

#include "app/cli/commands.h"
#include "app/cli/common.h"
#include "core/base/error.h"
#include "core/store/run_summary.h"
#include "core/store/experiment_store.h"
#include "core/store/run_record.h"

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

// One file's report; its runs' summaries (named prefix + run) go to `sums` for the closing table.
// Each run: its attributes, its training, then every registered analysis it holds, in the
// registry's order (core/store/analysis_record.h), each saying its own lines.
// quiet: the summaries only (for --table), nothing printed.
void inspect_file(const std::string& path, const std::string& prefix, bool tree, std::vector<RunSummary>& sums,
                  bool quiet) {
  H5File f(path, H5File::Mode::Read);
  const auto runs = read_run_records(f);  // a foreign or newer file is named, not listed as runs
  if (runs.empty()) throw Error(path + ": holds no runs (damaged, or no run was ever started in it)");
  if (quiet) {
    for (const auto& r : runs)
      if (r.eval) {
        auto s = summarize(*r.eval, prefix + r.name, r.intervention);
        s.status = r.status;
        s.group = prefix + r.sweep.group, s.cell = r.sweep.values;
        sums.push_back(s);
      }
    return;
  }
  std::cout << path << "\n";
  for (auto& a : f.attr_names("/"))
    if (a != "spec") std::cout << "  " << a << ": " << f.attr("/", a) << "\n";
  for (const auto& r : runs) {
    auto shown = [](const std::string& v) { return v.empty() ? std::string("?") : v; };
    std::cout << "run " << r.name << ": status " << shown(r.status) << ", intervention " << shown(r.intervention)
              << ", seed " << shown(r.seed) << ", model " << shown(r.model) << "\n";
    if (!r.message.empty()) std::cout << "  message: " << r.message << "\n";
    if (!r.train.empty())
      std::cout << "  train: " << r.train.size() << " steps, loss " << r.train.front().loss << " -> "
                << r.train.back().loss << " nats/token\n";
    if (r.eval) {
      auto s = summarize(*r.eval, prefix + r.name, r.intervention);
      s.status = r.status;
      s.group = prefix + r.sweep.group, s.cell = r.sweep.values;  // a sweep's run: its group for the sweep table
      sums.push_back(s);
    }
    for (const auto& a : analysis_records())
      if (a.present(r)) a.inspect(r, std::cout);
    if (tree) walk(f, r.name, 1);
  }
}

}  // namespace

Runner add_inspect(CLI::App& app, const std::string&) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto tree = std::make_shared<bool>(false);
  auto table = std::make_shared<std::string>();
  app.add_option("files", *paths, "experiment files (HDF5); several: one table compares all their runs")->required();
  app.add_flag("--tree", *tree, "also list every dataset with its shape");
  app.add_option("--table", *table, "print only this table: 'runs' (every evaluated run) or 'sweep' (the sweep's "
                 "groups over their seeds), e.g. for a document's generated tables (tools/reproduce.sh)")
      ->check(CLI::IsMember({"runs", "sweep"}));
  return [paths, tree, table]() {
    std::vector<RunSummary> sums;
    for (size_t i = 0; i < paths->size(); ++i) {
      const std::string& path = (*paths)[i];
      if (i && table->empty()) std::cout << "\n";
      inspect_file(path, paths->size() > 1 ? std::filesystem::path(path).stem().string() + "/" : "", *tree, sums,
                   !table->empty());
    }
    if (*table == "runs") {
      if (sums.empty()) throw Error("no evaluated run in the files: no 'runs' table");
      std::cout << format_summary_table(sums);
    } else if (*table == "sweep") {
      const std::string t = format_sweep_table(sums);
      if (t.empty()) throw Error("no run of a sweep in the files: no 'sweep' table");
      std::cout << t;
    } else if (!sums.empty()) {
      std::cout << "\n" << format_summary_table(sums) << format_sweep_table(sums);
    }
    return 0;
  };
}

}  // namespace statescope::cli

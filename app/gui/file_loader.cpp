// file_loader.cpp — runs read back through the one run-record reader (core/store/run_record.h).
#include "app/gui/file_loader.h"

#include "core/base/error.h"
#include "core/store/experiment_store.h"
#include "core/store/run_record.h"

namespace statescope::gui {

views::RunData to_run_data(RunRecord&& rec) {
  views::RunData r;
  static_cast<RunResults&>(r) = std::move(rec);
  r.name = QString::fromStdString(rec.name);
  r.file = QString::fromStdString(rec.file);
  r.intervention = QString::fromStdString(rec.intervention);
  r.status = QString::fromStdString(rec.status);
  return r;
}

views::RunData read_run(const H5File& f, const std::string& run) { return to_run_data(read_run_record(f, run)); }

views::Runs load_runs(const std::string& path, std::vector<std::string>* unreadable) {
  H5File f(path, H5File::Mode::Read);
  check_experiment_file(f);  // ours, and not from a newer statescope
  views::Runs runs;
  const auto names = run_names(f);
  std::string first;
  for (const auto& name : names) {
    try {
      runs.push_back(read_run(f, name));
      runs.back().color = views::run_color(static_cast<int>(runs.size()) - 1);
    } catch (const Error& e) {
      if (!unreadable) throw;
      unreadable->push_back(e.what());
      if (first.empty()) first = e.what();
    }
  }
  if (runs.empty() && !first.empty()) throw Error(first);
  return runs;
}

std::string read_spec(const std::string& path) {
  H5File f(path, H5File::Mode::Read);
  try {
    return f.attr("/", "spec");
  } catch (const Error&) {
    return {};
  }
}

}  // namespace statescope::gui

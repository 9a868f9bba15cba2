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

views::Runs load_runs(const std::string& path) {
  H5File f(path, H5File::Mode::Read);
  views::Runs runs;
  for (auto& rec : read_run_records(f)) {  // ours, and not from a newer statescope
    runs.push_back(to_run_data(std::move(rec)));
    runs.back().color = views::run_color(static_cast<int>(runs.size()) - 1);
  }
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

// file_loader.cpp — runs read back through the one run-record reader (core/store/run_record.h).
#include "app/gui/file_loader.h"

#include "core/base/error.h"
#include "core/store/experiment_store.h"
#include "core/store/group_io.h"
#include "core/store/run_label.h"
#include "core/store/run_record.h"

#include <algorithm>
#include <limits>

namespace statescope::gui {

views::RunData to_run_data(RunRecord&& rec) {
  views::RunData r;
  static_cast<RunResults&>(r) = std::move(rec);
  r.name = r.in_file = QString::fromStdString(rec.name);
  r.file = QString::fromStdString(rec.file);
  r.intervention = QString::fromStdString(rec.intervention);
  r.status = QString::fromStdString(rec.status);
  r.seed = QString::fromStdString(rec.seed), r.model = QString::fromStdString(rec.model);
  r.architecture = QString::fromStdString(rec.architecture), r.versions = QString::fromStdString(rec.versions);
  r.device = QString::fromStdString(rec.device), r.message = QString::fromStdString(rec.message);
  return r;
}

views::RunData read_run(const H5File& f, const std::string& run) {
  views::RunData r = to_run_data(read_run_record(f, run));
  r.display = QString::fromStdString(run_display_name(f, run));  // a renamed run shows its display name
  if (!r.display.isEmpty()) r.name = r.display;
  return r;
}

views::Runs load_runs(const std::string& path, std::vector<std::string>* unreadable) {
  H5File f(path, H5File::Mode::Read);
  check_experiment_file(f);  // ours, and not from a newer statescope
  views::Runs runs;
  // The runs in their experiment's plan order (attribute "order", as the live list showed them; runs
  // of files without it after those with it, by name), so order and colours match the live run's.
  auto names = run_names(f);
  auto order = [&](const std::string& name) {
    try {
      return has_attr(f, name, "order") ? std::stoll(f.attr(name, "order")) : std::numeric_limits<long long>::max();
    } catch (const std::exception&) {
      return std::numeric_limits<long long>::max();
    }
  };
  std::vector<std::pair<long long, std::string>> keyed;
  for (const auto& n : names) keyed.emplace_back(order(n), n);
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  names.clear();
  for (auto& [k, n] : keyed) names.push_back(n);
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

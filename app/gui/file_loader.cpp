// file_loader.cpp — read runs back with the experiment_store readers.
#include "app/gui/file_loader.h"

#include "core/base/error.h"
#include "core/store/experiment_store.h"

namespace statescope::gui {

views::RunData read_run(const H5File& f, const std::string& run) {
  views::RunData r;
  r.name = QString::fromStdString(run);
  r.file = QString::fromStdString(f.path());
  auto attr = [&](const char* k) {
    try {
      return QString::fromStdString(f.attr(run, k));
    } catch (const Error&) {
      return QString();
    }
  };
  r.intervention = attr("intervention");
  r.status = attr("status");
  r.train = read_train(f, run);
  if (f.has(run + "/ppl/nll")) r.eval = read_eval(f, run);
  if (f.has(run + "/effrem/value")) r.effrem = read_effrem(f, run);
  if (f.has(run + "/state_stats/histogram")) r.states = read_state_stats(f, run);
  if (f.has(run + "/passkey/accuracy")) r.passkey = read_passkey(f, run);
  if (f.has(run + "/copying/exact")) r.copying = read_copying(f, run);
  if (f.has(run + "/babi/accuracy")) r.babi = read_babi(f, run);
  if (f.has(run + "/unexplored/outside")) r.unexplored = read_unexplored(f, run);
  const SweepCell cell = read_sweep_cell(f, run);  // a sweep's run (empty otherwise)
  r.sweep_group = cell.group;
  r.sweep_cell = cell.values;
  return r;
}

views::Runs load_runs(const std::string& path) {
  H5File f(path, H5File::Mode::Read);
  check_experiment_file(f);  // ours, and not from a newer statescope
  views::Runs runs;
  for (auto& name : run_names(f)) {
    runs.push_back(read_run(f, name));
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

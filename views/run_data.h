// run_data.h — everything the views draw for one run, as plain result structs (no LibTorch).
// The app fills it from an experiment file or live from a worker thread.
#pragma once
#include <QColor>
#include <QString>
#include <vector>

#include "core/store/run_results.h"
#include "views/theme.h"  // run_color

namespace statescope::views {

// A run as the views draw it: its results (every registered analysis's slot, core/store/run_results.h) and
// how the app shows it.
struct RunData : RunResults {
  QString name, intervention, status, file;  // file: the experiment file it came from
  // Where the run came from, as its file records it (empty while it runs live): its seed, model and
  // architecture, the versions and device it ran with, and a failed run's message.
  QString seed, model, architecture, versions, device, message;
  QString in_file;  // its group's name in its file; "": name (a live run before it is read back)
  // Its display name, as its file records it (core/store/run_label.h) or as just renamed; "": the
  // group's. `name` is this (or the group's name) after its file's short tag when files are compared.
  QString display;
  QColor color;
  bool checked = true;                       // overlaid in the views
};

using Runs = std::vector<RunData>;

}  // namespace statescope::views

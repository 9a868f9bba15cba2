// run_label.h — a run's display name: the attribute 'display_name' on the run's group, the label
// the app shows instead of the group's name (a renamed run). Renaming writes that attribute alone:
// the group keeps its name, its data and every other attribute, so `inspect`, `--from ... --only` and
// every reader find the run as before. The write goes through the staged copy an append uses
// (experiment_store.h), so a failure at any point leaves the file as it was. No LibTorch, no Qt.
#pragma once
#include <string>

namespace statescope {

class H5File;

// Throws Error "<where>: ..." unless `display` can be a display name: valid UTF-8, no control
// character, not blank, at most 120 bytes.
void check_display_name(const std::string& display, const std::string& where);
// Sets run `run`'s display name in the experiment file at `path` ("" removes it: the group's name
// again). Throws Error naming the file: not an experiment file, no such run, a bad name, a write that
// failed (the file left as it was).
void set_run_display_name(const std::string& path, const std::string& run, const std::string& display);
// The run's display name, "" when it has none (or an unreadable one: the group's name is shown).
std::string run_display_name(const H5File& f, const std::string& run);

}  // namespace statescope

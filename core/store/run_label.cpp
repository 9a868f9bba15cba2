// run_label.cpp — a run's display name in its file (see run_label.h).
#include "core/store/run_label.h"

#include "core/base/error.h"
#include "core/base/names.h"
#include "core/store/experiment_store.h"
#include "core/store/group_io.h"
#include "core/store/h5file.h"

#include <algorithm>

namespace statescope {

namespace {
constexpr const char* kKey = "display_name";
constexpr size_t kMaxBytes = 120;
}  // namespace

void check_display_name(const std::string& display, const std::string& where) {
  if (!valid_utf8(display)) throw Error(where + ": the display name is not valid UTF-8: '" + escaped(display) + "'");
  if (display.size() > kMaxBytes)
    throw Error(where + ": the display name has " + std::to_string(display.size()) + " bytes; at most " +
                std::to_string(kMaxBytes));
  for (unsigned char c : display)
    if (c < 0x20 || c == 0x7f) throw Error(where + ": the display name holds a control character: '" + escaped(display) + "'");
  if (std::all_of(display.begin(), display.end(), [](unsigned char c) { return c == ' '; }))
    throw Error(where + ": the display name is blank");
}

void set_run_display_name(const std::string& path, const std::string& run, const std::string& display) {
  if (!display.empty()) check_display_name(display, path + ", run '" + run + "'");
  {  // the run must be one of the file's runs (a group with a status), checked before a copy is made
    H5File probe(path, H5File::Mode::Read);
    check_experiment_file(probe);
    const auto runs = run_names(probe);
    if (std::find(runs.begin(), runs.end(), run) == runs.end())
      throw Error(path + ": holds no run '" + escaped(run) + "' to rename");
  }
  auto file = ExperimentFile::open(path);
  file->file().set_attr(run, kKey, display);
  file->close();
}

std::string run_display_name(const H5File& f, const std::string& run) {
  try {
    if (!has_attr(f, run, kKey)) return "";
    std::string d = f.attr(run, kKey);
    check_display_name(d, f.path());
    return d;
  } catch (const Error&) {
    return "";
  }
}

}  // namespace statescope

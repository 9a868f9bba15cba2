// file_loader.h — experiment file (HDF5) -> RunData for the views. No LibTorch.
#pragma once
#include <string>

#include "core/store/h5file.h"
#include "views/run_data.h"

namespace statescope::gui {

// One run's groups, whatever of them exist (a run still "running" has only some).
views::RunData read_run(const H5File& f, const std::string& run);
// Every run in the file; throws Error naming the file when it is not an experiment file.
views::Runs load_runs(const std::string& path);
// The experiment spec the file was made from (root attribute "spec"; empty when absent, e.g. a
// file written by a single CLI verb).
std::string read_spec(const std::string& path);

}  // namespace statescope::gui

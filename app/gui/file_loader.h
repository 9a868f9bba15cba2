// file_loader.h — experiment file (HDF5) -> RunData for the views. No LibTorch.
#pragma once
#include <string>
#include <vector>

#include "core/store/h5file.h"
#include "views/run_data.h"

namespace statescope::gui {

// One run's groups, whatever of them exist (a run still "running" has only some).
views::RunData read_run(const H5File& f, const std::string& run);
// Every run in the file; throws Error naming the file when it is not an experiment file.
// With `unreadable`, a run the reader refuses (a damaged or misshapen dataset) is left out and its
// Error's message added there, so the file's healthy runs still open; a file none of whose runs
// can be read is refused with the first one's Error. Without it, any refusal throws.
views::Runs load_runs(const std::string& path, std::vector<std::string>* unreadable = nullptr);
// The experiment spec the file was made from (root attribute "spec"; empty when absent, e.g. a
// file written by a single CLI verb).
std::string read_spec(const std::string& path);

}  // namespace statescope::gui

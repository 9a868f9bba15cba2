// run_record.h — the one reader of runs from an experiment file: every registered analysis
// (analysis_record.h) read through its descriptor. `inspect`, the report and the app's file loader
// all read runs here. No LibTorch, no Qt.
#pragma once
#include <string>
#include <vector>

#include "core/store/analysis_record.h"
#include "core/store/h5file.h"

namespace statescope {

// One run: its attributes, training steps, sweep cell and every result the file holds for it.
// Throws Error naming the file, the run and the dataset when a group breaks its promises.
RunRecord read_run_record(const H5File& f, const std::string& run);

// Every run of experiment file `f`, in file order (check_experiment_file first: a foreign or newer
// file is refused by name).
std::vector<RunRecord> read_run_records(const H5File& f);

}  // namespace statescope

// analysis_record.h — the analysis registry: one descriptor per analysis says what the store,
// `inspect`, the report and the app know of it. No LibTorch, no Qt.
//
// An analysis is one folder, core/analyses/<key>/: its computation (<key>.{h,cpp}, LibTorch), its
// record (record.{h,cpp}: the HDF5 writer and reader, the `inspect` lines, its spec section's reader
// and record_<key>(), which returns this descriptor), its report section (report.cpp) and its
// experiment step (step.cpp: run_<key>, core/experiment/analysis_steps.h); a result whose group is
// axes, columns and attributes says so once in a GroupSchema (core/store/group_schema.h) that both
// writes and reads it. Registering it is its line in core/analyses/list.h, X(key, Result): the spec
// parser, the runner, the app's panel, `inspect`, the report, the loader and RunResults' slot
// (core/store/run_results.h) come from there; the build picks the folder's files up by their names,
// and a folder that lacks record_<key> or run_<key> fails to link. Outside core/ it has its view:
// one file in views/ and its line in views/view_registry.cpp (a GUI, kept out of core/ by layering). tests/test_registry.cpp checks that every registered analysis
// round-trips through its writer and reader, is summarised by `inspect`, has a report section, a
// spec section, an experiment step and a view.
#pragma once
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/store/run_results.h"

namespace statescope {

class H5File;

// A run as the readers give it: the run group's attributes and every result found in it.
struct RunRecord : RunResults {
  std::string name, file;                        // group name; the experiment file it came from
  std::string status, message, intervention, model, seed, versions, device;  // "" when absent
  std::string architecture;  // e.g. "GLA · 2 layers · state ..." ("" in files before it was recorded)
};

// What a report section gets besides the runs.
struct ReportContext {
  int64_t T = 0;  // the training context (the first evaluated run's), for the marks at T
};

struct AnalysisRecord {
  std::string key;     // the spec's "analyses" key (or "eval" for the evaluation every run has)
  std::string group;   // the run's HDF5 group, e.g. "effrem"
  std::string marker;  // the dataset, relative to the run, whose presence says a run has this result
  std::string title;   // heading in the report and `inspect`
  std::string label;   // the app's check box for it ("Passkey grid (zero-shot)")
  bool default_plot;   // may be the run's NeXus `default` plot (group_io.h: prefer_default)
  // Fills the run's slot from the file; throws Error naming the file, run and dataset.
  void (*read)(const H5File& f, const std::string& run, RunResults& into);
  // Whether `r` holds this analysis's result.
  bool (*present)(const RunResults& r);
  // `inspect`'s lines for one run that holds it (indented two spaces, each ending in a newline).
  void (*inspect)(const RunRecord& r, std::ostream& out);
  // The report's section body (HTML) for the runs that hold it; "" leaves the section out.
  std::string (*report)(const std::vector<RunRecord>& runs, const ReportContext& ctx);
  // Its spec section ("analyses": {key: {...}}) checked; returns the section its experiment step
  // reads (decay and attention fill in their defaults, the others keep it as given and read it with
  // the same defaults). Throws Error naming `src` and the field. nullptr: not asked for by a spec
  // (eval, which every run has).
  nlohmann::json (*options)(const nlohmann::json& section, const std::string& src) = nullptr;
  // What it measures and what it costs per run, in a sentence or two: the app's tooltip on its box.
  std::string about;
};

// Every analysis: eval, then core/analyses/list.h's, in the order runs compute them and the report
// shows them.
const std::vector<AnalysisRecord>& analysis_records();
const AnalysisRecord* find_analysis_record(const std::string& key);

}  // namespace statescope

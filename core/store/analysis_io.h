// analysis_io.h — what an analysis's record header (core/analyses/<name>/record.h) declares, said
// once: its writer, reader, `inspect` lines and report section; and make_record, which builds its
// descriptor (registry.cpp) from the result's slot in RunResults and those functions.
#pragma once
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/store/analysis_record.h"
#include "core/store/experiment_store.h"

// Declares write_<name>(file, run, result), read_<name>(h5, run), inspect_<name>(record, out) and
// report_<name>(runs, ctx) for an analysis whose result struct is `Result` (registry.cpp makes its
// descriptor from them).
#define STATESCOPE_ANALYSIS_RECORD(name, Result)                                        \
  void write_##name(ExperimentFile& file, const std::string& run, const Result& r);     \
  Result read_##name(const H5File& f, const std::string& run);                          \
  void inspect_##name(const RunRecord& r, std::ostream& out);                            \
  std::string report_##name(const std::vector<RunRecord>& runs, const ReportContext& ctx);

namespace statescope {

// Group run/<group> as every analysis group is marked: a NeXus NXdata plot of `signal` over `axes`
// (group_io.h), offered as the run's default plot (prefer_default), its `definition` attribute and
// its whole-number attributes.
void describe_group(H5File& f, const std::string& run, const std::string& group, const std::string& signal,
                    const std::vector<std::string>& axes, const std::string& definition,
                    const std::vector<std::pair<std::string, int64_t>>& attrs = {});

// The loop each per-run section of the report begins with: f(index, run, result) for every run
// holding a result in `slot`, the strings it returns joined.
template <class R, class F>
std::string per_run(const std::vector<RunRecord>& runs, std::optional<R> RunResults::*slot, F&& f) {
  std::string out;
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i].*slot) out += f(i, runs[i], *(runs[i].*slot));
  return out;
}

// The descriptor of the analysis whose result lives in RunResults::*Slot and is read by Read; `about`
// says what it measures and costs (the app's tooltip); `options` nullptr: not asked for by a spec.
template <auto Slot, auto Read>
AnalysisRecord make_record(std::string key, std::string group, std::string marker, std::string title, std::string label,
                           bool default_plot, void (*inspect)(const RunRecord&, std::ostream&),
                           std::string (*report)(const std::vector<RunRecord>&, const ReportContext&),
                           nlohmann::json (*options)(const nlohmann::json&, const std::string&), std::string about) {
  return AnalysisRecord{std::move(key), std::move(group), std::move(marker), std::move(title), std::move(label),
                        default_plot,
                        [](const H5File& f, const std::string& run, RunResults& into) { into.*Slot = Read(f, run); },
                        [](const RunResults& r) { return (r.*Slot).has_value(); }, inspect, report, options,
                        std::move(about)};
}

// An analysis's `options` (analysis_record.h) from its typed reader `Parse(section, src)`: the section
// checked by reading it, then kept as given (the step reads it again with the same defaults).
template <auto Parse>
nlohmann::json checked_section(const nlohmann::json& section, const std::string& src) {
  (void)Parse(section, src);
  return section;
}

}  // namespace statescope

// run_record.cpp — read_run_record: a run's attributes, then each registered analysis whose
// marker dataset the run holds.
#include "core/store/run_record.h"

#include "core/base/error.h"
#include "core/store/experiment_store.h"

namespace statescope {

RunRecord read_run_record(const H5File& f, const std::string& run) {
  RunRecord r;
  r.name = run;
  r.file = f.path();
  auto attr = [&](const char* k) {
    try {
      return f.attr(run, k);
    } catch (const Error&) {
      return std::string();
    }
  };
  r.status = attr("status"), r.message = attr("message"), r.intervention = attr("intervention");
  r.model = attr("model"), r.seed = attr("seed"), r.versions = attr("versions"), r.device = attr("device");
  r.architecture = attr("architecture");
  r.train = read_train(f, run);
  for (const auto& a : analysis_records())
    if (f.has(run + "/" + a.marker)) a.read(f, run, r);
  r.sweep = read_sweep_cell(f, run);
  return r;
}

std::vector<RunRecord> read_run_records(const H5File& f) {
  check_experiment_file(f);
  std::vector<RunRecord> out;
  for (const auto& name : run_names(f)) out.push_back(read_run_record(f, name));
  return out;
}

}  // namespace statescope

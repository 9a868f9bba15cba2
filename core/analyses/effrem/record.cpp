// record.cpp — Effective Remembrance written and read back, and its `inspect` lines (record.h).
#include "core/analyses/effrem/record.h"

#include <cmath>
#include <ostream>

#include "core/base/json_fields.h"
#include "core/analyses/section.h"
#include "core/store/group_schema.h"

namespace statescope {

namespace {
GroupSchema effrem_group(EffRemResult& r) {
  return {"effrem", "value", {{"T", &r.T}, {"t", &r.t}}, {{"value", &r.value}, {"stderr", &r.stderr_}},
          {{"sequences", &r.sequences}, {"forward_tokens", &r.forward_tokens}},
          "TV(p(.|x[0:T]), p(.|x[t:T])), mean over sequences; NaN where t >= T"};
}
}  // namespace

void write_effrem(ExperimentFile& file, const std::string& run, const EffRemResult& r) {
  write_result(file, run, r, effrem_group);
}

EffRemResult read_effrem(const H5File& f, const std::string& run) { return read_result<EffRemResult>(f, run, effrem_group); }

void inspect_effrem(const RunRecord& rec, std::ostream& out) {
  const EffRemResult& e = *rec.effrem;
  out << "  effrem: T = {";
  for (size_t i = 0; i < e.T.size(); ++i) out << (i ? ", " : "") << e.T[i];
  out << "}, " << e.t.size() << " truncation points, " << e.sequences << " sequences, " << e.forward_tokens
      << " forward tokens; EffRem at the largest grid t < T:";
  for (size_t i = 0; i < e.T.size(); ++i) {
    double last = NAN;
    for (size_t j = 0; j < e.t.size(); ++j)
      if (!std::isnan(e.value[i * e.t.size() + j])) last = e.value[i * e.t.size() + j];
    out << " " << last;
  }
  out << "\n";
}

EffRemOptions effrem_options(const nlohmann::json& section, const std::string& src) {
  const JsonFields f(section, src, "analyses.effrem.");
  f.only({"T", "points", "log", "sequences"});
  EffRemOptions o;
  o.Ts.clear();  // no "T": T, 2T, ..., 64T of each run's T (the step)
  f.read("points", o.points);
  o.log_grid = f.get("log", o.log_grid);
  f.read("sequences", o.sequences);
  if (f.has("T")) {
    f.read("T", o.Ts);
    if (o.Ts.empty()) f.fail("T", "needs at least one context length");
  }
  for (auto t : o.Ts)
    if (t <= 1) f.fail("T", "needs context lengths > 1, got " + std::to_string(t));
  positive(f, "points", o.points);
  positive(f, "sequences", o.sequences);
  return o;
}

AnalysisRecord record_effrem() {
  return make_record<&RunResults::effrem, read_effrem>("effrem", "effrem", "effrem/value", "Effective Remembrance",
                                                       "Effective Remembrance", true, inspect_effrem, report_effrem,
                                                       checked_section<effrem_options>,
      "Effective Remembrance EffRem_T(t): how much dropping the first t tokens still changes the prediction at T (total variation), for T to 64T. Cost per run: points x sequences forwards of each length (16 x 16 for 7 lengths by default): seconds for the demo's model, minutes at 130M.");
}

}  // namespace statescope

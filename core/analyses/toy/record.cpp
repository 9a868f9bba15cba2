// record.cpp — the toy analysis written and read back, its `inspect` line and spec section.
#include "core/analyses/toy/record.h"

#include <ostream>

#include "core/base/json_fields.h"
#include "core/store/group_schema.h"

namespace statescope {

namespace {
GroupSchema toy_group(ToyResult& r) {
  return {"toy", "entropy", {{"position", &r.position}}, {{"entropy", &r.entropy}}, {{"sequences", &r.sequences}},
          "mean next-token entropy (nats) per position"};
}
}  // namespace

void write_toy(ExperimentFile& file, const std::string& run, const ToyResult& r) { write_result(file, run, r, toy_group); }
ToyResult read_toy(const H5File& f, const std::string& run) { return read_result<ToyResult>(f, run, toy_group); }

void inspect_toy(const RunRecord& rec, std::ostream& out) {
  out << "  toy: entropy at the last position " << (rec.toy->entropy.empty() ? 0.0 : rec.toy->entropy.back()) << "\n";
}

nlohmann::json options_toy(const nlohmann::json& section, const std::string& src) {
  const JsonFields f(section, src, "analyses.toy.");
  f.only({"length"});
  const int64_t length = f.get<int64_t>("length", 64);
  if (length < 2) f.fail("length", "must be >= 2");
  return {{"length", length}};
}

AnalysisRecord record_toy() {
  return make_record<&RunResults::toy, read_toy>("toy", "toy", "toy/entropy", "Toy entropy", "Toy entropy", false,
                                                 inspect_toy, report_toy, options_toy);
}

}  // namespace statescope

// record.cpp — passkey retrieval written and read back, and its `inspect` lines (record.h).
#include "core/analyses/passkey/record.h"

#include <ostream>

#include "core/store/group_io.h"

namespace statescope {

void write_passkey(ExperimentFile& file, const std::string& run, const PasskeyResult& r) {
  file.write_group([&](H5File& f) {
    const std::string g = run + "/passkey";
    const int64_t nl = static_cast<int64_t>(r.lengths.size()), nd = static_cast<int64_t>(r.depths.size());
    f.write(g + "/length", r.lengths.data(), {nl});
    f.write(g + "/depth", r.depths.data(), {nd});
    f.write(g + "/accuracy", r.accuracy.data(), {nl, nd});
    f.write(g + "/digit_accuracy", r.digit_accuracy.data(), {nl, nd});
    nx_data(f, g, "accuracy", {"length", "depth"});
    prefer_default(f, run, "passkey");
    f.set_attr_i64(g, "samples", r.samples);
    f.set_attr(g, "definition", "greedy decoding of the 5-digit key; accuracy = all 5 digits right");
  });
}

PasskeyResult read_passkey(const H5File& f, const std::string& run) {
  const GroupReader g{f, run, "passkey"};
  g.require("accuracy");
  PasskeyResult r;
  r.lengths = g.i64("length");
  r.depths = g.f64("depth");
  const int64_t n = g.product({g.count(r.lengths.size()), g.count(r.depths.size())});
  r.accuracy = g.f64("accuracy", n, "[length, depth]");
  r.digit_accuracy = g.f64("digit_accuracy", n, "[length, depth]");
  r.samples = g.attr_int("samples");
  return r;
}

namespace {
void inspect_passkey(const RunRecord& rec, std::ostream& out) {
  const PasskeyResult& p = *rec.passkey;
  double acc = 0, dig = 0;
  for (size_t i = 0; i < p.accuracy.size(); ++i)
    acc += p.accuracy[i] / double(p.accuracy.size()), dig += p.digit_accuracy[i] / double(p.accuracy.size());
  out << "  passkey: " << p.lengths.size() << " lengths";
  if (!p.lengths.empty()) out << " (" << p.lengths.front() << ".." << p.lengths.back() << ")";
  out << " x " << p.depths.size() << " depths, " << p.samples << " samples per cell; mean exact " << acc
      << ", mean digit accuracy " << dig << " (chance 0.1)\n";
}
}  // namespace

const AnalysisRecord& passkey_record() {
  static const AnalysisRecord a{
      "passkey", "passkey", "passkey/accuracy", "Passkey retrieval", true,
      [](const H5File& f, const std::string& run, RunResults& into) { into.passkey = read_passkey(f, run); },
      [](const RunResults& r) { return r.passkey.has_value(); }, inspect_passkey, report_passkey};
  return a;
}

}  // namespace statescope

// record.cpp — passkey retrieval written and read back, and its `inspect` lines (record.h).
#include "core/analyses/passkey/record.h"

#include <ostream>

#include "core/base/json_fields.h"
#include "core/analyses/section.h"
#include "core/store/group_io.h"

namespace statescope {

void write_passkey(ExperimentFile& file, const std::string& run, const PasskeyResult& r) {
  file.write_group([&](H5File& f) {
    const std::string g = run + "/passkey";
    const int64_t nl = static_cast<int64_t>(r.lengths.size()), nd = static_cast<int64_t>(r.depths.size());
    f.write(g + "/length", r.lengths.data(), {nl});
    f.write(g + "/depth", r.depths.data(), {nd});
    write_columns(f, g, {{"accuracy", &r.accuracy}, {"digit_accuracy", &r.digit_accuracy}}, {nl, nd});
    describe_group(f, run, "passkey", "accuracy", {"length", "depth"},
                   "greedy decoding of the 5-digit key; accuracy = all 5 digits right", {{"samples", r.samples}});
  });
}

PasskeyResult read_passkey(const H5File& f, const std::string& run) {
  const GroupReader g{f, run, "passkey"};
  g.require("accuracy");
  PasskeyResult r;
  r.lengths = g.i64("length");
  r.depths = g.f64("depth");
  const int64_t n = g.product({g.count(r.lengths.size()), g.count(r.depths.size())});
  g.columns({{"accuracy", &r.accuracy}, {"digit_accuracy", &r.digit_accuracy}}, n, "[length, depth]");
  r.samples = g.attr_int("samples");
  return r;
}

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

PasskeyOptions passkey_options(const nlohmann::json& section, const std::string& src) {
  const JsonFields f(section, src, "analyses.passkey.");
  f.only({"lengths", "depths", "samples", "finetune"});
  PasskeyOptions o;
  if (f.has("finetune")) o.finetune = parse_finetune(f.child("finetune"), PasskeyOptions::default_finetune());
  f.read("lengths", o.lengths);
  f.read("depths", o.depths);
  f.read("samples", o.samples);
  for (double d : o.depths)
    if (d < 0 || d > 1) f.fail("depths", "must be in [0, 1], got " + std::to_string(d));
  positive(f, "samples", o.samples);
  return o;
}

AnalysisRecord record_passkey() {
  return make_record<&RunResults::passkey, read_passkey>("passkey", "passkey", "passkey/accuracy", "Passkey retrieval",
                                                         "Passkey grid (zero-shot)", true, inspect_passkey,
                                                         report_passkey, checked_section<passkey_options>);
}

}  // namespace statescope

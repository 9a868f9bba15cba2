// record.cpp — passkey retrieval written and read back, and its `inspect` lines (record.h).
#include "core/analyses/passkey/record.h"

#include <ostream>

#include "core/base/json_fields.h"
#include "core/analyses/section.h"
#include "core/store/group_schema.h"

namespace statescope {

namespace {
GroupSchema passkey_group(PasskeyResult& r) {
  return {"passkey", "accuracy", {{"length", &r.lengths}, {"depth", nullptr, &r.depths}},
          {{"accuracy", &r.accuracy}, {"digit_accuracy", &r.digit_accuracy}}, {{"samples", &r.samples}},
          "greedy decoding of the 5-digit key; accuracy = all 5 digits right"};
}
}  // namespace

void write_passkey(ExperimentFile& file, const std::string& run, const PasskeyResult& r) {
  write_result(file, run, r, passkey_group);
}

PasskeyResult read_passkey(const H5File& f, const std::string& run) {
  return read_result<PasskeyResult>(f, run, passkey_group);
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
                                                         report_passkey, checked_section<passkey_options>,
      "Passkey retrieval: a number hidden at a depth of filler text and asked for at its end, over a length x depth grid (4T to 64T x 5 depths, 10 samples), zero-shot unless its section fine-tunes. Cost per run: one forward per cell and sample: grows with the longest length.");
}

}  // namespace statescope

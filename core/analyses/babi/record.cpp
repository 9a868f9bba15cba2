// record.cpp — bAbI-style questions written and read back, and their `inspect` lines (record.h).
#include "core/analyses/babi/record.h"

#include <algorithm>
#include <ostream>

#include "core/base/json_fields.h"
#include "core/analyses/section.h"
#include "core/store/group_schema.h"

namespace statescope {

namespace {
GroupSchema babi_group(BabiResult& r) {
  return {"babi", "accuracy", {{"length", &r.lengths}},
          // Files from before the recency baseline have no last_mentioned_accuracy.
          {{"accuracy", &r.accuracy}, {"choice_accuracy", &r.choice_accuracy},
           {"?last_mentioned_accuracy", &r.last_mentioned_accuracy}, {"mean_distance", &r.mean_distance}},
          {{"samples", &r.samples}, {"candidates", &r.candidates}},
          "single-supporting-fact 'where is X?' in distractor prose; accuracy = greedy answer is the location; "
          "choice_accuracy = most likely of the candidate locations is right (chance 1/candidates); "
          "last_mentioned_accuracy = baseline answering the location of the prompt's last fact; mean_distance = "
          "tokens from the supporting fact to the end of the prompt"};
}
}  // namespace

void write_babi(ExperimentFile& file, const std::string& run, const BabiResult& r) {
  write_result(file, run, r, babi_group);
}

BabiResult read_babi(const H5File& f, const std::string& run) { return read_result<BabiResult>(f, run, babi_group); }

void inspect_babi(const RunRecord& rec, std::ostream& out) {
  const BabiResult& b = *rec.babi;
  out << "  babi: greedy / choice accuracy by length (chance " << 1.0 / double(std::max<int64_t>(1, b.candidates))
      << (b.last_mentioned_accuracy.empty() ? "" : "; last-mentioned baseline in brackets") << "):";
  for (size_t i = 0; i < b.lengths.size(); ++i) {
    out << " " << b.lengths[i] << ": " << b.accuracy[i] << " / " << b.choice_accuracy[i];
    if (!b.last_mentioned_accuracy.empty()) out << " [" << b.last_mentioned_accuracy[i] << "]";
  }
  out << "\n";
}

BabiOptions babi_options(const nlohmann::json& section, const std::string& src) {
  const JsonFields f(section, src, "analyses.babi.");
  f.only({"lengths", "samples", "facts", "finetune"});
  BabiOptions o;
  if (f.has("finetune")) o.finetune = parse_finetune(f.child("finetune"), BabiOptions::default_finetune());
  f.read("lengths", o.lengths);
  f.read("samples", o.samples);
  f.read("facts", o.facts);
  positive(f, "samples", o.samples);
  positive(f, "facts", o.facts);
  return o;
}

AnalysisRecord record_babi() {
  return make_record<&RunResults::babi, read_babi>("babi", "babi", "babi/accuracy", "bAbI questions",
                                                   "bAbI questions (zero-shot)", true, inspect_babi, report_babi,
                                                   checked_section<babi_options>,
      "bAbI-style 'where is X?' questions hidden in long prose, accuracy by length (256 to 2048 tokens) against the last-mentioned baseline, zero-shot unless its section fine-tunes. Cost per run: 50 questions per length, one forward each; fine-tuning adds its steps.");
}

}  // namespace statescope

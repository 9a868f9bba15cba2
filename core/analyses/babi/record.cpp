// record.cpp — bAbI-style questions written and read back, and their `inspect` lines (record.h).
#include "core/analyses/babi/record.h"

#include <algorithm>
#include <ostream>

#include "core/store/group_io.h"

namespace statescope {

void write_babi(ExperimentFile& file, const std::string& run, const BabiResult& r) {
  file.write_group([&](H5File& f) {
    const std::string g = run + "/babi";
    const int64_t n = static_cast<int64_t>(r.lengths.size());
    f.write(g + "/length", r.lengths.data(), {n});
    f.write(g + "/accuracy", r.accuracy.data(), {n});
    f.write(g + "/choice_accuracy", r.choice_accuracy.data(), {n});
    if (!r.last_mentioned_accuracy.empty()) f.write(g + "/last_mentioned_accuracy", r.last_mentioned_accuracy.data(), {n});
    f.write(g + "/mean_distance", r.mean_distance.data(), {n});
    nx_data(f, g, "accuracy", {"length"});
    prefer_default(f, run, "babi");
    f.set_attr_i64(g, "samples", r.samples);
    f.set_attr_i64(g, "candidates", r.candidates);
    f.set_attr(g, "definition",
               "single-supporting-fact 'where is X?' in distractor prose; accuracy = greedy answer is the location; "
               "choice_accuracy = most likely of the candidate locations is right (chance 1/candidates); "
               "last_mentioned_accuracy = baseline answering the location of the prompt's last fact; "
               "mean_distance = tokens from the supporting fact to the end of the prompt");
  });
}

BabiResult read_babi(const H5File& f, const std::string& run) {
  const GroupReader g{f, run, "babi"};
  g.require("accuracy");
  BabiResult r;
  r.lengths = g.i64("length");
  const int64_t n = g.count(r.lengths.size());
  r.accuracy = g.f64("accuracy", n, "[length]");
  r.choice_accuracy = g.f64("choice_accuracy", n, "[length]");
  if (g.has("last_mentioned_accuracy"))  // files before the recency baseline have none
    r.last_mentioned_accuracy = g.f64("last_mentioned_accuracy", n, "[length]");
  r.mean_distance = g.f64("mean_distance", n, "[length]");
  r.samples = g.attr_int("samples");
  r.candidates = g.attr_int("candidates");
  return r;
}

namespace {
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
}  // namespace

const AnalysisRecord& babi_record() {
  static const AnalysisRecord a{
      "babi", "babi", "babi/accuracy", "bAbI questions", true,
      [](const H5File& f, const std::string& run, RunResults& into) { into.babi = read_babi(f, run); },
      [](const RunResults& r) { return r.babi.has_value(); }, inspect_babi, report_babi};
  return a;
}

}  // namespace statescope

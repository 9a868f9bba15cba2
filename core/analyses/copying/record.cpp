// record.cpp — synthetic copying written and read back, and its `inspect` lines (record.h).
#include "core/analyses/copying/record.h"

#include <ostream>

#include "core/base/json_fields.h"
#include "core/analyses/section.h"
#include "core/store/group_io.h"
#include "core/model/model_config.h"  // shape_config

namespace statescope {

void write_copying(ExperimentFile& file, const std::string& run, const CopyResult& r) {
  file.write_group([&](H5File& f) {
    const std::string g = run + "/copying";
    const int64_t n = static_cast<int64_t>(r.lengths.size());
    f.write(g + "/length", r.lengths.data(), {n});
    write_columns(f, g, {{"exact", &r.exact}, {"token_accuracy", &r.token_accuracy}, {"exact_passed", &r.exact_passed},
                         {"token_accuracy_passed", &r.token_accuracy_passed}},
                  {n});
    if (!r.foreign.empty()) {  // the same strings from foreign starting states
      const int64_t k = static_cast<int64_t>(r.foreign.size());
      f.write(g + "/exact_foreign", r.exact_foreign.data(), {k, n});
      f.write(g + "/token_accuracy_foreign", r.token_accuracy_foreign.data(), {k, n});
      std::string names;
      for (const auto& x : r.foreign) names += (names.empty() ? "" : ",") + x;
      f.set_attr(g, "foreign", names);
    }
    describe_group(f, run, "copying", "exact", {"length"},
                   "fresh model trained on examples BOS s SEP s EOS (strings of 1..L letters, one example per window "
                   "of T tokens, padded, loss on the copy and EOS only); evaluated on 'BOS s SEP', decoding |s| "
                   "tokens greedily; exact = whole string right, token_accuracy = fraction of right letters; "
                   "*_passed: each prompt starts from the final state of a training-format example (conv state "
                   "too iff conv_passed); *_foreign [start, length]: from the foreign states the attribute foreign "
                   "names in order (prose: after 4T tokens of held-out prose; noise: IID Gaussian with the passed "
                   "states' mean and std per layer and head; reversed: after a chain of reverse-task examples)",
                   {{"conv_passed", r.conv_passed ? 1 : 0}, {"L", r.L}, {"alphabet", r.alphabet}, {"T", r.T},
                    {"samples", r.samples}});
  });
}

CopyResult read_copying(const H5File& f, const std::string& run) {
  const GroupReader g{f, run, "copying"};
  g.require("exact");
  CopyResult r;
  r.lengths = g.i64("length");
  const int64_t n = g.count(r.lengths.size());
  // Files from before the passed-state evaluation have no *_passed.
  g.columns({{"exact", &r.exact}, {"token_accuracy", &r.token_accuracy}, {"?exact_passed", &r.exact_passed},
             {"?token_accuracy_passed", &r.token_accuracy_passed}},
            n, "[length]");
  if (g.has("exact_foreign")) {  // files from before the foreign starts have none
    const std::string names = g.attr_or("foreign", "");
    for (size_t a = 0; a < names.size();) {
      size_t b = names.find(',', a);
      if (b == std::string::npos) b = names.size();
      r.foreign.push_back(names.substr(a, b - a));
      a = b + 1;
    }
    const int64_t k = g.count(r.foreign.size());
    r.exact_foreign = g.f64("exact_foreign", g.product({k, n}), "[start, length]");
    r.token_accuracy_foreign = g.f64("token_accuracy_foreign", g.product({k, n}), "[start, length]");
  }
  r.conv_passed = g.attr_int("conv_passed") == 1;
  r.L = g.attr_int("L");
  r.alphabet = g.attr_int("alphabet");
  r.T = g.attr_int("T");
  r.samples = g.attr_int("samples");
  return r;
}

void inspect_copying(const RunRecord& rec, std::ostream& out) {
  const CopyResult& c = *rec.copying;
  out << "  copying: L = " << c.L << ", alphabet " << c.alphabet << ", T = " << c.T
      << "; exact (token accuracy) by length, from a zero state";
  if (!c.exact_passed.empty()) out << " | from a passed state (conv " << (c.conv_passed ? "passed" : "zero") << ")";
  out << ":";
  for (size_t i = 0; i < c.lengths.size(); ++i) {
    out << " " << c.lengths[i] << ": " << c.exact[i] << " (" << c.token_accuracy[i] << ")";
    if (!c.exact_passed.empty()) out << " | " << c.exact_passed[i] << " (" << c.token_accuracy_passed[i] << ")";
  }
  out << "\n";
  const size_t n = c.lengths.size();
  for (size_t k = 0; k < c.foreign.size(); ++k) {
    out << "    from a foreign state, " << c.foreign[k] << ":";
    for (size_t i = 0; i < n; ++i)
      out << " " << c.lengths[i] << ": " << c.exact_foreign[k * n + i] << " (" << c.token_accuracy_foreign[k * n + i] << ")";
    out << "\n";
  }
}

CopyingOptions copying_options(const nlohmann::json& section, const std::string& src) {
  const JsonFields f(section, src, "analyses.copying.");
  f.only({"L", "alphabet", "T", "steps", "pretrain_steps", "batch", "lr", "warmup", "samples", "eval_lengths",
          "train_docs", "model"});
  CopyingOptions o;
  if (f.has("model")) {  // the fresh model: any architecture, with pretrain's fields (pretrain_shape.h)
    const JsonFields m = f.child("model");
    m.only(shape_keys());
    read_shape(m, o.options.model);
    check_shape(o.options.model, src, "analyses.copying.model.");
    (void)shape_config(o.options.model, src + ": analyses.copying.model");
  }
  f.read("L", o.options.L);
  f.read("alphabet", o.options.alphabet);
  f.read("T", o.options.T);
  o.options.eval_samples = f.get("samples", o.options.eval_samples);
  f.read("eval_lengths", o.options.eval_lengths);
  f.read("train_docs", o.options.train_docs);
  f.read("steps", o.train.steps);
  f.read("pretrain_steps", o.options.pretrain_steps);
  f.read("batch", o.train.batch);
  f.read("lr", o.train.lr);
  f.read("warmup", o.train.warmup);
  positive(f, "L", o.options.L);
  if (o.options.pretrain_steps < 0) f.fail("pretrain_steps", "must be >= 0, got " + std::to_string(o.options.pretrain_steps));
  if (o.options.alphabet < 2 || o.options.alphabet > 26)
    f.fail("alphabet", "must be 2..26, got " + std::to_string(o.options.alphabet));
  positive(f, "steps", o.train.steps);
  positive(f, "batch", o.train.batch);
  positive(f, "samples", o.options.eval_samples);
  return o;
}

AnalysisRecord record_copying() {
  return make_record<&RunResults::copying, read_copying>("copying", "copying", "copying/exact", "Copying",
                                                         "Copying (fresh model per policy)", true, inspect_copying,
                                                         report_copying, checked_section<copying_options>,
      "Synthetic copying: trains a fresh small model per policy (600 steps by default, whatever model is loaded) and scores exact copies of strings up to 4L. Cost: the dearest analysis for a small model: it trains its own models, minutes on a CPU.");
}

}  // namespace statescope

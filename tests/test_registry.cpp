// test_registry.cpp — the analysis registry (core/store/analysis_record.h): every registered analysis
// is written by its writer, found by the one run-record reader and by nothing else's marker, read
// back equal, summarised by `inspect` and given a report section; a new analysis without a case
// here fails RegistryTest.EveryAnalysisRoundTrips by name.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "core/analyses/babi/record.h"
#include "core/analyses/copying/record.h"
#include "core/analyses/attention/record.h"
#include "core/analyses/decay/record.h"
#include "core/analyses/effrem/record.h"
#include "core/analyses/eval/record.h"
#include "core/analyses/passkey/record.h"
#include "core/analyses/states/record.h"
#include "core/analyses/unexplored/record.h"
#include "core/base/error.h"
#include "core/store/run_record.h"
#include "tests/scratch.h"
#include "tests/error_text.h"

using namespace statescope;

namespace {

EvalResult eval_result() {
  EvalResult r;
  r.length = 4, r.sequences = 2, r.n_layer = 1, r.nheads = 2, r.T = 2;
  r.nll = {1.0, 0.9, 0.8, 0.7};
  r.windowed_nll = {1.0, 0.9, 0.85, 0.75};
  r.nll_seq = {1.1f, 0.8f, 0.7f, 0.6f, 0.9f, 1.0f, 0.9f, 0.8f};
  r.windowed_seq = {1.1f, 0.8f, 0.8f, 0.7f, 0.9f, 1.0f, 0.9f, 0.8f};
  r.norm = {1, 2, 3, 4};
  r.norm_per_head = {1, 2, 3, 4, 1, 1, 1, 1};
  r.group_name = "channel group";
  // A hybrid's: layer 0 recurrent, layer 1 attention with one head.
  r.layer_kinds = {"mamba2", "attention"}, r.recurrent_layers = {0}, r.attention_layers = {1};
  r.attention_heads = 1, r.first_tokens = 4;
  r.attn_entropy = {0, 1, 1.5, 2}, r.attn_first = {1, 1, 1, 0.75};
  return r;
}

StateStatsResult states_result() {
  StateStatsResult r;
  r.positions = {1, 3}, r.layers = {0};
  r.nheads = 2, r.length = 4, r.sequences = 2, r.T = 2, r.n_layer = 1;
  r.bin_edges = {-1, 0, 1};
  r.histogram = {0.5, 0.5, 0.2, 0.8, 0.1, 0.9, 0.3, 0.7};
  r.mean = {0, 0.1, 0.2, 0.3}, r.std = {1, 1.1, 1.2, 1.3};
  r.fitted_mean = {0, 0.1}, r.fitted_std = {1, 1.5};
  r.delta_norm = {0.1, 0.2, 0.3, 0.4};
  r.group_name = "channel group";
  return r;
}

UnexploredResult unexplored_result() {
  UnexploredResult r;
  r.T = 2, r.length = 4, r.sequences = 2, r.n_layer = 1, r.nheads = 2;
  r.components = 3, r.train_samples = 40, r.train_steps = 5, r.train_batch = 4, r.recorded_samples = 10;
  r.quantile = 0.99;
  r.positions = {1, 3};
  r.outside = {0, 0.5, 1, 0.5}, r.outside_mean = {0.25, 0.75}, r.outside_seq = {0, 1, 0.5, 0.5};
  r.heldout_outside = {0.01, 0.02}, r.threshold = {3, 4};
  r.excess_rho = 0.5, r.excess_rho_lo = 0.1, r.excess_rho_hi = 0.9;
  r.excess = {NAN, 0.2};
  return r;
}

DecayResult decay_result() {
  DecayResult r;
  r.T = 2, r.length = 8, r.sequences = 2, r.n_layer = 1, r.groups = 2, r.group_name = "channel group";
  r.bin_edges = {0, 1, 2};
  r.near = {1, 0, 0.5, 0.5}, r.far = {0, 1, 0.25, 0.75};
  r.median_near = {5, 10}, r.median_far = {30, 40};
  return r;
}

AttentionResult attention_result() {
  AttentionResult r;
  r.layer = 1, r.length = 2, r.heads = {0, 3}, r.tokens = {65, 66};
  r.M = {0.5, 0, 0.25, 0.75, 1, 0, 0.1, 0.2};
  r.init = {0.9, 0.8, 0.7, 0.6}, r.by_distance = {0.625, 0.25, 0.6, 0.1};
  return r;
}

// One writer per registered key; the test fails for a registered analysis missing here.
const std::map<std::string, std::function<void(ExperimentFile&, const std::string&)>>& writers() {
  static const std::map<std::string, std::function<void(ExperimentFile&, const std::string&)>> w{
      {"eval", [](ExperimentFile& f, const std::string& run) { write_eval(f, run, eval_result()); }},
      {"effrem",
       [](ExperimentFile& f, const std::string& run) {
         write_effrem(f, run, EffRemResult{{4, 8}, {0, 2}, {0.5, 0.25, 0.6, 0.3}, {0.1, 0.1, 0.1, 0.1}, 2, 48});
       }},
      {"states", [](ExperimentFile& f, const std::string& run) { write_state_stats(f, run, states_result()); }},
      {"unexplored", [](ExperimentFile& f, const std::string& run) { write_unexplored(f, run, unexplored_result()); }},
      {"passkey",
       [](ExperimentFile& f, const std::string& run) {
         write_passkey(f, run, PasskeyResult{{64, 128}, {0.5}, {1.0, 0.0}, {1.0, 0.4}, 3});
       }},
      {"copying",
       [](ExperimentFile& f, const std::string& run) {
         write_copying(f, run, CopyResult{{2, 4}, {1, 0.5}, {1, 0.75}, {1, 0.25}, {1, 0.5}, 4, 8, 10, 32, true});
       }},
      {"decay", [](ExperimentFile& f, const std::string& run) { write_decay(f, run, decay_result()); }},
      {"attention", [](ExperimentFile& f, const std::string& run) { write_attention(f, run, attention_result()); }},
      {"babi",
       [](ExperimentFile& f, const std::string& run) {
         write_babi(f, run, BabiResult{{64, 128}, {0.5, 0.25}, {0.75, 0.5}, {0.25, 0.25}, {30, 90}, 4, 4});
       }},
  };
  return w;
}

}  // namespace

TEST(RegistryTest, KeysGroupsAndMarkersAreDistinct) {
  std::set<std::string> keys, groups, markers;
  for (const auto& a : analysis_records()) {
    EXPECT_TRUE(keys.insert(a.key).second) << a.key;
    EXPECT_TRUE(groups.insert(a.group).second) << a.group;
    EXPECT_TRUE(markers.insert(a.marker).second) << a.marker;
    EXPECT_EQ(a.marker.rfind(a.group + "/", 0), 0u) << a.key << ": its marker lies in its group";
    EXPECT_FALSE(a.title.empty()) << a.key;
    EXPECT_TRUE(a.read && a.present && a.inspect && a.report) << a.key;
    EXPECT_EQ(find_analysis_record(a.key), &a);
  }
  EXPECT_EQ(find_analysis_record("no such analysis"), nullptr);
  EXPECT_GE(analysis_records().size(), 7u);
}

// Each analysis alone in a run: the reader finds it and nothing else, inspect says its lines, the
// report has its section; all of them in one run: each found, each read back as written.
TEST(RegistryTest, EveryAnalysisRoundTrips) {
  const auto path = statescope::test::scratch("statescope_registry.h5");
  {
    auto file = ExperimentFile::create(path, WriteOptions{true, {}, false});
    for (const auto& a : analysis_records()) {
      ASSERT_TRUE(writers().count(a.key)) << "registered analysis '" << a.key << "' has no case in this test";
      file->begin_run(RunInfo{"only_" + a.key, "{}", "m", "h", "zero", 1, "v", "cpu"});
      writers().at(a.key)(*file, "only_" + a.key);
      file->set_status("only_" + a.key, "finished");
    }
    file->begin_run(RunInfo{"all", "{}", "m", "h", "passing", 2, "v", "cpu"});
    for (const auto& a : analysis_records()) writers().at(a.key)(*file, "all");
    file->set_status("all", "finished");
    file->close();
  }
  H5File f(path, H5File::Mode::Read);
  const auto runs = read_run_records(f);
  ASSERT_EQ(runs.size(), analysis_records().size() + 1);
  auto run = [&](const std::string& name) -> const RunRecord& {
    for (const auto& r : runs)
      if (r.name == name) return r;
    throw Error("no run " + name);
  };
  for (const auto& a : analysis_records()) {
    const RunRecord& r = run("only_" + a.key);
    EXPECT_EQ(r.file, path);
    EXPECT_EQ(r.status, "finished");
    EXPECT_EQ(r.intervention, "zero");
    for (const auto& b : analysis_records()) EXPECT_EQ(b.present(r), &a == &b) << a.key << " run, " << b.key << " slot";
    std::ostringstream out;
    a.inspect(r, out);
    EXPECT_EQ(out.str().rfind("  ", 0), 0u) << a.key << ": " << out.str();
    EXPECT_EQ(out.str().back(), '\n') << a.key;
    EXPECT_FALSE(a.report({r}, ReportContext{2}).empty()) << a.key;
    EXPECT_TRUE(a.report({}, ReportContext{2}).empty()) << a.key << ": no run, no section";
  }
  const RunRecord& all = run("all");
  for (const auto& a : analysis_records()) EXPECT_TRUE(a.present(all)) << a.key;
  EXPECT_EQ(all.seed, "2");
  // Read back as written.
  const EvalResult e = eval_result();
  EXPECT_EQ(all.eval->nll, e.nll);
  EXPECT_EQ(all.eval->nll_seq, e.nll_seq);
  EXPECT_EQ(all.eval->norm_per_head, e.norm_per_head);
  EXPECT_EQ(all.eval->group_name, "channel group");
  EXPECT_EQ(all.eval->layer_kinds, e.layer_kinds);
  EXPECT_EQ(all.eval->recurrent_layers, e.recurrent_layers);
  EXPECT_EQ(all.eval->attention_layers, e.attention_layers);
  EXPECT_EQ(all.eval->attention_heads, 1);
  EXPECT_EQ(all.eval->first_tokens, 4);
  EXPECT_EQ(all.eval->attn_entropy, e.attn_entropy);
  EXPECT_EQ(all.eval->attn_first, e.attn_first);
  {
    std::ostringstream out;
    for (const auto& a : analysis_records())
      if (a.key == "eval") a.inspect(all, out);
    EXPECT_NE(out.str().find("attention L1, position 2 -> 4: entropy 1.00 -> 2.00 bits (uniform: 1.00 -> 2.00), mass on the "
                             "first 4 tokens 1.000 -> 0.750"),
              std::string::npos)
        << out.str();
  }
  EXPECT_EQ(all.states->histogram, states_result().histogram);
  EXPECT_EQ(all.states->group_name, "channel group");
  EXPECT_EQ(all.unexplored->outside_seq, unexplored_result().outside_seq);
  EXPECT_EQ(all.unexplored->recorded_samples, 10);
  EXPECT_EQ(all.effrem->value, (std::vector<double>{0.5, 0.25, 0.6, 0.3}));
  EXPECT_EQ(all.passkey->digit_accuracy, (std::vector<double>{1.0, 0.4}));
  EXPECT_EQ(all.copying->exact_passed, (std::vector<double>{1, 0.25}));
  EXPECT_TRUE(all.copying->conv_passed);
  EXPECT_EQ(all.babi->last_mentioned_accuracy, (std::vector<double>{0.25, 0.25}));
  EXPECT_EQ(all.decay->far, decay_result().far);
  EXPECT_EQ(all.decay->median_far, decay_result().median_far);
  EXPECT_EQ(all.decay->group_name, "channel group");
  EXPECT_EQ(all.attention->M, attention_result().M);
  EXPECT_EQ(all.attention->tokens, attention_result().tokens);
  EXPECT_EQ(all.attention->heads, attention_result().heads);
  EXPECT_EQ(all.attention->by_distance, attention_result().by_distance);
  EXPECT_EQ(all.attention->layer, 1);
  EXPECT_EQ(all.attention->positions, (std::vector<int64_t>{0, 1}));  // written as one bin per position
  EXPECT_FALSE(all.attention->binned());
  // The run's NeXus default plot is the first default-capable result in the registry's order.
  EXPECT_EQ(f.attr("all", "default"), "ppl");
  EXPECT_EQ(f.attr("only_states", "default"), "train");  // state histograms are 3-D: never the default
  EXPECT_EQ(f.attr("only_babi", "default"), "babi");
}

// A group that breaks its promise is refused by the one reader, naming the file, run and dataset.
TEST(RegistryTest, ABrokenGroupIsNamed) {
  const auto path = statescope::test::scratch("statescope_registry_broken.h5");
  {
    auto file = ExperimentFile::create(path, WriteOptions{true, {}, false});
    file->begin_run(RunInfo{"r", "{}", "m", "h", "zero", 1, "v", "cpu"});
    file->write_group([](H5File& h) {
      const std::vector<int64_t> len{64, 128};
      const std::vector<double> acc{1.0};  // two lengths, one value
      h.write("r/babi/length", len.data(), {2});
      h.write("r/babi/accuracy", acc.data(), {1});
    });
    file->set_status("r", "finished");
    file->close();
  }
  H5File f(path, H5File::Mode::Read);
  try {
    read_run_records(f);
    FAIL() << "a broken babi group was read";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("run 'r'"), std::string::npos) << m;
    EXPECT_NE(m.find("babi/accuracy"), std::string::npos) << m;
  }
}

// An analysis that checks its own spec section: defaults filled in, a bad value or an unknown field
// named with the spec's path.
TEST(RegistryTest, ARegisteredSpecSectionIsChecked) {
  const AnalysisRecord* d = find_analysis_record("decay");
  ASSERT_NE(d, nullptr);
  ASSERT_NE(d->options, nullptr);
  const auto o = d->options(nlohmann::json::object(), "s.json");
  EXPECT_EQ(o.at("sequences"), 8);
  EXPECT_EQ(o.at("bins"), 160);
  EXPECT_EQ(d->options({{"bins", 40}}, "s.json").at("bins"), 40);
  auto why = [&](const nlohmann::json& j) { return test::error_of([&] { d->options(j, "s.json"); }); };
  EXPECT_NE(why({{"bins", 2}}).find("s.json: field 'analyses.decay.bins' must be in [4, 4000]"), std::string::npos);
  EXPECT_EQ(why({{"bin", 40}}), "s.json: unknown field 'analyses.decay.bin'");
  EXPECT_NE(why({{"sequences", "8"}}).find("analyses.decay.sequences"), std::string::npos);
}

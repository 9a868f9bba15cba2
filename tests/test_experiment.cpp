// test_experiment.cpp — a whole (tiny) experiment spec end to end: every run lands in the file with
// its groups and status; cancelling leaves a valid file; bad specs are refused; h5py reads the file.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <fstream>
#include <set>
#include <thread>

#include "core/model/checkpoint.h"
#include "core/model/gdn/model.h"
#include "core/model/gla/model.h"
#include "core/model/mamba1/model.h"
#include "core/base/error.h"
#include "core/experiment/experiment.h"
#include "core/experiment/analysis_steps.h"
#include "core/experiment/spec.h"
#include "core/store/analysis_record.h"
#include "core/experiment/sweep.h"
#include "core/store/experiment_store.h"
#include "core/model/model_registry.h"
#include "core/compute/runtime.h"
#include "tests/scratch.h"
#include "tests/test_util.h"
#include "tests/error_text.h"
#include "tests/run_statuses.h"
#include "core/analyses/babi/record.h"
#include "core/analyses/copying/record.h"
#include "core/analyses/effrem/record.h"
#include "core/analyses/passkey/record.h"
#include "core/analyses/states/record.h"

using namespace statescope;
namespace fs = std::filesystem;

namespace {

// `m` initialised with `seed`, saved as a model folder scratch(name) trained at T = 16 (per test
// process: parallel tests never share it); its path.
std::string saved_tiny(RecurrentLM m, uint64_t seed, const std::string& name) {
  const auto dir = statescope::test::scratch(name);
  m->reset_parameters(seed);
  save_model_dir(m, dir);
  ModelRecord r;
  r.T = 16;
  write_model_record(dir, r);
  return dir;
}

std::string tiny_model_dir() {
  Mamba2Config c;
  c.d_model = 32; c.n_layer = 1; c.d_state = 8; c.headdim = 8; c.vocab_size = 256; c.chunk_size = 16;
  return saved_tiny(Mamba2LM(c), 1, "tiny_model");
}

std::string spec(const std::string& model) {
  return R"({"model": ")" + model + R"(", "seed": 3,
    "posttrain": {"steps": 3, "batch": 4, "lr": 1e-3, "warmup": 1},
    "policies": [{"kind": "zero"}, {"kind": "random", "sigma": 0.5}, {"kind": "fitted"},
                 {"kind": "passing"}, {"kind": "tbtt"}],
    "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2}})";
}

}  // namespace

TEST(Experiment, AllPoliciesEndToEnd) {
  const auto out = statescope::test::scratch("statescope_exp.h5");
  std::vector<std::string> seen;
  std::vector<std::string> queued;
  auto runs = run_experiment(spec(tiny_model_dir()), "spec.json", out, [&](const ExperimentProgress& p) {
    if (p.phase == "queued") queued.push_back(p.run);
    else if (seen.empty() || seen.back() != p.run) seen.push_back(p.run);
    return true;
  });
  ASSERT_EQ(runs.size(), 6u);
  const std::vector<std::string> order{"baseline", "zero", "random", "fitted", "passing", "tbtt"};
  EXPECT_EQ(seen, order);
  EXPECT_EQ(queued, order) << "every run is announced first, in spec order";
  H5File f(out, H5File::Mode::Read);
  EXPECT_EQ(f.attr("/", "format"), "statescope-experiment");
  for (auto& r : runs) {
    EXPECT_EQ(r.status, "finished") << r.name;
    EXPECT_EQ(f.attr(r.name, "status"), "finished");
    EXPECT_EQ(f.dims(r.name + "/ppl/nll"), (std::vector<int64_t>{64}));
    EXPECT_EQ(f.dims(r.name + "/state_norm/norm_per_head"), (std::vector<int64_t>{1, 8, 64}));
    EXPECT_EQ(f.attr(r.name + "/state_norm", "T"), "16");
    EXPECT_EQ(f.dims(r.name + "/train/loss")[0], r.name == "baseline" ? 0 : 3);
    EXPECT_EQ(r.bins.size(), 2u);  // [16, 32), [32, 64)
  }
  EXPECT_EQ(f.dims("fitted/policy/fitted_mean"), (std::vector<int64_t>{1, 8}));
  EXPECT_NE(f.attr("random", "intervention").find("sigma=0.5"), std::string::npos);

  // A generic HDF5 reader (h5py, as a user would) opens it without help.
  const std::string py = std::string(STATESCOPE_SOURCE_DIR) + "/.venv/bin/python";
  if (fs::exists(py)) {
    const std::string cmd = py + " -c \"import h5py; f = h5py.File('" + out +
                            "', 'r'); assert f['tbtt/ppl/nll'].shape == (64,); "
                            "assert f['tbtt'].attrs['status'] == 'finished'; print('ok')\" > /dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
}

TEST(Experiment, CancelLeavesAValidFile) {
  const auto out = statescope::test::scratch("statescope_exp_cancel.h5");
  auto runs = run_experiment(spec(tiny_model_dir()), "spec.json", out,
                             [](const ExperimentProgress& p) { return !(p.run == "random" && p.done == 2); });
  H5File f(out, H5File::Mode::Read);
  EXPECT_EQ(f.attr("baseline", "status"), "finished");
  EXPECT_EQ(f.attr("zero", "status"), "finished");
  EXPECT_EQ(f.attr("random", "status"), "cancelled");
  EXPECT_EQ(f.dims("random/train/loss")[0], 2);
  EXPECT_FALSE(f.has("passing"));
  EXPECT_EQ(runs.back().status, "cancelled");
}

namespace {

// Every dataset and attribute below `group`, as text (timestamps and wall times left out), for comparing files.
void dump(const H5File& f, const std::string& group, std::map<std::string, std::string>& out) {
  for (const auto& k : f.attr_names(group))
    if (k != "started" && k != "finished" && k != "created" && k.rfind("seconds_", 0) != 0)
      out[group + "@" + k] = f.attr(group, k);
  for (const auto& c : f.children(group)) {
    const std::string name = group == "/" ? c : group + "/" + c;
    if (f.is_group(name)) {
      dump(f, name, out);
      continue;
    }
    std::ostringstream o;
    o.precision(17);
    if (f.is_integer(name)) for (auto v : f.read_i64(name)) o << v << ' ';
    else for (auto v : f.read_f64(name)) o << v << ' ';
    out[name] = o.str();
    for (const auto& k : f.attr_names(name)) out[name + "@" + k] = f.attr(name, k);
  }
}

}  // namespace

// --jobs: runs on several threads give the serial file's numbers exactly (datasets and attributes,
// timestamps apart), analyses that train included; a cancel stops every job and leaves a valid file.
TEST(Experiment, ParallelJobsGiveTheSerialNumbers) {
  std::string s = spec(tiny_model_dir());
  s.pop_back();  // the closing brace
  s += R"(, "analyses": {"passkey": {"lengths": [130], "depths": [0, 1], "samples": 2,
                                   "finetune": {"steps": 2, "T": 130, "batch": 2, "examples": 8}},
                       "copying": {"L": 2, "alphabet": 3, "steps": 2, "batch": 4, "samples": 2, "train_docs": 16}}})";
  const auto serial = statescope::test::scratch("statescope_exp_serial.h5"),
             parallel = statescope::test::scratch("statescope_exp_parallel.h5");
  auto a = run_experiment(s, "spec.json", serial, {}, {}, true, 1);
  std::set<std::string> threads_seen;
  std::mutex mu;
  std::set<std::string> done_runs;
  auto b = run_experiment(s, "spec.json", parallel, [&](const ExperimentProgress& p) {
    std::ostringstream id;
    id << std::this_thread::get_id();
    threads_seen.insert(id.str());  // one caller at a time: no lock needed, but a race would show in TSan
    return true;
  }, [&](const std::string& run, const H5File&) { std::lock_guard<std::mutex> g(mu); done_runs.insert(run); }, true, 3);
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 6u);
  EXPECT_GE(threads_seen.size(), 2u) << "the runs did not run on several threads";
  EXPECT_EQ(done_runs.size(), 6u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name) << "summaries come back in spec order";
    EXPECT_EQ(a[i].excess, b[i].excess) << a[i].name;
  }
  std::map<std::string, std::string> da, db;
  dump(H5File(serial, H5File::Mode::Read), "/", da);
  dump(H5File(parallel, H5File::Mode::Read), "/", db);
  EXPECT_GT(da.size(), 100u);
  for (const auto& [k, v] : da) {
    auto it = db.find(k);
    ASSERT_NE(it, db.end()) << k << " missing from the parallel file";
    EXPECT_EQ(v, it->second) << k;
  }
  EXPECT_EQ(da.size(), db.size());

  // Cancel while several run: every job stops at its next step, each run's status says so.
  const auto cancelled = statescope::test::scratch("statescope_exp_pcancel.h5");
  auto c = run_experiment(s, "spec.json", cancelled, [](const ExperimentProgress& p) {
    return !(p.run == "random" && p.phase == "train" && p.done == 2);
  }, {}, true, 3);
  EXPECT_GE(statescope::test::cancelled_runs(statescope::test::run_statuses(cancelled)), 1);
  EXPECT_THROW(run_experiment(s, "spec.json", cancelled, {}, {}, true, 0), Error);
}

TEST(Experiment, BadSpecsAreRefusedBeforeWriting) {
  const auto out = statescope::test::scratch("statescope_exp_bad.h5");
  fs::remove(out);
  auto expect = [&](const std::string& s, const std::string& frag) {
    try {
      run_experiment(s, "bad.json", out);
      FAIL() << s;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(frag), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    }
  };
  expect(R"({"modle": "x"})", "unknown field 'modle'");
  expect(R"({"policies": [{"kind": "magic"}]})", "magic");
  expect(R"({"posttrain": {"steps": "many"}})", "posttrain.steps");
  expect("{", "not valid JSON");
  expect(R"({"seed": 1e999})", "not valid JSON");  // out of a double's range: nlohmann's out_of_range
  expect(R"({"posttrain": {"batch": 20000000}})", "posttrain.batch");  // a stated limit, not the allocator
  expect(R"({"analyses": {"efrem": {}}})", "analyses.efrem");
  expect(R"({"analyses": {"effrem": {"T": [1]}}})", "analyses.effrem.T");
  expect(R"({"analyses": {"passkey": {"depths": [1.5]}}})", "analyses.passkey.depths");
  expect(R"({"analyses": {"copying": {"alphabet": 40}}})", "analyses.copying.alphabet");
  expect(R"({"analyses": {"babi": {"samples": "x"}}})", "analyses.babi.samples");
  expect(R"({"scan": "turbo"})", "field 'scan': scan 'turbo'");
  expect(R"({"policies": [{"kind": "fitted", "fit_length": -5}]})", "fit_length -5");
  expect(R"({"device": "tpu"})", "field 'device'");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(scan_kernels(), "auto");  // a refused spec changes nothing
}

// A JSON syntax error reads as a sentence with its line and column, without nlohmann's prefix.
TEST(Experiment, JsonSyntaxErrorsSayWhereInAPlainSentence) {
  try {
    parse_spec("{\n  \"seed\": 1,\n}", "typo.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("typo.json: not valid JSON at line 3, column 1: unexpected '}'", 0), 0u) << m;
    EXPECT_EQ(m.find("json.exception"), std::string::npos) << m;
    EXPECT_EQ(m.find("syntax error while parsing"), std::string::npos) << m;
  }
}

TEST(Experiment, CheckSpecNamesTheFieldWithoutRunning) {
  auto why = [](const std::string& s) { return test::error_of([&] { check_spec(s, "edited"); }); };
  EXPECT_EQ(why(R"({"model": "/not/checked/here", "policies": [{"kind": "random", "sigma": 0.1, "name": "r"}]})"), "(no error)");
  EXPECT_EQ(why("{\"T\": 32,}").rfind("edited: not valid JSON", 0), 0u);
  EXPECT_NE(why(R"({"T": "long"})").find("edited: field 'T'"), std::string::npos);
  EXPECT_NE(why(R"({"policies": [{"kind": "fitted", "fit_length": -1}]})").find("policies[0]"), std::string::npos);
  EXPECT_NE(why(R"({"analyses": {"passkey": {"depths": [2]}}})").find("analyses.passkey.depths"), std::string::npos);
  EXPECT_NE(why(R"({"precision": "fp8"})").find("field 'precision'"), std::string::npos);
  EXPECT_NE(why(R"({"scan": "cudnn"})").find("field 'scan'"), std::string::npos);
  EXPECT_NE(why(R"({"device": "tpu"})").find("field 'device'"), std::string::npos);
  EXPECT_EQ(compute_device(), "cpu");  // checking changes nothing
}

TEST(Experiment, SpecReadsEveryFieldWithItsDefaultsFromOnePlace) {
  // The documented defaults (docs/experiment-spec.md), read by parse_spec from ExperimentSpec.
  const ExperimentSpec e = parse_spec("{}", "empty");
  EXPECT_EQ(e.model, "embedded");
  EXPECT_EQ(e.data, "embedded");
  EXPECT_EQ(e.T, 0);
  EXPECT_TRUE(e.baseline);
  EXPECT_EQ(e.posttrain.steps, 200);
  EXPECT_EQ(e.posttrain.batch, 16);
  EXPECT_DOUBLE_EQ(e.posttrain.lr, 5e-4);
  EXPECT_EQ(e.posttrain.warmup, 10);
  EXPECT_DOUBLE_EQ(e.posttrain.min_lr_ratio, 0.1);
  EXPECT_DOUBLE_EQ(e.posttrain.weight_decay, 0.1);
  EXPECT_DOUBLE_EQ(e.posttrain.grad_clip, 1.0);
  EXPECT_FALSE(e.freeze_set);
  EXPECT_EQ(e.eval.length, 0);
  EXPECT_EQ(e.eval_length(32), 2048);
  EXPECT_EQ(e.eval.sequences, 32);
  EXPECT_EQ(e.eval.segment, 512);
  EXPECT_EQ(e.eval.batch, 8);
  EXPECT_FALSE(e.analyses.any());
  // Every field given, none at its default: each lands where it belongs.
  const ExperimentSpec s = parse_spec(R"({"comment": "c", "model": "m", "data": "d", "device": "cpu",
    "precision": "bf16", "scan": "fused", "T": 64, "seed": 7, "baseline": false, "save_models": "out",
    "posttrain": {"steps": 3, "batch": 5, "lr": 0.01, "warmup": 2, "min_lr_ratio": 0.5, "weight_decay": 0,
                  "grad_clip": 0.5, "freeze_A_log": true},
    "policies": [{"kind": "random", "sigma": 0.1, "name": "r"}, {"kind": "fitted", "ema": 0.5, "fit_length": 128,
                  "calibration_batches": 2, "pass_conv": true}, {"kind": "random"}, {"kind": "random"}],
    "eval": {"length": 100, "sequences": 3, "segment": 50, "batch": 2},
    "analyses": {"effrem": {"T": [8], "points": 3, "log": false, "sequences": 2}, "states": {"bins": 11},
                 "passkey": {"samples": 2, "finetune": {"steps": 5, "lr": 2e-4, "loss_on": "all"}},
                 "babi": {"facts": 2, "finetune": {"T": 300, "examples": 7}},
                 "copying": {"L": 4, "steps": 9, "warmup": 1, "pretrain_steps": 11}}})",
                                      "full");
  EXPECT_EQ(s.comment, "c");
  EXPECT_EQ(s.model, "m");
  EXPECT_EQ(s.data, "d");
  EXPECT_EQ(s.precision, "bf16");
  EXPECT_EQ(s.scan, "fused");
  EXPECT_EQ(s.T, 64);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_FALSE(s.baseline);
  EXPECT_EQ(s.save_models, "out");
  EXPECT_EQ(s.posttrain.steps, 3);
  EXPECT_EQ(s.posttrain.batch, 5);
  EXPECT_DOUBLE_EQ(s.posttrain.min_lr_ratio, 0.5);
  EXPECT_DOUBLE_EQ(s.posttrain.weight_decay, 0.0);
  EXPECT_TRUE(s.freeze_set);
  EXPECT_TRUE(s.posttrain.freeze_A_log);
  ASSERT_EQ(s.policies.size(), 4u);
  EXPECT_EQ(s.policies[0].first, "r");
  EXPECT_EQ(s.policies[1].second.fit_length, 128);
  EXPECT_EQ(s.policies[1].second.calibration_batches, 2);
  EXPECT_EQ(s.policies[1].second.pass_conv, 1);
  EXPECT_EQ(s.policies[2].first, "random");    // unnamed runs of one kind are numbered
  EXPECT_EQ(s.policies[3].first, "random_2");
  EXPECT_DOUBLE_EQ(s.policies[3].second.sigma, PolicySpec{}.sigma);
  EXPECT_EQ(s.eval_length(64), 100);
  EXPECT_EQ(s.eval.segment, 50);
  for (const char* k : {"effrem", "states", "passkey", "babi", "copying"}) ASSERT_TRUE(s.analyses.has(k)) << k;
  // Each section read as its step reads it (its record's typed reader, the same defaults).
  const auto effrem = effrem_options(s.analyses.section("effrem"), "t");
  const auto states = states_options(s.analyses.section("states"), "t");
  const auto copying = copying_options(s.analyses.section("copying"), "t");
  const auto passkey = passkey_options(s.analyses.section("passkey"), "t");
  const auto babi = babi_options(s.analyses.section("babi"), "t");
  EXPECT_FALSE(effrem.log_grid);
  EXPECT_EQ(states.bins, 11);
  EXPECT_EQ(copying.options.L, 4);
  EXPECT_EQ(copying.train.steps, 9);
  EXPECT_EQ(copying.train.batch, CopyingOptions::default_train().batch);
  EXPECT_EQ(copying.options.model.d_model, default_copy_model().d_model);
  EXPECT_EQ(copying.options.pretrain_steps, 11);
  // Task fine-tuning: the given knobs over the verb's defaults (one place: TaskFinetune::defaults).
  ASSERT_TRUE(passkey.finetune && babi.finetune);
  const auto& pf = *passkey.finetune;
  EXPECT_EQ(pf.train.steps, 5);
  EXPECT_DOUBLE_EQ(pf.train.lr, 2e-4);
  EXPECT_FALSE(pf.train.loss_mask);
  EXPECT_EQ(pf.train.T, PasskeyOptions::default_finetune().train.T);
  EXPECT_EQ(pf.examples, PasskeyOptions::default_finetune().examples);
  const auto& bf = *babi.finetune;
  EXPECT_EQ(bf.train.T, 300);
  EXPECT_EQ(bf.examples, 7);
  EXPECT_TRUE(bf.train.loss_mask);
  EXPECT_EQ(bf.train.steps, BabiOptions::default_finetune().train.steps);
  EXPECT_FALSE(passkey_options(parse_spec(R"({"analyses": {"passkey": {}}})", "p").analyses.section("passkey"), "p").finetune)
      << "absent: zero-shot";
  EXPECT_EQ(parse_spec(R"({"posttrain": {"steps": 0}})", "p").posttrain.steps, 0) << "a task study";
}

// One way in: every analysis a spec can ask for is one line of core/analyses/list.h, and from it
// the registry (record, spec section), the runner (step) and the spec parser find it, in one order.
TEST(Experiment, EveryListedAnalysisHasItsSectionAndItsStepInOneOrder) {
  std::vector<std::string> asked, stepped;
  for (const auto& r : analysis_records()) {
    if (r.key == "eval") {
      EXPECT_FALSE(r.options) << "eval is every run's, not asked for";
      continue;
    }
    ASSERT_TRUE(r.options) << r.key;
    EXPECT_FALSE(r.label.empty()) << r.key;
    asked.push_back(r.key);
    EXPECT_NO_THROW(r.options(nlohmann::json::object(), "t")) << r.key << ": an empty section takes the defaults";
    const ExperimentSpec s = parse_spec(R"({"analyses": {")" + r.key + R"(": {}}})", "t");
    EXPECT_TRUE(s.analyses.has(r.key)) << r.key;
    EXPECT_EQ(s.analyses.sections.size(), 1u);
    try {
      parse_spec(R"({"analyses": {")" + r.key + R"(": {"no_such_knob": 1}}})", "typo.json");
      ADD_FAILURE() << r.key << " took an unknown field";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("analyses." + r.key + ".no_such_knob"), std::string::npos) << e.what();
    }
  }
  for (const auto& st : analysis_steps()) stepped.push_back(st.key);
  EXPECT_EQ(asked, stepped) << "the runner computes what the registry lists, in its order";
  EXPECT_GE(asked.size(), 8u);  // effrem ... states, and any analysis added since
  try {
    parse_spec(R"({"analyses": {"efrem": {}}})", "typo.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    for (const auto& k : asked) EXPECT_NE(std::string(e.what()).find(k), std::string::npos) << k << " not offered";
  }
}

TEST(Experiment, TyposInNestedFieldsAreRefusedByName) {
  auto why = [](const std::string& s) { return test::error_of([&] { parse_spec(s, "typo.json"); }); };
  EXPECT_EQ(why(R"({"posttrain": {"stpes": 10}})"), "typo.json: unknown field 'posttrain.stpes'");
  EXPECT_EQ(why(R"({"policies": [{"kind": "random", "sigmaa": 0.1}]})"), "typo.json: unknown field 'policies[].sigmaa'");
  EXPECT_EQ(why(R"({"eval": {"lenght": 4096}})"), "typo.json: unknown field 'eval.lenght'");
  EXPECT_EQ(why(R"({"analyses": {"states": {"bin": 3}}})"), "typo.json: unknown field 'analyses.states.bin'");
  EXPECT_EQ(why(R"({"analyses": {"passkey": {"finetune": {"stpes": 3}}}})"),
            "typo.json: unknown field 'analyses.passkey.finetune.stpes'");
  EXPECT_NE(why(R"({"analyses": {"babi": {"finetune": {"loss_on": "none"}}}})").find("analyses.babi.finetune.loss_on"),
            std::string::npos);
  EXPECT_NE(why(R"({"analyses": {"babi": {"finetune": {"steps": 0}}}})").find("analyses.babi.finetune.steps"),
            std::string::npos);
  EXPECT_NE(why(R"({"analyses": {"copying": {"pretrain_steps": -1}}})").find("analyses.copying.pretrain_steps"),
            std::string::npos);
  EXPECT_EQ(why(R"({"posttrain": 5})"), "typo.json: field 'posttrain' must be an object");
  EXPECT_EQ(why(R"({"policies": {"kind": "zero"}})"), "typo.json: field 'policies' must be a list");
  EXPECT_EQ(why(R"({"policies": [{"kind": "zero"}], "posttrain": {"steps": 1}, "eval": {"length": 64}})"), "(no error)");
  // Numbers out of range or of the wrong kind are refused, never truncated or silently replaced.
  EXPECT_EQ(why(R"({"seed": 1.5})"), "typo.json: field 'seed' has the wrong type: 1.5");
  EXPECT_EQ(why(R"({"seed": -1})"), "typo.json: field 'seed' has the wrong type: -1");
  EXPECT_EQ(why(R"({"T": 0})"), "typo.json: field 'T' must be >= 2 (leave it out to use the model's record), got 0");
  EXPECT_NE(why(R"({"T": -32})").find("field 'T' must be >= 2"), std::string::npos);
  EXPECT_EQ(why(R"({"posttrain": {"warmup": -3}})"), "typo.json: field 'posttrain.warmup' must be >= 0, got -3");
  EXPECT_EQ(why(R"({"posttrain": {"min_lr_ratio": 2}})"), "typo.json: field 'posttrain.min_lr_ratio' must be in [0, 1], got 2");
  EXPECT_NE(why(R"({"posttrain": {"grad_clip": -1}})").find("posttrain.grad_clip"), std::string::npos);
  EXPECT_NE(why(R"({"posttrain": {"steps": 2.5}})").find("field 'posttrain.steps' has the wrong type"), std::string::npos);
  EXPECT_NE(why(R"({"eval": {"sequences": 0}})").find("field 'eval.sequences' must be > 0"), std::string::npos);
  EXPECT_NE(why(R"({"analyses": {"effrem": {"T": [32, 64.5]}}})").find("analyses.effrem.T"), std::string::npos);
}

TEST(Experiment, SpecDeviceAndScanHoldForThatExperimentOnly) {
  // The spec's compute travels with its runs as a value: the process default never changes, not
  // even while the experiment runs (so another experiment can run beside it with its own).
  const auto out = statescope::test::scratch("statescope_exp_scan.h5");
  const std::string before = scan_kernels(), before_precision = compute_precision();
  ASSERT_EQ(before, "auto");
  statescope::test::Bf16IsaGuard bf16("emulated");  // bf16 runs on any CPU (here: its record names the units)
  std::set<std::string> during;
  const std::string s = R"({"model": ")" + tiny_model_dir() + R"(", "device": "cpu", "precision": "bf16",
    "scan": "aten", "eval": {"length": 32, "sequences": 1, "segment": 16, "batch": 1}})";
  auto runs = run_experiment(s, "scan.json", out, [&](const ExperimentProgress&) {
    during.insert(scan_kernels() + " " + compute_precision());
    return true;
  });
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "finished");
  EXPECT_EQ(during, (std::set<std::string>{before + " " + before_precision}));
  EXPECT_EQ(scan_kernels(), before);
  H5File f(out, H5File::Mode::Read);
  EXPECT_EQ(f.attr("baseline", "device"), "cpu bf16 emulated");  // the run's own (ATen: no "loop-scan", the default's)
}

TEST(Experiment, TwoExperimentsWithDifferentComputeRunSideBySide) {
  // fp32 and bf16 experiments on two threads of one process give what each gives alone.
  // The model folder is written once, before any thread starts: the threads only read it.
  const std::string model = tiny_model_dir();
  auto spec = [&](const char* precision) {
    return R"({"model": ")" + model + R"(", "precision": ")" + precision + R"(", "seed": 3,
      "posttrain": {"steps": 3, "batch": 2, "lr": 1e-3, "warmup": 1},
      "policies": [{"kind": "passing"}, {"kind": "random", "sigma": 0.1}],
      "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2}})";
  };
  auto run = [&](const char* precision, const std::string& name) {
    return run_experiment(spec(precision), name, statescope::test::scratch("statescope_side_" + name + ".h5"));
  };
  statescope::test::Bf16IsaGuard bf16("emulated");  // the bf16 path on any CPU
  const auto a = run("fp32", "a"), b = run("bf16", "b");
  std::vector<RunSummary> pa, pb;
  std::thread ta([&] { pa = run("fp32", "pa"); }), tb([&] { pb = run("bf16", "pb"); });
  ta.join();
  tb.join();
  auto same = [](const std::vector<RunSummary>& x, const std::vector<RunSummary>& y) {
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(x[i].status, "finished");
      EXPECT_EQ(x[i].loss_near, y[i].loss_near) << x[i].name;
      EXPECT_EQ(x[i].loss_far, y[i].loss_far) << x[i].name;
      EXPECT_EQ(x[i].excess, y[i].excess) << x[i].name;
      EXPECT_EQ(x[i].norm_ratio, y[i].norm_ratio) << x[i].name;
    }
  };
  same(a, pa);
  same(b, pb);
  EXPECT_NE(a[1].loss_far, b[1].loss_far);  // bf16 really ran in one of them
  H5File fa(statescope::test::scratch("statescope_side_pa.h5"), H5File::Mode::Read);
  H5File fb(statescope::test::scratch("statescope_side_pb.h5"), H5File::Mode::Read);
  EXPECT_EQ(fa.attr("passing", "device"), "cpu fp32 loop-scan");
  EXPECT_EQ(fb.attr("passing", "device"), "cpu bf16 emulated loop-scan");
}

TEST(Experiment, EffRemWithoutContextLengthsTakesTheRunsT) {
  // No "T" in the effrem section: T, 2T, ..., 64T of the run's T (4 here: 4..256), the panel's default too.
  const auto out = statescope::test::scratch("statescope_exp_effrem_T.h5");
  const std::string s = R"({"model": ")" + tiny_model_dir() + R"(", "T": 4, "policies": [],
    "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2},
    "analyses": {"effrem": {"points": 3, "sequences": 2}}})";
  auto runs = run_experiment(s, "effrem_T.json", out);
  ASSERT_EQ(runs.size(), 1u);
  H5File f(out, H5File::Mode::Read);
  EXPECT_EQ(f.dims("baseline/effrem/value"), (std::vector<int64_t>{7, 4}));
  std::vector<int64_t> d;
  const auto T = f.read_i64("baseline/effrem/T", &d);
  EXPECT_EQ(T, (std::vector<int64_t>{4, 8, 16, 32, 64, 128, 256}));
}

TEST(Experiment, AnalysesRunForEveryRunAndLandInItsGroups) {
  const auto out = statescope::test::scratch("statescope_exp_analyses.h5");
  const std::string s = R"({"model": ")" + tiny_model_dir() + R"(", "seed": 1,
    "posttrain": {"steps": 2, "batch": 4, "lr": 1e-3, "warmup": 1},
    "policies": [{"kind": "passing"}],
    "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2},
    "analyses": {"effrem": {"T": [8, 16], "points": 3, "sequences": 2},
                 "states": {"positions": [7, 15, 40], "sequences": 2, "bins": 11, "length": 48},
                 "passkey": {"lengths": [130, 200], "depths": [0, 1], "samples": 2},
                 "babi": {"lengths": [200, 300], "samples": 3, "facts": 2},
                 "copying": {"L": 3, "alphabet": 3, "steps": 2, "batch": 4, "samples": 3, "train_docs": 16}}})";
  std::set<std::string> phases;
  auto runs = run_experiment(s, "analyses.json", out, [&](const ExperimentProgress& p) {
    phases.insert(p.phase);
    return true;
  });
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(phases, (std::set<std::string>{"queued", "train", "eval", "effrem", "states", "passkey", "babi", "copying"}));
  H5File f(out, H5File::Mode::Read);
  for (const std::string run : {"baseline", "passing"}) {
    EXPECT_EQ(f.attr(run, "status"), "finished");
    EXPECT_EQ(f.dims(run + "/effrem/value"), (std::vector<int64_t>{2, 4})) << run;  // t = 0 plus 3 points
    EXPECT_EQ(f.dims(run + "/state_stats/histogram"), (std::vector<int64_t>{1, 3, 8, 11}));
    EXPECT_EQ(f.dims(run + "/passkey/accuracy"), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(f.dims(run + "/babi/choice_accuracy"), (std::vector<int64_t>{2}));
    EXPECT_EQ(f.dims(run + "/copying/exact"), (std::vector<int64_t>{6}));
    EXPECT_EQ(f.dims(run + "/copying/train/loss"), (std::vector<int64_t>{2}));
    auto c = read_copying(f, run);
    EXPECT_EQ(c.L, 3);
    auto b = read_babi(f, run);
    EXPECT_EQ(b.candidates, 6);
    auto p = read_passkey(f, run);
    EXPECT_EQ(p.lengths, (std::vector<int64_t>{130, 200}));
  }
  EXPECT_NE(f.attr("passing", "intervention").find("passing"), std::string::npos);
}

// GLA and Gated DeltaNet (byte-level, as pretrain makes them) through the whole lab: the five
// policies (noise and fitted moments per layer and head, passing with the short-conv states, TBTT),
// evaluation with state norms, EffRem, state histograms per head, the detector, the tasks.
TEST(Experiment, GlaAndGatedDeltaNetRunEveryPolicyAndAnalysis) {
  GLAConfig c;
  c.d_model = 32, c.n_layer = 1, c.num_heads = 2, c.use_short_conv = true, c.intermediate_size = 32;
  c.vocab_size = 256, c.tie_embeddings = true;
  const std::string gla = saved_tiny(GLALM(c), 5, "tiny_gla");
  GatedDeltaNetConfig d;
  d.d_model = 32, d.n_layer = 2, d.num_heads = 2, d.num_v_heads = 4, d.head_dim = 8, d.expand_v = 1.0;
  d.intermediate_size = 32, d.vocab_size = 256, d.tie_embeddings = true;
  const std::string gdn = saved_tiny(GatedDeltaNetLM(d), 6, "tiny_gdn");
  const auto out = statescope::test::scratch("statescope_exp_fla.h5");
  const std::string s = R"({"models": [")" + gla + R"(", ")" + gdn + R"("], "seed": 2, "baseline": true,
    "posttrain": {"steps": 2, "batch": 4, "lr": 1e-3, "warmup": 1},
    "policies": [{"kind": "zero"}, {"kind": "random", "sigma": 0.5}, {"kind": "fitted"}, {"kind": "passing"}, {"kind": "tbtt"}],
    "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2},
    "analyses": {"effrem": {"T": [8, 16], "points": 3, "sequences": 2},
                 "states": {"positions": [7, 15, 40], "sequences": 2, "bins": 11, "length": 48},
                 "passkey": {"lengths": [130], "depths": [0, 1], "samples": 2},
                 "babi": {"lengths": [200], "samples": 2, "facts": 2},
                 "copying": {"L": 3, "alphabet": 3, "steps": 2, "batch": 4, "samples": 3, "train_docs": 16}}})";
  auto runs = run_experiment(s, "fla.json", out, {}, {}, true);
  ASSERT_EQ(runs.size(), 12u);
  H5File f(out, H5File::Mode::Read);
  for (const auto& [dir, layers, heads] : std::vector<std::tuple<std::string, int64_t, int64_t>>{{gla, 1, 2}, {gdn, 2, 4}})
    for (const char* run : {"baseline", "zero", "random", "fitted", "passing", "tbtt"}) {
      const std::string name = model_label(dir) + ":" + run;
      EXPECT_EQ(f.attr(name, "status"), "finished") << name;
      EXPECT_EQ(f.dims(name + "/state_stats/histogram"), (std::vector<int64_t>{layers, 3, heads, 11})) << name;
      EXPECT_EQ(f.dims(name + "/effrem/value"), (std::vector<int64_t>{2, 4})) << name;
      EXPECT_EQ(f.dims(name + "/passkey/accuracy"), (std::vector<int64_t>{1, 2})) << name;
    }
  // Fitted noise's moments are per layer and head of the architecture's layout.
  EXPECT_EQ(f.dims(model_label(gdn) + ":fitted/policy/fitted_std"), (std::vector<int64_t>{2, 4}));
}

TEST(Experiment, BpeModelsRunPasskeyAndBabiInTheirTokens) {
  const fs::path dir = statescope::test::scratch("bpe_model");
  test::write_tiny_bpe_model(dir.string(), 1, 2);
  ModelRecord r;
  r.T = 16;
  write_model_record(dir.string(), r);
  const fs::path cache = statescope::test::scratch("bpe_cache");
  setenv("STATESCOPE_CACHE", cache.c_str(), 1);
  const std::string head = R"({"model": ")" + dir.string() + R"(", "seed": 1,
    "posttrain": {"steps": 1, "batch": 2, "lr": 1e-3, "warmup": 1}, "policies": [{"kind": "passing"}],
    "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2}, )";
  const auto out = statescope::test::scratch("statescope_exp_bpe.h5");
  fs::remove(out);
  auto runs = run_experiment(head + R"("analyses": {"passkey": {"lengths": [100, 140], "depths": [0, 1], "samples": 2},
                                                    "babi": {"lengths": [100, 200], "samples": 2, "facts": 2}}})",
                             "bpe.json", out);
  ASSERT_EQ(runs.size(), 2u);
  H5File f(out, H5File::Mode::Read);
  for (const std::string run : {"baseline", "passing"}) {
    EXPECT_EQ(f.attr(run, "status"), "finished");
    EXPECT_EQ(read_passkey(f, run).lengths, (std::vector<int64_t>{100, 140}));
    EXPECT_EQ(read_babi(f, run).lengths, (std::vector<int64_t>{100, 200}));
  }
  unsetenv("STATESCOPE_CACHE");
  fs::remove_all(cache);
  fs::remove_all(dir);
}

TEST(Experiment, OutputsNeverDestroyWhatIsThere) {
  const std::string model = tiny_model_dir();
  const std::string s = R"({"model": ")" + model + R"(", "eval": {"length": 32, "sequences": 1, "segment": 16, "batch": 1}})";
  auto slurp = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  auto why = [&](const std::string& out, bool overwrite, const ExperimentProgressFn& progress = {}) {
    return test::error_of([&] { run_experiment(s, "out.json", out, progress, {}, overwrite); });
  };
  // An existing file (here a text file) is refused without --overwrite and left as it was.
  const std::string precious = statescope::test::scratch("precious.txt");
  std::ofstream(precious) << "do not lose me";
  EXPECT_NE(why(precious, false).find("already exists; choose another output or pass --overwrite"), std::string::npos);
  EXPECT_EQ(slurp(precious), "do not lose me");
  // The model being evaluated is never the output, even with --overwrite.
  const std::string weights = model + "/model.safetensors", before = slurp(weights);
  EXPECT_NE(why(weights, true).find("one of the run's inputs"), std::string::npos) << why(weights, true);
  EXPECT_EQ(slurp(weights), before);
  // A run that fails after the new file was started leaves the old file whole (the partial one beside it).
  const std::string out = statescope::test::scratch("replace.h5");
  std::ofstream(out) << "old results";
  // (after the run began: a failure before any run began leaves nothing worth keeping, and no partial file)
  auto boom = [](const ExperimentProgress& p) -> bool {
    if (p.phase == "eval") throw Error("disk on fire");
    return true;
  };
  EXPECT_NE(why(out, true, boom).find("disk on fire"), std::string::npos);
  EXPECT_EQ(slurp(out), "old results");
  EXPECT_TRUE(fs::exists(out + ".partial"));
  // A run that ends replaces it, atomically, and leaves no partial file or lock behind.
  EXPECT_EQ(why(out, true), "(no error)");
  EXPECT_EQ(H5File(out, H5File::Mode::Read).attr("baseline", "status"), "finished");
  EXPECT_FALSE(fs::exists(out + ".partial"));
  EXPECT_FALSE(fs::exists(out + ".lock"));
  // One writer per file: a second one fails at once, naming the first; the first keeps its file.
  const std::string busy = statescope::test::scratch("busy.h5");
  {
    auto first = ExperimentFile::create(busy);
    const std::string w = why(busy, true);
    EXPECT_NE(w.find("another statescope process (pid " + std::to_string(::getpid()) + ") is writing this file"),
              std::string::npos) << w;
  }
  EXPECT_EQ(H5File(busy, H5File::Mode::Read).attr("/", "format"), "statescope-experiment");
  // Appending a run whose name exists is refused unless it is meant to replace it.
  auto f = ExperimentFile::open(out);
  try {
    f->begin_run({"baseline", "{}", "m", "", "none", 0, "v", "cpu fp32"});
    FAIL() << "replaced run 'baseline' silently";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already holds a run 'baseline'; choose another --run or pass --replace-run"),
              std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(f->begin_run({"baseline", "{}", "m", "", "none", 0, "v", "cpu fp32"}, true));
}

// A sweep: every cell of the grid is a run per policy (sigma only for random), the baseline once,
// names and groups as sweep.h says; a cell's run is the unswept spec's run with those values (same
// numbers); the sweep table gathers seeds per group. Bad sweeps are refused naming the field.
TEST(Experiment, SweepCellsAreTheRunsOfTheUnsweptSpec) {
  const std::string model = tiny_model_dir();
  auto with = [&](const std::string& extra, uint64_t seed, int64_t steps) {
    return R"({"model": ")" + model + R"(", "seed": )" + std::to_string(seed) + R"(,
      "posttrain": {"steps": )" + std::to_string(steps) + R"(, "batch": 4, "lr": 1e-3, "warmup": 1},
      "policies": [{"kind": "zero"}, {"kind": "random", "sigma": 0.5}],
      "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2})" + extra + "}";
  };
  const std::string swept = with(R"(, "sweep": {"seed": [3, 4], "posttrain.steps": [2, 3], "sigma": [0.5, 0.1]})", 3, 3);
  const auto plan = plan_runs(check_spec(swept, "sweep.json"));
  ASSERT_EQ(plan.size(), 1u + 4u + 8u);  // baseline once; zero 2 x 2; random 2 x 2 x 2
  EXPECT_EQ(plan[0].name, "baseline");
  EXPECT_EQ(plan[1].name, "zero@posttrain.steps=2,seed=3");  // fields in alphabetical order
  EXPECT_EQ(plan[1].group, "zero@posttrain.steps=2");
  EXPECT_EQ(plan[5].name, "random@posttrain.steps=2,seed=3,sigma=0.5");
  EXPECT_EQ(plan[6].policy.sigma, 0.1);
  EXPECT_EQ(plan[12].spec.seed, 4u);
  EXPECT_EQ(plan[12].spec.posttrain.steps, 3);
  EXPECT_EQ(plan[3].name, "zero@posttrain.steps=3,seed=3");  // the last field varies fastest

  const auto out = statescope::test::scratch("statescope_sweep.h5");
  auto runs = run_experiment(swept, "sweep.json", out, {}, {}, true, 2);
  ASSERT_EQ(runs.size(), plan.size());
  // The cell (seed 4, steps 3, sigma 0.1) of random is the plain spec with seed 4, steps 3, sigma 0.1.
  const auto plain_out = statescope::test::scratch("statescope_sweep_plain.h5");
  std::string plain = with("", 4, 3);
  plain.replace(plain.find("\"sigma\": 0.5"), 12, "\"sigma\": 0.1");
  auto plain_runs = run_experiment(plain, "plain.json", plain_out, {}, {}, true, 1);
  const auto& cell = runs.back();
  EXPECT_EQ(cell.name, "random@posttrain.steps=3,seed=4,sigma=0.1");
  EXPECT_EQ(cell.excess, plain_runs[2].excess);
  EXPECT_EQ(cell.loss_far, plain_runs[2].loss_far);
  const std::string table = format_sweep_table(runs);
  EXPECT_NE(table.find("zero@posttrain.steps=3"), std::string::npos) << table;
  EXPECT_NE(table.find("random@posttrain.steps=3,sigma=0.1"), std::string::npos) << table;
  H5File f(out, H5File::Mode::Read);
  EXPECT_NE(f.attr("zero@posttrain.steps=3,seed=4", "spec").find("\"sweep_group\":\"zero@posttrain.steps=3\""),
            std::string::npos);

  // "mode": "list": the i-th values together; a field that does not apply to a policy is left out
  // of its cells, and a cell that repeats runs once.
  const auto listed = plan_runs(check_spec(
      with(R"(, "sweep": {"mode": "list", "posttrain.steps": [2, 3, 3], "sigma": [0.5, 0.5, 0.1]})", 3, 3), "l.json"));
  std::vector<std::string> names;
  for (auto& r : listed) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"baseline", "zero@posttrain.steps=2", "zero@posttrain.steps=3",
                                             "random@posttrain.steps=2,sigma=0.5", "random@posttrain.steps=3,sigma=0.5",
                                             "random@posttrain.steps=3,sigma=0.1"}));
  for (const auto& [bad, field] : std::vector<std::pair<std::string, std::string>>{
           {R"(, "sweep": {"mode": "list", "seed": [1, 2], "posttrain.steps": [1]})", "sweep.seed"},
           {R"(, "sweep": {"mode": "zip", "seed": [1]})", "sweep.mode"},
           {R"(, "sweep": {"posttrain.stepz": [1]})", "sweep.posttrain.stepz"},
           {R"(, "sweep": {"seed": []})", "sweep.seed"},
           {R"(, "sweep": {"T": [1]})", "sweep.T"},
           {R"(, "sweep": {"posttrain.steps": [2.5]})", "sweep.posttrain.steps"},
           {R"(, "sweep": {"seed": [1, 1]})", "sweep.seed"},
           {R"(, "sweep": {"fit_length": [64]})", "sweep.fit_length"}}) {
    try {
      check_spec(with(bad, 3, 3), "bad.json");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

// "models": a Mamba-2 and a Mamba-1 side by side in one file: every run of the spec for each model,
// named "<model label>:<run>", each run recording its own model; the two architectures' runs of one
// policy equal the runs of the one-model spec (same seeds, same numbers). Bad lists are refused by field.
TEST(Experiment, ModelsRunSideBySideInOneFile) {
  const std::string m2 = tiny_model_dir();
  Mamba1Config c1;
  c1.d_model = 32; c1.n_layer = 1; c1.d_state = 8; c1.vocab_size = 256;
  const std::string m1 = saved_tiny(Mamba1LM(c1), 2, "tiny_mamba1");
  const std::string body = R"("seed": 3, "baseline": true, "posttrain": {"steps": 2, "batch": 4, "lr": 1e-3, "warmup": 1},
    "policies": [{"kind": "zero"}, {"kind": "passing"}], "eval": {"length": 48, "sequences": 2, "segment": 16, "batch": 2}})";
  const auto both = statescope::test::scratch("two_models.h5"), only1 = statescope::test::scratch("one_model.h5");
  auto runs = run_experiment(R"({"models": [")" + m2 + R"(", ")" + m1 + R"("], )" + body, "spec.json", both, {}, {}, true);
  ASSERT_EQ(runs.size(), 6u);
  const std::string l2 = model_label(m2), l1 = model_label(m1);
  H5File f(both, H5File::Mode::Read);
  for (const auto& label : {l2, l1})
    for (const char* run : {"baseline", "zero", "passing"}) {
      const std::string name = label + ":" + run;
      EXPECT_EQ(f.attr(name, "status"), "finished") << name;
    }
  EXPECT_EQ(f.attr(l1 + ":passing", "model"), m1);
  // Each run records its model's architecture, so the file says it without the model at hand.
  EXPECT_EQ(f.attr(l1 + ":passing", "architecture"), "Mamba-1 \u00b7 1 layers \u00b7 state (d_inner, d_state) 64 \u00d7 8 \u00b7 1 channel groups");
  EXPECT_EQ(f.attr(l2 + ":zero", "architecture").rfind("Mamba-2 \u00b7", 0), 0u) << f.attr(l2 + ":zero", "architecture");
  EXPECT_EQ(f.attr(l2 + ":passing", "model"), m2);
  run_experiment(R"({"model": ")" + m1 + R"(", )" + body, "spec.json", only1, {}, {}, true);
  H5File g(only1, H5File::Mode::Read);
  EXPECT_EQ(f.read_f64(l1 + ":passing/ppl/nll"), g.read_f64("passing/ppl/nll"));
  auto why = [&](const std::string& text) { return test::error_of([&] { parse_spec(text, "s.json"); }); };
  EXPECT_NE(why(R"({"model": "embedded", "models": ["embedded", "embedded-mamba1"]})").find("'models'"), std::string::npos);
  EXPECT_NE(why(R"({"models": ["embedded"]})").find("two or more"), std::string::npos);
  EXPECT_NE(why(R"({"models": ["a/x", "b/x"]})").find("two models named 'x'"), std::string::npos);
}

// Every run of an experiment is measured against one yardstick: the loaded model's state-reset loss
// on the same bytes (the baseline run's own reference), whether the runs go one at a time or in
// parallel jobs, and with no baseline run at all. It is computed once: a post-trained run scores no
// state-reset reference of its own unless asked (eval.own_reference, the "serial" variant here).
TEST(Experiment, EveryRunSharesTheBaselinesReference) {
  for (const char* variant : {"serial", "jobs", "no baseline"}) {
    const auto out = statescope::test::scratch(std::string("statescope_yardstick_") + variant[0] + ".h5");
    const bool baseline = std::string(variant) != "no baseline", own = std::string(variant) == "serial";
    const std::string spec = std::string(R"({"model": "embedded", "seed": 0, "baseline": )") + (baseline ? "true" : "false") +
                             R"(, "posttrain": {"steps": 2, "batch": 2, "lr": 5e-4, "warmup": 1},
      "policies": [{"kind": "passing"}, {"kind": "zero"}],
      "eval": {"length": 96, "sequences": 2, "segment": 32, "batch": 2, "own_reference": )" + (own ? "true" : "false") + "}}";
    run_experiment(spec, "yardstick.json", out, {}, {}, true, std::string(variant) == "jobs" ? 2 : 1);
    H5File f(out, H5File::Mode::Read);
    std::vector<float> ref;
    if (baseline) ref = f.read_f32("baseline/ppl/windowed_nll_per_sequence");
    else ref = f.read_f32("passing/ppl/fixed_reference_per_sequence");
    ASSERT_EQ(ref.size(), 2u * 96u) << variant;
    for (const char* run : {"baseline", "passing", "zero"}) {
      if (!baseline && std::string(run) == "baseline") continue;
      const auto fixed = f.read_f32(std::string(run) + "/ppl/fixed_reference_per_sequence");
      ASSERT_EQ(fixed.size(), ref.size()) << variant << " " << run;
      for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(fixed[i], ref[i], 1e-5) << variant << " " << run << " at " << i;
      const bool has_own = f.has(std::string(run) + "/ppl/windowed_nll_per_sequence");
      EXPECT_EQ(has_own, own || std::string(run) == "baseline") << variant << " " << run;
    }
    if (!own) continue;
    // ... and post-training moved each run's own reference away from it.
    const auto mine = f.read_f32("passing/ppl/windowed_nll_per_sequence");
    double moved = 0;
    for (size_t i = 0; i < ref.size(); ++i) moved += std::abs(mine[i] - ref[i]);
    EXPECT_GT(moved, 0.0) << variant;
  }
}

// A pretraining spec's plan: one pretraining run per cell of its model's fields (T, seed,
// pretrain.*) first, then the baseline (once per seed: each seed is another model) and the
// policies, each naming the pretraining run whose model it uses.
TEST(Experiment, PretrainSweepPlansOneModelPerCell) {
  const auto plan = plan_runs(check_spec(R"({"pretrain": {"steps": 5}, "T": 16, "policies": [{"kind": "random"}],
      "sweep": {"pretrain.d_state": [8, 64], "seed": [0, 1], "sigma": [0.5, 1]}})", "p.json"));
  std::vector<std::string> names, keys;
  for (const auto& r : plan) names.push_back(r.name), keys.push_back(r.model_key);
  ASSERT_EQ(plan.size(), 4u + 4u + 8u) << ::testing::PrintToString(names);
  EXPECT_EQ(names[0], "pretrain@pretrain.d_state=8,seed=0");
  EXPECT_EQ(plan[0].kind, RunKind::Pretrain);
  EXPECT_EQ(plan[0].model_key, plan[0].name);
  EXPECT_EQ(plan[0].spec.pretrain->d_state, 8);
  EXPECT_EQ(names[4], "baseline@pretrain.d_state=8,seed=0");
  EXPECT_EQ(plan[4].group, "baseline@pretrain.d_state=8");
  EXPECT_EQ(keys[4], "pretrain@pretrain.d_state=8,seed=0");
  EXPECT_EQ(names[15], "random@pretrain.d_state=64,seed=1,sigma=1");
  EXPECT_EQ(keys[15], "pretrain@pretrain.d_state=64,seed=1");
  EXPECT_EQ(plan[15].spec.pretrain->d_state, 64);
  EXPECT_EQ(plan[15].spec.seed, 1u);
  // Without a pretrain section nothing changes: no pretraining runs, no model keys.
  for (const auto& r : plan_runs(check_spec(R"({"model": "embedded", "policies": [{"kind": "zero"}]})", "q.json")))
    EXPECT_TRUE(r.model_key.empty() && r.kind != RunKind::Pretrain) << r.name;
}

TEST(Experiment, TrainingFreeRunsStandBesideThePoliciesOnTheOneYardstick) {
  const auto out = statescope::test::scratch("statescope_exp_free.h5");
  const std::string text = R"({"model": ")" + tiny_model_dir() + R"(", "seed": 3,
    "posttrain": {"steps": 2, "batch": 4, "lr": 1e-3},
    "policies": [{"kind": "passing"}],
    "interventions": [{"kind": "reset", "period": 1000, "name": "never_reset"},
                      {"kind": "reset", "period": 16},
                      {"kind": "dt_scale", "factor": 0.5, "from": "T"},
                      {"kind": "clip", "windows": 4}],
    "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2},
    "analyses": {"attention": {"layer": 0, "length": 32}}})";
  auto runs = run_experiment(text, "spec.json", out);
  ASSERT_EQ(runs.size(), 6u);
  H5File f(out, H5File::Mode::Read);
  for (const char* r : {"never_reset", "reset", "dt_scale", "clip"}) {
    EXPECT_EQ(f.attr(r, "status"), "finished") << r;
    EXPECT_NE(f.attr(r, "intervention").find("(training-free)"), std::string::npos) << r;
    EXPECT_EQ(f.dims(std::string(r) + "/train/loss")[0], 0) << r << ": no training";
    // Every run is measured against the loaded model's one reference.
    EXPECT_EQ(f.read_f32(std::string(r) + "/ppl/fixed_reference_per_sequence"),
              f.read_f32("baseline/ppl/fixed_reference_per_sequence")) << r;
  }
  // A reset period longer than the sequence changes no loss, bit for bit; one of T/... changes them.
  EXPECT_EQ(f.read_f32("never_reset/ppl/nll_per_sequence"), f.read_f32("baseline/ppl/nll_per_sequence"));
  EXPECT_NE(f.read_f32("reset/ppl/nll_per_sequence"), f.read_f32("baseline/ppl/nll_per_sequence"));
  // What was applied is in the file.
  EXPECT_EQ(f.attr("reset/intervention", "kind"), "reset");
  EXPECT_EQ(f.attr("dt_scale/intervention", "dt_from"), "16");
  EXPECT_EQ(f.dims("dt_scale/intervention/dt_factor"), (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(f.dims("clip/intervention/max_norm"), (std::vector<int64_t>{1, 8}));
  // Effective attention for the runs it has a matrix form for; a clipped run has none.
  EXPECT_EQ(f.dims("reset/attention/M")[0], 8);
  EXPECT_FALSE(f.has("clip/attention"));
  // A factor shape that does not fit the model fails the run, naming it.
  const std::string bad = R"({"model": ")" + tiny_model_dir() + R"(", "baseline": false,
    "interventions": [{"kind": "dt_scale", "factor": [1, 2, 3]}],
    "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2}})";
  const std::string e = statescope::test::error_of([&] {
    run_experiment(bad, "bad.json", statescope::test::scratch("statescope_exp_free_bad.h5"));
  });
  EXPECT_NE(e.find("factor has 3 values per layer, the model has 1 layer"), std::string::npos) << e;
}

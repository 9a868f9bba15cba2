// test_faults.cpp — faults lose nothing (docs/reliability.md, "Outputs"). statescope-cli runs as a
// user runs it, under tests/fault/fault_shim.c where a full disk or an I/O error is needed (an
// LD_PRELOAD library: writes under one folder fail with ENOSPC or EIO after N bytes; no privileges).
// Each fault test asserts exit 1 (no signal), the file named in the message, no half-written output
// left, and that a file that existed before reads back byte for byte the same afterwards. One test
// per output-path rule follows. No LibTorch, no Qt: this binary builds in seconds.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/store/experiment_store.h"
#include "core/store/h5file.h"
#include "tests/cli_process.h"
#include "tests/scratch.h"

namespace fs = std::filesystem;
using namespace statescope;
using statescope::test::bytes_of;
using statescope::test::cli;
using statescope::test::Result;
using statescope::test::run_program;

namespace {

// A fresh folder per test: the shim's folder, and nothing else in it.
std::string folder(const std::string& name) {
  const std::string d = test::scratch("faults_" + name);
  fs::create_directories(d);
  return d;
}

std::vector<std::string> shim(const std::string& dir, long long after, const char* err = "ENOSPC") {
  return {"LD_PRELOAD=" STATESCOPE_FAULT_SHIM, "STATESCOPE_FAULT_DIR=" + fs::canonical(dir).string(),
          "STATESCOPE_FAULT_AFTER=" + std::to_string(after), std::string("STATESCOPE_FAULT_ERRNO=") + err};
}

// A small evaluation of the embedded model: a few seconds.
std::vector<std::string> eval_args(const std::string& out, const std::string& run = "eval") {
  return {"eval", "--model", "embedded", "--data", "embedded", "--length", "256", "--sequences", "2",
          "-o", out, "--run", run};
}

// Every run of an experiment file with its per-position loss: what "reads back identical" compares.
std::string runs_digest(const std::string& path) {
  H5File f(path, H5File::Mode::Read);
  std::string d;
  for (const auto& run : run_names(f)) {
    d += run + ":" + f.attr(run, "status") + ":";
    if (f.has(run + "/ppl/nll"))
      for (double v : f.read_f64(run + "/ppl/nll")) d += std::to_string(v) + ",";
    d += ";";
  }
  return d;
}

void expect_clean_failure(const Result& r, const std::string& names) {
  EXPECT_FALSE(r.timed_out) << r.out;
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal << "\n" << r.out;
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(names), std::string::npos) << "the message should name " << names << ":\n" << r.out;
}

// Nothing half-written stays beside `path`.
void expect_no_leftovers(const std::string& path) {
  EXPECT_FALSE(fs::exists(path + ".partial")) << path << ".partial left behind";
  EXPECT_FALSE(fs::exists(path + ".lock")) << path << ".lock left behind";
}

}  // namespace

// ---- A full disk or an I/O error: exit 1, no signal, the file named, nothing half-written left ----

// Total size of a file or of a folder's files: a write budget below it must fail somewhere.
long long size_of(const std::string& path) {
  if (!fs::is_directory(path)) return static_cast<long long>(fs::file_size(path));
  long long n = 0;
  for (auto& e : fs::recursive_directory_iterator(path))
    if (e.is_regular_file()) n += static_cast<long long>(e.file_size());
  return n;
}

TEST(Faults, FullDiskDuringEvalOfANewFile) {
  const auto dir = folder("eval_new");
  const auto out = dir + "/new.h5";
  ASSERT_EQ(cli(eval_args(test::scratch("faults_eval_reference.h5"))).code, 0);
  const long long full = size_of(test::scratch("faults_eval_reference.h5"));
  for (long long after : {0LL, full / 4, full * 3 / 4}) {  // at creation, in the first datasets, later
    SCOPED_TRACE("budget " + std::to_string(after));
    const Result r = cli(eval_args(out), shim(dir, after));
    expect_clean_failure(r, "new.h5");
    EXPECT_FALSE(fs::exists(out)) << r.out;
    expect_no_leftovers(out);
  }
}

TEST(Faults, FullDiskOrIOErrorDuringAppendLeavesTheFileAsItWas) {
  const auto dir = folder("append");
  const auto keep = dir + "/keep.h5";
  ASSERT_EQ(cli(eval_args(keep, "first")).code, 0);
  const std::string before = bytes_of(keep), runs = runs_digest(keep);
  const auto size = static_cast<long long>(before.size());
  const auto reference = test::scratch("faults_append_reference.h5");
  fs::copy_file(keep, reference);
  auto ref_args = eval_args(reference, "second");
  ref_args.push_back("--append");
  ASSERT_EQ(cli(ref_args).code, 0);
  const long long grown = size_of(reference) - size;  // what the appended run adds
  ASSERT_GT(grown, 0);
  // Below `size`: the copy itself fails; above: the copy is made, then the new run's writes fail.
  for (long long after : {0LL, size / 2, size + grown / 4, size + grown * 3 / 4}) {
    for (const char* err : {"ENOSPC", "EIO"}) {
      SCOPED_TRACE("budget " + std::to_string(after) + " " + err);
      auto args = eval_args(keep, "second");
      args.push_back("--append");
      const Result r = cli(args, shim(dir, after, err));
      expect_clean_failure(r, "keep.h5");
      EXPECT_EQ(bytes_of(keep), before) << "the existing file changed";
      EXPECT_EQ(runs_digest(keep), runs);
      expect_no_leftovers(keep);
    }
  }
}

TEST(Faults, FullDiskDuringOverwriteLeavesTheFileAsItWas) {
  const auto dir = folder("overwrite");
  const auto keep = dir + "/keep.h5";
  ASSERT_EQ(cli(eval_args(keep)).code, 0);
  const std::string before = bytes_of(keep);
  auto args = eval_args(keep);
  args.push_back("--overwrite");
  const long long full = static_cast<long long>(before.size());
  for (long long after : {0LL, full / 4, full * 3 / 4}) {
    SCOPED_TRACE("budget " + std::to_string(after));
    expect_clean_failure(cli(args, shim(dir, after)), "keep.h5");
    EXPECT_EQ(bytes_of(keep), before);
    expect_no_leftovers(keep);
  }
}

TEST(Faults, FullDiskDuringAnExperimentRun) {
  const auto dir = folder("run");
  const auto spec = dir + "/../faults_run_spec.json";
  std::ofstream(spec) << R"({"model": "embedded", "data": "embedded", "baseline": true,
    "posttrain": {"steps": 2, "batch": 2}, "policies": [{"kind": "passing"}],
    "eval": {"length": 128, "sequences": 2}})";
  const auto out = dir + "/exp.h5";
  const auto reference = test::scratch("faults_run_reference.h5");
  ASSERT_EQ(cli({"run", spec, "-o", reference, "--jobs", "1"}).code, 0);
  const long long full = size_of(reference);
  for (long long after : {0LL, full / 3, full * 2 / 3}) {
    SCOPED_TRACE("budget " + std::to_string(after));
    expect_clean_failure(cli({"run", spec, "-o", out, "--jobs", "1"}, shim(dir, after)), "exp.h5");
    EXPECT_FALSE(fs::exists(out));
    expect_no_leftovers(out);
  }
}

TEST(Faults, FullDiskDuringPosttrainCheckpointsKeepsTheOldModel) {
  const auto dir = folder("posttrain");
  const auto model = dir + "/model";
  const std::vector<std::string> train{"posttrain", "--model", "embedded", "--T", "32", "--steps", "4", "--batch", "2",
                                       "--checkpoint-every", "1", "--out", model};
  ASSERT_EQ(cli(train).code, 0);
  const std::string weights = bytes_of(model + "/model.safetensors");
  const long long full = size_of(model);  // what one run leaves; it wrote more (every checkpoint)
  auto again = train;
  again.push_back("--overwrite");
  for (long long after : {0LL, full / 3, full * 2 / 3}) {  // the record, the first checkpoint, a later one
    SCOPED_TRACE("budget " + std::to_string(after));
    const Result r = cli(again, shim(dir, after));
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.signal, 0) << r.out;
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("failed"), std::string::npos) << r.out;
    EXPECT_EQ(bytes_of(model + "/model.safetensors"), weights) << "the old model changed";
    EXPECT_TRUE(fs::exists(model + "/training.h5"));
  }
}

TEST(Faults, FullDiskDuringTokenizationLeavesNoCacheEntry) {
  const auto dir = folder("cache");
  const auto text = test::scratch("faults_corpus.txt");
  {
    std::ofstream t(text);
    for (int i = 0; i < 4000; ++i) t << "A line of text number " << i << " for the token cache.\n\n";
  }
  const Result r = cli({"data", "--data", text, "--cache", dir + "/tokens"}, shim(dir, 4096));
  expect_clean_failure(r, "disk full");
  // No entry, complete or partial, is left for a later run to trust.
  if (fs::exists(dir + "/tokens"))
    for (auto& e : fs::directory_iterator(dir + "/tokens")) ADD_FAILURE() << "left behind: " << e.path();
  // And without the fault it works.
  EXPECT_EQ(cli({"data", "--data", text, "--cache", dir + "/tokens"}).code, 0);
}

// ---- The output rule, one test each ----

TEST(OutputRule, ReportNeverReplacesItsInputOrAFileItDidNotMake) {
  const auto dir = folder("report");
  const auto exp = dir + "/exp.h5", precious = dir + "/precious.txt";
  ASSERT_EQ(cli(eval_args(exp)).code, 0);
  std::ofstream(precious) << "notes that took a week\n";
  const std::string exp_bytes = bytes_of(exp);
  for (const auto& args : std::vector<std::vector<std::string>>{{"report", exp, "-o", exp},
                                                               {"report", exp, "-o", exp, "--overwrite"},
                                                               {"report", exp, "-o", precious}}) {
    const Result r = cli(args);
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_EQ(bytes_of(exp), exp_bytes);
    EXPECT_EQ(bytes_of(precious), "notes that took a week\n");
  }
  // Asked for, it replaces the unrelated file, whole.
  const Result ok = cli({"report", exp, "-o", precious, "--overwrite"});
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(bytes_of(precious).find("<html"), std::string::npos);
  expect_no_leftovers(precious);
}

TEST(OutputRule, ForwardRefusesAnExistingOutputAndItsOwnInput) {
  const auto dir = folder("forward");
  const auto in = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/hf-untied/golden.h5";
  const auto model = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/hf-untied";
  const auto out = dir + "/existing.h5";
  std::ofstream(out) << "not yours";
  Result r = cli({"forward", "--model", model, "--input", in, "--output", out});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("already exists"), std::string::npos) << r.out;
  EXPECT_EQ(bytes_of(out), "not yours");
  const auto in_copy = dir + "/in.h5";
  fs::copy_file(in, in_copy);
  const std::string in_bytes = bytes_of(in_copy);
  r = cli({"forward", "--model", model, "--input", in_copy, "--output", in_copy, "--overwrite"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("one of the run's inputs"), std::string::npos) << r.out;
  EXPECT_EQ(bytes_of(in_copy), in_bytes);
}

TEST(OutputRule, PosttrainNeverWritesOverAModelFolderUnasked) {
  const auto dir = folder("model_out");
  const auto first = dir + "/first", second = dir + "/second";
  const std::vector<std::string> base{"posttrain", "--model", "embedded", "--T", "32", "--steps", "2", "--batch", "2"};
  auto args = base;
  args.insert(args.end(), {"--out", first});
  ASSERT_EQ(cli(args).code, 0);
  EXPECT_TRUE(fs::exists(first + "/model.safetensors"));
  EXPECT_FALSE(fs::exists(first + ".partial")) << "the work folder is renamed into place";
  const std::string weights = bytes_of(first + "/model.safetensors");
  // An existing model folder, unasked: refused before any work, nothing touched.
  Result r = cli(args);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("already exists"), std::string::npos) << r.out;
  EXPECT_EQ(bytes_of(first + "/model.safetensors"), weights);
  // The model being read, even with --overwrite.
  r = cli({"posttrain", "--model", first, "--steps", "2", "--batch", "2", "--out", first, "--overwrite"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("one of the run's inputs"), std::string::npos) << r.out;
  EXPECT_EQ(bytes_of(first + "/model.safetensors"), weights);
  // From it into a new folder: fine; and --overwrite replaces a folder as a whole.
  r = cli({"posttrain", "--model", first, "--steps", "2", "--batch", "2", "--out", second});
  EXPECT_EQ(r.code, 0) << r.out;
  std::ofstream(second + "/stray.txt") << "x";
  r = cli({"posttrain", "--model", first, "--steps", "2", "--batch", "2", "--out", second, "--overwrite"});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_FALSE(fs::exists(second + "/stray.txt")) << "replaced as a whole, not file by file";
  EXPECT_FALSE(fs::exists(second + ".partial"));
}

TEST(OutputRule, ACancelledReplacementLeavesTheOldFile) {
  const auto dir = folder("cancel");
  const auto keep = dir + "/keep.h5";
  ASSERT_EQ(cli(eval_args(keep)).code, 0);
  const std::string before = bytes_of(keep);
  const auto spec = dir + "/../faults_cancel_spec.json";
  std::ofstream(spec) << R"({"model": "embedded", "data": "embedded", "baseline": false,
    "posttrain": {"steps": 100000, "batch": 2}, "policies": [{"kind": "passing"}]})";
  const Result r = cli({"run", spec, "-o", keep, "--overwrite"}, {}, 120, [](pid_t pid) {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    ::kill(pid, SIGTERM);
  });
  EXPECT_EQ(r.code, 130) << r.out;
  EXPECT_EQ(bytes_of(keep), before) << "a cancelled run replaced the file";
  // Its own results are beside it, valid, and say they were cancelled.
  ASSERT_TRUE(fs::exists(keep + ".partial")) << r.out;
  H5File f(keep + ".partial", H5File::Mode::Read);
  EXPECT_EQ(f.attr("passing", "status"), "cancelled");
  EXPECT_NE(r.out.find("left as it was"), std::string::npos) << r.out;
}

// Effective attention at its documented limit (65536 tokens, binned) shows progress and stops on
// SIGTERM within a block (well under a second): exit 130, no output, no staging copy, no lock left.
TEST(OutputRule, AttentionAtItsLimitStopsOnSigtermAtOnce) {
  const auto dir = folder("attention_term");
  const auto out = dir + "/att.h5";
  std::chrono::steady_clock::time_point killed;
  const Result r = cli({"attention", "--length", "65536", "-o", out}, {}, 120, [&](pid_t pid) {
    std::this_thread::sleep_for(std::chrono::seconds(8));  // loaded, forwarded, into M's blocks (progress every 5 s)
    killed = std::chrono::steady_clock::now();
    ::kill(pid, SIGTERM);
  });
  const double after = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  EXPECT_EQ(r.code, 130) << r.out;
  EXPECT_LT(after, 3.0) << "SIGTERM took " << after << " s to stop it\n" << r.out;
  EXPECT_NE(r.out.find("attention: block"), std::string::npos) << "no progress shown\n" << r.out;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  EXPECT_FALSE(fs::exists(out + ".lock")) << "a stale lock";
}

TEST(OutputRule, ClearingTheCacheRemovesOnlyItsOwnEntries) {
  const auto cache = folder("cache_clear");
  // A foreign folder that happens to hold an index.json with a "source", beside a file of its own.
  fs::create_directories(cache + "/0123456789abcdef");
  std::ofstream(cache + "/0123456789abcdef/index.json") << R"({"source": "/somewhere"})";
  std::ofstream(cache + "/0123456789abcdef/thesis.tex") << "chapter 1";
  fs::create_directories(cache + "/photos");
  std::ofstream(cache + "/photos/index.json") << R"({"format": "statescope-tokens-v1", "source": "/x"})";
  std::ofstream(cache + "/photos/cat.jpg") << "meow";
  // And a real entry.
  const auto text = test::scratch("faults_cache_text.txt");
  {
    std::ofstream t(text);
    for (int i = 0; i < 2000; ++i) t << "Paragraph " << i << " of a corpus for the token cache.\n\n";
  }
  ASSERT_EQ(cli({"data", "--data", text, "--cache", cache}).code, 0);
  const Result r = cli({"data", "--clear-cache", "--cache", cache});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(cache + "/0123456789abcdef/thesis.tex"));
  EXPECT_TRUE(fs::exists(cache + "/photos/cat.jpg"));
  size_t left = 0;
  for (auto& e : fs::directory_iterator(cache)) left += e.is_directory();
  EXPECT_EQ(left, 2u) << "the real entry should be gone, the two foreign folders kept";
}

// ---- Inputs and numbers ----

TEST(OutputRule, NulAndInvalidUtf8InNamesAreRefusedByName) {
  const auto dir = folder("nul");
  const auto spec = dir + "/nul.json";
  std::ofstream(spec) << R"({"model": "embedded", "data": "embedded", "policies": [{"kind": "zero", "name": "a\u0000b"}],
    "posttrain": {"steps": 1, "batch": 2}, "eval": {"length": 64, "sequences": 1}})";
  Result r = cli({"run", spec, "-o", dir + "/o.h5"});
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("NUL"), std::string::npos) << r.out;
  r = cli({"eval", "--model", "embedded", "--data", "embedded", "--length", "64", "--sequences", "1", "-o",
           dir + "/o.h5", "--run", "bad\x01name"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("control character"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/o.h5"));
}

TEST(OutputRule, FifosAndDevicesAreRefusedBeforeTheyAreOpened) {
  const auto dir = folder("fifo");
  const auto fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  // A model folder whose config.json is a FIFO, and one whose config.json is /dev/zero.
  const auto golden = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/hf-untied";
  for (const char* name : {"fifo_model", "zero_model"}) {
    fs::create_directories(dir + "/" + name);
    fs::copy_file(golden + "/model.safetensors", dir + "/" + name + "/model.safetensors");
  }
  ASSERT_EQ(::mkfifo((dir + "/fifo_model/config.json").c_str(), 0644), 0);
  fs::create_symlink("/dev/zero", dir + "/zero_model/config.json");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"info", "--model", dir + "/fifo_model"}, "FIFO"},
      {{"info", "--model", dir + "/zero_model"}, "character device"},
      {{"run", fifo, "-o", dir + "/o.h5"}, "FIFO"},
      {{"inspect", fifo}, "FIFO"},
      {{"report", fifo, "-o", dir + "/r.html"}, "FIFO"},
      {{"forward", "--model", golden, "--input", fifo, "--output", dir + "/f.h5"}, "FIFO"},
      {{"eval", "--model", "embedded", "--data", fifo, "-o", dir + "/e.h5"}, "FIFO"},
  };
  for (const auto& [args, says] : cases) {
    const Result r = cli(args, {}, 30);
    EXPECT_FALSE(r.timed_out) << args[0] << " blocked on the FIFO";
    EXPECT_EQ(r.code, 1) << args[0] << ": " << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << args[0] << ": " << r.out;
  }
  // An output path that is a FIFO is never written over, even with --overwrite.
  const Result r = cli({"report", std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/nexus/demo.h5", "-o", fifo,
                        "--overwrite"}, {}, 30);
  EXPECT_EQ(r.code, 1) << r.out;
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(OutputRule, NumbersOutOfRangeAreRefusedByTheirFlag) {
  const auto dir = folder("numbers");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--threads", "1000000", "info", "--model", "embedded"}, "--threads"},
      {{"posttrain", "--model", "embedded", "--T", "32", "--steps", "1", "--lr", "1e308", "--out", dir + "/a"}, "lr"},
      {{"posttrain", "--model", "embedded", "--T", "32", "--steps", "1", "--lr", "20", "--out", dir + "/a"}, "--lr"},
      {{"posttrain", "--model", "embedded", "--T", "32", "--steps", "1", "--grad-clip", "1e308", "--out", dir + "/a"},
       "grad"},
      {{"posttrain", "--model", "embedded", "--T", "32", "--steps", "1", "--grad-clip", "1e9", "--out", dir + "/a"},
       "--grad-clip"},
      {{"pretrain", "--steps", "1", "--a-min", "inf", "--out", dir + "/b"}, "--a-min"},
      {{"posttrain", "--model", "embedded", "--T", "32", "--steps", "1", "--policy", "random", "--sigma", "1e9",
        "--out", dir + "/a"}, "--sigma"},
  };
  for (const auto& [args, says] : cases) {
    const Result r = cli(args, {}, 60);
    EXPECT_FALSE(r.timed_out) << args[0];
    EXPECT_NE(r.code, 0) << r.out;
    EXPECT_EQ(r.signal, 0) << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
  }
  EXPECT_FALSE(fs::exists(dir + "/a"));
  EXPECT_FALSE(fs::exists(dir + "/b"));
}

TEST(OutputRule, TheForwardInputIsBudgetedBeforeAllocation) {
  const auto dir = folder("budget");
  const auto in = dir + "/ids.h5";
  {
    H5File f(in, H5File::Mode::Create);
    std::vector<int64_t> ids(512 * 512, 7);
    f.write("input_ids", ids.data(), {512, 512});
  }
  const auto model = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/hf-untied";
  const Result r = cli({"forward", "--model", model, "--input", in, "--output", dir + "/out.h5"},
                       {"STATESCOPE_MEMORY_BUDGET=100000000"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("'input_ids' [512, 512] needs"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/out.h5"));
}

// The app, as a user runs a spec from it (`statescope --run`), on a disk that fills during the run:
// no crash, the failure said naming the file, no partial file left, and the app goes on to its normal
// end (the --quit-when-done summary is printed after the error was shown).
TEST(Faults, FullDiskDuringARunInTheAppIsShownAndTheAppGoesOn) {
#ifndef STATESCOPE_APP
  GTEST_SKIP() << "the desktop app is not built in this configuration";
#else
  const auto dir = folder("app_run");
  const auto out = dir + "/app.h5";
  const std::string spec = dir + "/spec.json";
  std::ofstream(spec) << R"({"model": "embedded", "baseline": true, "policies": [],
    "eval": {"length": 256, "sequences": 2, "segment": 128, "batch": 2}})";
  auto env = shim(dir, 4096);
  env.push_back("QT_QPA_PLATFORM=offscreen");
  env.push_back("STATESCOPE_THREADS=1");
  const Result r = run_program(STATESCOPE_APP, {"--run", spec, "-o", out, "--quit-when-done"}, env, 300, {});
  EXPECT_FALSE(r.timed_out) << r.out;
  EXPECT_EQ(r.signal, 0) << r.out;
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("app.h5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("longest event-loop stall"), std::string::npos) << "the app did not reach its normal end: " << r.out;
  EXPECT_FALSE(fs::exists(out)) << r.out;
  expect_no_leftovers(out);
#endif
}

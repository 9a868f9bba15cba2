// test_output_rule.cpp — the output rule (core/base/output_rule.h), names (names.h) and inputs that
// are not regular files (file_io.h), in-process. The same rules through the CLI: test_faults.cpp.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/error.h"
#include "core/base/file_io.h"
#include "core/base/names.h"
#include "core/base/output_rule.h"
#include "core/store/experiment_store.h"
#include "tests/scratch.h"

namespace fs = std::filesystem;
using namespace statescope;

namespace {
std::string dir_for(const std::string& name) {
  const auto d = test::scratch("rule_" + name);
  fs::create_directories(d);
  return d;
}
std::string text_of(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST(OutputRuleUnit, ANewFileAppearsOnlyWhenComplete) {
  const auto d = dir_for("new");
  const auto path = d + "/a.txt";
  {
    StagedOutput out(path, {});
    std::ofstream(out.staging()) << "half";
    EXPECT_FALSE(fs::exists(path)) << "visible before it is complete";
    EXPECT_EQ(out.finish(StagedOutput::Outcome::Replace), path);
  }
  EXPECT_EQ(text_of(path), "half");
  EXPECT_FALSE(fs::exists(path + ".partial"));
  {  // abandoned (an exception, say): nothing stays
    StagedOutput out(d + "/b.txt", {});
    std::ofstream(out.staging()) << "x";
  }
  EXPECT_FALSE(fs::exists(d + "/b.txt"));
  EXPECT_FALSE(fs::exists(d + "/b.txt.partial"));
}

TEST(OutputRuleUnit, AnExistingFileIsReplacedOnlyWhenAskedAndTheWorkEndedWell) {
  const auto d = dir_for("existing");
  const auto path = d + "/keep.txt";
  std::ofstream(path) << "old";
  EXPECT_THROW(StagedOutput(path, {}), Error);  // not asked
  for (auto outcome : {StagedOutput::Outcome::KeepNew, StagedOutput::Outcome::Discard}) {
    StagedOutput out(path, OutputRule{true, {}, false});
    std::ofstream(out.staging()) << "new";
    out.finish(outcome);
    EXPECT_EQ(text_of(path), "old");
    // KeepNew keeps the unfinished results beside it; Discard removes them.
    EXPECT_EQ(fs::exists(path + ".partial"), outcome == StagedOutput::Outcome::KeepNew);
  }
  StagedOutput out(path, OutputRule{true, {}, false});  // the stale staging copy is cleared
  std::ofstream(out.staging()) << "new";
  out.finish(StagedOutput::Outcome::Replace);
  EXPECT_EQ(text_of(path), "new");
}

TEST(OutputRuleUnit, AnInputIsNeverTheOutput) {
  const auto d = dir_for("inputs");
  const auto in = d + "/model";
  fs::create_directories(in);
  std::ofstream(in + "/w.bin") << "weights";
  fs::create_symlink(in + "/w.bin", d + "/link.bin");
  // The same inode under another name, a file of an input folder, the folder itself, its parent.
  EXPECT_THROW(check_output(d + "/link.bin", OutputRule{true, {in + "/w.bin"}, false}), Error);
  EXPECT_THROW(check_output(in + "/w.bin", OutputRule{true, {in}, false}), Error);
  EXPECT_THROW(check_output(in, OutputRule{true, {in}, true}), Error);
  EXPECT_THROW(check_output(d, OutputRule{true, {in}, true}), Error);
  EXPECT_NO_THROW(check_output(d + "/other", OutputRule{false, {in}, true}));
}

TEST(OutputRuleUnit, FoldersAreSwappedWhole) {
  const auto d = dir_for("folders");
  const auto path = d + "/model";
  fs::create_directories(path);
  std::ofstream(path + "/old.txt") << "old";
  {
    StagedOutput out(path, OutputRule{true, {}, true});
    std::ofstream(out.staging() + "/new.txt") << "new";
    out.finish(StagedOutput::Outcome::Replace);
  }
  EXPECT_TRUE(fs::exists(path + "/new.txt"));
  EXPECT_FALSE(fs::exists(path + "/old.txt"));
  EXPECT_FALSE(fs::exists(path + ".partial"));
  // A folder in the way of a staging name that statescope did not make is never removed.
  fs::create_directories(d + "/other.partial");
  std::ofstream(d + "/other.partial/mine.txt") << "mine";
  EXPECT_THROW(StagedOutput(d + "/other", OutputRule{false, {}, true}), Error);
  EXPECT_TRUE(fs::exists(d + "/other.partial/mine.txt"));
}

TEST(OutputRuleUnit, NonRegularFilesAreNeverInputsNorReplaced) {
  const auto d = dir_for("fifo");
  const auto fifo = d + "/p";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  try {
    read_file_bounded(fifo, 100);
    ADD_FAILURE() << "a FIFO was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("FIFO"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_file_bounded("/dev/zero", 100), Error);
  EXPECT_THROW(require_regular_file(d), Error);
  EXPECT_THROW(check_output(fifo, OutputRule{true, {}, false}), Error);
  std::ofstream(d + "/big") << std::string(200, 'x');
  EXPECT_THROW(read_file_bounded(d + "/big", 100), Error);
  EXPECT_EQ(read_file_bounded(d + "/big", 200).size(), 200u);
}

TEST(OutputRuleUnit, NamesAreValidUtf8WithoutControlCharacters) {
  EXPECT_NO_THROW(check_name("passing", "spec"));
  EXPECT_NO_THROW(check_name("zéro σ=0.1", "spec"));
  for (const std::string bad : {std::string("a\0b", 3), std::string("a\x01"), std::string("a/b"), std::string(""),
                                std::string("."), std::string("\xC3\x28"), std::string("\xED\xA0\x80"),
                                std::string("\xC0\xAF"), std::string(201, 'a')})
    EXPECT_THROW(check_name(bad, "spec"), Error) << escaped(bad);
  EXPECT_TRUE(valid_utf8("\xF0\x9F\x98\x80"));
  EXPECT_FALSE(valid_utf8("\xF0\x9F\x98"));  // cut short
  EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
}

TEST(OutputRuleUnit, AnAppendWorksOnACopyUntilEveryNewRunFinished) {
  const auto d = dir_for("append");
  const auto path = d + "/exp.h5";
  {
    auto f = ExperimentFile::create(path);
    f->begin_run({"first", "{}", "m", "h", "none", 0, "v", "cpu"});
    f->set_status("first", "finished");
    EXPECT_FALSE(fs::exists(path)) << "visible before it is complete";
  }
  ASSERT_TRUE(fs::exists(path));
  const std::string before = text_of(path);
  {  // a cancelled run: the file stays as it was, the copy with the cancelled run beside it
    auto f = ExperimentFile::open(path);
    f->begin_run({"second", "{}", "m", "h", "none", 0, "v", "cpu"});
    f->set_status("second", "cancelled");
    EXPECT_EQ(f->close(), path + ".partial");
  }
  EXPECT_EQ(text_of(path), before);
  {
    auto f = ExperimentFile::open(path);
    f->begin_run({"second", "{}", "m", "h", "none", 0, "v", "cpu"});
    f->set_status("second", "finished");
    EXPECT_EQ(f->close(), path);
  }
  H5File f(path, H5File::Mode::Read);
  EXPECT_EQ(run_names(f), (std::vector<std::string>{"first", "second"}));
  EXPECT_FALSE(fs::exists(path + ".partial"));
}

// test_output_flags.cpp — every flag of every verb that names something statescope writes follows
// the one output rule (core/base/output_rule.h): it may not be an input of the same command nor lie
// inside a model being read, even with --overwrite. The verbs and their flags are read from the
// program's own --help, so a new writing flag without a case here fails the test by name. No
// LibTorch: statescope-cli runs as a user runs it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_process.h"
#include "tests/scratch.h"

namespace fs = std::filesystem;
using statescope::test::bytes_of;
using statescope::test::cli;
using statescope::test::Result;

namespace {

const std::string kSource = STATESCOPE_SOURCE_DIR;

// The flags that name an output. Any other option whose help says it writes must be in kNotAPath.
const std::set<std::string> kWriters = {"-o", "--output", "--out", "--record", "--cache", "--save"};
const std::set<std::string> kNotAPath = {
    "--overwrite",         // a permission, not a path
    "--append",            // the same output, appended to
    "--replace-run",       // a run inside the same output
    "--stop-after",        // writes OUT/checkpoint: inside --out
    "--checkpoint-every",  // the same
    "--resume",            // the same
    "--clear-cache",       // removes the cache's own entries only (test_faults: ClearingTheCacheRemovesOnlyItsOwnEntries)
    "--clear-stale",       // the same
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The verbs `statescope-cli --help` lists.
std::vector<std::string> verbs() {
  const Result r = cli({"--help"});
  std::vector<std::string> out;
  bool in_list = false;
  for (const auto& l : lines_of(r.out)) {
    if (l.rfind("Subcommands:", 0) == 0 || l.rfind("SUBCOMMANDS:", 0) == 0) {
      in_list = true;
      continue;
    }
    if (!in_list) continue;
    if (l.empty() || !std::isspace(static_cast<unsigned char>(l[0]))) break;
    std::istringstream w(l);
    std::string name;
    w >> name;
    if (!name.empty()) out.push_back(name);
  }
  return out;
}

// Each option of `verb --help`: its names ("-o", "--output") and its line (the help text).
std::vector<std::pair<std::vector<std::string>, std::string>> options(const std::string& verb) {
  std::vector<std::pair<std::vector<std::string>, std::string>> out;
  for (const auto& l : lines_of(cli({verb, "--help"}).out)) {
    const auto first = l.find_first_not_of(' ');
    if (first == std::string::npos || l[first] != '-') continue;
    std::string names = l.substr(first, l.find(' ', first) - first);
    std::vector<std::string> split;
    std::stringstream ss(names);
    for (std::string n; std::getline(ss, n, ',');)
      if (!n.empty()) split.push_back(n.substr(0, n.find('{')));
    out.emplace_back(split, l);
  }
  return out;
}

struct Fixture {
  std::string dir, model, data, corpus_dir, spec, h5, hf_model, forward_in, data_root;
};

Fixture make_fixture() {
  Fixture f;
  f.dir = statescope::test::scratch("output_flags");
  fs::create_directories(f.dir);
  f.model = f.dir + "/model";
  fs::copy(kSource + "/data/models/embedded", f.model, fs::copy_options::recursive);
  f.corpus_dir = f.dir + "/corpus";
  fs::create_directories(f.corpus_dir);
  f.data = f.corpus_dir + "/text.txt";
  {
    std::ifstream in(kSource + "/data/corpus/austen-novels.txt");
    std::string text(40000, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    std::ofstream(f.data) << text;
  }
  f.spec = f.dir + "/spec.json";
  std::ofstream(f.spec) << R"({"model": ")" << f.model << R"(", "data": ")" << f.data
                        << R"(", "T": 16, "policies": [], "eval": {"length": 64, "sequences": 1}})";
  f.h5 = f.dir + "/exp.h5";
  fs::copy_file(kSource + "/tests/golden/nexus/demo.h5", f.h5);
  f.hf_model = f.dir + "/hf";
  fs::copy(kSource + "/tests/golden/hf-untied", f.hf_model, fs::copy_options::recursive);
  f.forward_in = f.dir + "/forward_in.h5";
  fs::copy_file(f.hf_model + "/golden.h5", f.forward_in);
  // A data folder of its own for `copying`, whose input is the embedded corpus ($STATESCOPE_DATA).
  f.data_root = f.dir + "/data";
  fs::create_directories(f.data_root + "/corpus");
  fs::copy_file(kSource + "/data/corpus/austen-novels.txt", f.data_root + "/corpus/austen-novels.txt");
  return f;
}

struct Case {
  std::vector<std::string> args;
  std::string target;  // the input the flag names: it must read back unchanged
  std::vector<std::string> env = {};
};

// The cases for each (verb, writing flag): each points the flag at an input of the same command.
std::map<std::pair<std::string, std::string>, std::vector<Case>> cases(const Fixture& f) {
  const std::string fresh = f.dir + "/fresh_out";
  const std::vector<std::string> tiny_train{"--T", "16", "--steps", "1", "--batch", "1"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::string weights = f.model + "/model.safetensors", record = f.model + "/training.h5";
  std::map<std::pair<std::string, std::string>, std::vector<Case>> c;
  c[{"forward", "--output"}] = {
      {{"forward", "--model", f.hf_model, "--input", f.forward_in, "--output", f.forward_in, "--overwrite"}, f.forward_in},
      {{"forward", "--model", f.hf_model, "--input", f.forward_in, "--output", f.hf_model + "/model.safetensors", "--overwrite"},
       f.hf_model + "/model.safetensors"}};
  c[{"pretrain", "--out"}] = {{with({"pretrain", "--data", f.data, "--out", f.corpus_dir, "--overwrite"}, tiny_train), f.data}};
  c[{"pretrain", "--record"}] = {
      {with({"pretrain", "--data", f.data, "--out", fresh, "--record", f.data, "--overwrite"}, tiny_train), f.data}};
  c[{"posttrain", "--out"}] = {{with({"posttrain", "--model", f.model, "--out", f.model, "--overwrite"}, tiny_train), weights}};
  c[{"posttrain", "--record"}] = {
      {with({"posttrain", "--model", f.model, "--out", fresh, "--record", weights, "--overwrite"}, tiny_train), weights},
      {with({"posttrain", "--model", f.model, "--out", fresh, "--record", record, "--overwrite"}, tiny_train), record},
      {with({"posttrain", "--model", f.model, "--data", f.data, "--out", fresh, "--record", f.data, "--overwrite"}, tiny_train),
       f.data}};
  const std::vector<std::string> small_eval{"--T", "16", "--length", "64", "--sequences", "1"};
  c[{"eval", "-o"}] = {
      {with({"eval", "--model", f.model, "--data", f.data, "-o", f.data, "--overwrite"}, small_eval), f.data},
      {with({"eval", "--model", f.model, "--data", f.data, "-o", record, "--overwrite"}, small_eval), record}};
  c[{"run", "-o"}] = {{{"run", f.spec, "-o", f.spec, "--overwrite"}, f.spec},
                      {{"run", f.spec, "-o", f.data, "--overwrite"}, f.data},
                      {{"run", f.spec, "-o", record, "--overwrite"}, record}};
  for (const char* verb : {"effrem", "states", "unexplored", "babi"})
    c[{verb, "-o"}] = {{{verb, "--model", f.model, "--data", f.data, "-o", f.data, "--overwrite"}, f.data},
                       {{verb, "--model", f.model, "--data", f.data, "-o", record, "--overwrite"}, record}};
  c[{"passkey", "-o"}] = {{{"passkey", "--model", f.model, "-o", record, "--overwrite"}, record}};
  for (const char* verb : {"passkey", "babi"})  // the fine-tuned model: never over the model being read
    c[{verb, "--save"}] = {{{verb, "--model", f.model, "--finetune-steps", "1", "-o", f.dir + "/" + verb + "_save.h5", "--save",
                             f.model, "--overwrite"},
                            weights}};
  c[{"copying", "-o"}] = {{{"copying", "-o", f.data_root + "/corpus/austen-novels.txt", "--overwrite"},
                           f.data_root + "/corpus/austen-novels.txt",
                           {"STATESCOPE_DATA=" + f.data_root}}};
  c[{"attention", "-o"}] = {
      {{"attention", "--model", f.model, "--data", f.data, "--length", "16", "-o", f.data, "--overwrite"}, f.data},
      {{"attention", "--model", f.model, "--length", "16", "-o", weights, "--overwrite"}, weights}};
  c[{"report", "-o"}] = {{{"report", f.h5, "-o", f.h5, "--overwrite"}, f.h5}};
  c[{"data", "--cache"}] = {{{"data", "--data", f.data, "--cache", f.dir}, f.data},
                            {{"data", "--data", f.corpus_dir, "--cache", f.corpus_dir + "/tokens"}, f.data}};
  return c;
}

// The key a case table uses for an option: "-o" when the option has it, else its long name.
std::string key_of(const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (n == "-o") return n;
  for (const auto& n : names)
    if (kWriters.count(n)) return n;
  return names.front();
}

bool refused_as_input(const std::string& out) {
  for (const char* phrase : {"one of the run's inputs", "inside the model folder being written", "token cache",
                             "one of its inputs"})
    if (out.find(phrase) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(OutputFlags, EveryWritingFlagOfEveryVerbRefusesAnInputOfItsCommand) {
  const Fixture f = make_fixture();
  const auto table = cases(f);
  const auto vs = verbs();
  ASSERT_GE(vs.size(), 15u) << "the verbs were not read from --help";
  std::set<std::pair<std::string, std::string>> found;
  for (const auto& verb : vs) {
    for (const auto& [names, line] : options(verb)) {
      const std::string key = key_of(names);
      const bool writer = std::any_of(names.begin(), names.end(), [](const std::string& n) { return kWriters.count(n) > 0; });
      const bool says_write = lower(line).find("writ") != std::string::npos;
      if (!writer) {
        EXPECT_TRUE(!says_write || kNotAPath.count(key)) << verb << " " << key << " says it writes but is not a known "
                                                         << "writing flag: add it to kWriters with cases, or to kNotAPath: " << line;
        continue;
      }
      found.insert({verb, key});
      EXPECT_TRUE(table.count({verb, key})) << verb << " " << key << " writes, and no case here points it at an input";
    }
  }
  for (const auto& [flag, list] : table) {
    EXPECT_TRUE(found.count(flag)) << flag.first << " " << flag.second << ": a case for a flag --help does not list";
    for (const auto& c : list) {
      const std::string before = bytes_of(c.target);
      ASSERT_FALSE(before.empty()) << c.target;
      const Result r = cli(c.args, c.env, 120);
      std::string shown;
      for (const auto& a : c.args) shown += a + " ";
      EXPECT_EQ(r.code, 1) << shown << "\n" << r.out;
      EXPECT_TRUE(refused_as_input(r.out)) << shown << "\n" << r.out;
      EXPECT_EQ(bytes_of(c.target), before) << shown << ": " << c.target << " changed";
    }
  }
}

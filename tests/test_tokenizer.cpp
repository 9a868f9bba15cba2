// test_tokenizer.cpp — the byte-level BPE reproduces the `tokenizers` library exactly on 1.2 MB of
// text with Unicode in many scripts, NFC compositions, digits, whitespace runs and special tokens
// (golden ids from tests/golden/make_tokenizer_golden.py); decode inverts encode; the GPT-2
// pre-tokenizer regex is followed on hand-made cases; unsupported files are refused by field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/base/error.h"
#include "core/data/tokenizer.h"

using namespace statescope;
namespace fs = std::filesystem;

namespace {
const std::string kDir = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/tokenizer";
std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
}  // namespace

TEST(Tokenizer, PreTokenizerFollowsTheGpt2Regex) {
  using V = std::vector<std::string>;
  EXPECT_EQ(BpeTokenizer::pre_tokenize("Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(BpeTokenizer::pre_tokenize("it's we're I've"), (V{"it", "'s", " we", "'re", " I", "'ve"}));
  EXPECT_EQ(BpeTokenizer::pre_tokenize("DON'T"), (V{"DON", "'", "T"}));  // contractions are lower case only
  EXPECT_EQ(BpeTokenizer::pre_tokenize("a   b"), (V{"a", "  ", " b"}));  // \s+(?!\S) leaves one space
  EXPECT_EQ(BpeTokenizer::pre_tokenize("a\n\nb"), (V{"a", "\n", "\n", "b"}));
  EXPECT_EQ(BpeTokenizer::pre_tokenize("x  "), (V{"x", "  "}));
  EXPECT_EQ(BpeTokenizer::pre_tokenize("3.14 abc123"), (V{"3", ".", "14", " abc", "123"}));
  EXPECT_EQ(BpeTokenizer::pre_tokenize("?!'s"), (V{"?!'", "s"}));
  EXPECT_EQ(BpeTokenizer::pre_tokenize("naïve 日本"), (V{"naïve", " 日本"}));
}

TEST(Tokenizer, MatchesTheTokenizersLibraryOnAMegabyteOfText) {
  auto tok = BpeTokenizer::from_file(kDir + "/tokenizer.json");
  const std::string text = slurp(kDir + "/text.txt");
  const std::string raw = slurp(kDir + "/ids.u16");
  ASSERT_GE(text.size(), 1000000u);
  std::vector<int32_t> want(raw.size() / 2);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] = static_cast<uint8_t>(raw[2 * i]) | (static_cast<uint8_t>(raw[2 * i + 1]) << 8);
  const auto got = tok->encode(text);
  size_t first = 0;
  while (first < std::min(got.size(), want.size()) && got[first] == want[first]) ++first;
  if (first < std::max(got.size(), want.size())) {
    std::string ctx;
    for (size_t k = first; k < std::min(first + 8, want.size()); ++k) ctx += std::to_string(want[k]) + " ";
    ctx += "| ours: ";
    for (size_t k = first; k < std::min(first + 8, got.size()); ++k) ctx += std::to_string(got[k]) + " ";
    FAIL() << "first difference at token " << first << " of " << want.size() << " (ours " << got.size() << "): " << ctx
           << " near text '" << tok->decode(std::vector<int32_t>(want.begin() + std::max<size_t>(first, 5) - 5,
                                                                 want.begin() + std::min(first + 5, want.size())))
           << "'";
  }
  EXPECT_EQ(tok->eos_id(), 0);
  EXPECT_EQ(tok->token_id("<|padding|>"), 1);
  EXPECT_EQ(tok->vocab_size(), 4003);
}

TEST(Tokenizer, DecodeInvertsEncode) {
  auto tok = BpeTokenizer::from_file(kDir + "/tokenizer.json");
  for (const std::string s : std::vector<std::string>{"plain ASCII text.", "  spaces   and\ttabs\n\n", "café 日本語 🙂 ½", "<|endoftext|>doc two",
                              std::string(40, ' ') + "x"}) {
    EXPECT_EQ(tok->decode(tok->encode(s)), s) << s;
  }
  EXPECT_EQ(tok->encode("a<|endoftext|>b")[1], 0);  // special tokens are split out, never merged
  EXPECT_THROW(tok->decode({999999}), Error);
  ByteTokenizer b;
  EXPECT_EQ(b.decode(b.encode("bytes \xff\x01")), "bytes \xff\x01");
}

TEST(Tokenizer, RefusesWhatItCannotReproduce) {
  const std::string good = slurp(kDir + "/tokenizer.json");
  const auto tmp = (fs::temp_directory_path() / "statescope_tok.json").string();
  auto expect = [&](const std::string& from, const std::string& to, const std::string& frag) {
    std::string s = good;
    const size_t at = s.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    s.replace(at, from.size(), to);
    std::ofstream(tmp) << s;
    try {
      BpeTokenizer::from_file(tmp);
      FAIL() << "accepted " << to;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(frag), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(tmp), std::string::npos) << e.what();
    }
  };
  expect("\"type\": \"BPE\"", "\"type\": \"WordPiece\"", "model.type");
  expect("\"type\": \"NFC\"", "\"type\": \"NFKC\"", "normalizer");
  expect("\"add_prefix_space\": false", "\"add_prefix_space\": true", "pre_tokenizer");
  expect("\"lstrip\": false", "\"lstrip\": true", "lstrip");
  // Ids are checked before anything is sized by them (a negative or huge id crashed the reader, and
  // 2^40 silently became 0); two tokens may not share an id.
  expect("\"!\": 2", "\"!\": -7", "model.vocab.!' id -7 is outside 0..");
  expect("\"!\": 2", "\"!\": 3000000000", "id 3000000000 is outside");
  expect("\"!\": 2", "\"!\": 1099511627776", "id 1099511627776 is outside");
  expect("\"!\": 2", "\"!\": 2.5", "must be an integer id");
  expect("\"!\": 2", "\"!\": 1", "id 1 is already the id of");
  expect("\"id\": 1,", "\"id\": -1,", "added_tokens[1].id");
  expect("\"merges\": [", "\"merges\": 5, \"x\": [", "model.merges' must be a list");
  // A number too large for a double is a JSON error with the file's name, not an uncaught
  // nlohmann out_of_range (found by fuzzing: tests/fuzz/regressions/fuzz_tokenizer/).
  expect("\"!\": 2", "\"!\": 3e477", "not valid JSON");
  // A field of the wrong JSON type is an Error naming the file, not an uncaught type_error (fuzzing).
  expect("\"pre_tokenizer\": {", "\"pre_tokenizer\": null, \"unused\": {", "not a tokenizer.json this reader understands");
  EXPECT_THROW(BpeTokenizer::from_file("/no/such/tokenizer.json"), Error);
  EXPECT_EQ(load_tokenizer("/tmp")->kind(), "bytes");
  EXPECT_EQ(load_tokenizer(kDir)->kind(), "bpe");
}

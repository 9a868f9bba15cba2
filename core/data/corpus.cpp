// corpus.cpp — loading and splitting text corpora.
#include "core/data/corpus.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/error.h"
#include "core/base/paths.h"
#include "core/base/file_io.h"

namespace statescope {
namespace fs = std::filesystem;
namespace {

std::string read_file(const std::string& path) {
  require_regular_file(path, "text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open text file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

int64_t count(const std::vector<Document>& d) {
  int64_t n = 0;
  for (auto& x : d) n += static_cast<int64_t>(x.tokens.size());
  return n;
}

}  // namespace

int64_t Corpus::train_tokens() const { return count(train); }
int64_t Corpus::validation_tokens() const { return count(validation); }

std::vector<int32_t> encode_bytes(const std::string& text) {
  std::vector<int32_t> t(text.size());
  for (size_t i = 0; i < text.size(); ++i) t[i] = static_cast<unsigned char>(text[i]);
  return t;
}

std::string decode_bytes(const TokenSpan& tokens) {
  std::string s(tokens.size(), '\0');
  for (size_t i = 0; i < tokens.size(); ++i) s[i] = static_cast<char>(tokens[i] & 0xff);
  return s;
}

std::string decode_bytes(const std::vector<int32_t>& tokens) {
  std::string s(tokens.size(), '\0');
  for (size_t i = 0; i < tokens.size(); ++i) s[i] = static_cast<char>(tokens[i] & 0xff);
  return s;
}

Corpus load_austen(const std::string& path, const std::string& validation_novel) {
  static const std::vector<std::string> kTitles{"EMMA", "MANSFIELD PARK", "NORTHANGER ABBEY", "Persuasion",
                                                "PRIDE AND PREJUDICE", "SENSE AND SENSIBILITY"};
  if (std::find(kTitles.begin(), kTitles.end(), validation_novel) == kTitles.end())
    throw Error("validation novel '" + validation_novel + "' is not one of the six titles");
  const auto lines = split_lines(read_file(path));
  Corpus c;
  c.source = path;
  std::string novel, chapter = "front matter", buf;
  int found = 0;
  auto flush = [&] {
    if (!novel.empty() && buf.find_first_not_of(" \n\r\t") != std::string::npos) {
      Document d{novel + "/" + chapter, encode_bytes(buf)};
      (novel == validation_novel ? c.validation : c.train).push_back(std::move(d));
    }
    buf.clear();
  };
  for (const auto& line : lines) {
    std::string t = line;
    while (!t.empty() && (t.back() == ' ' || t.back() == '\r')) t.pop_back();
    if (std::find(kTitles.begin(), kTitles.end(), t) != kTitles.end()) {
      flush();
      novel = t;
      chapter = "front matter";
      ++found;
    } else if (t.rfind("CHAPTER ", 0) == 0 || t.rfind("Chapter ", 0) == 0) {
      flush();
      chapter = t;
    }
    buf += line;
    buf += '\n';
  }
  flush();
  c.train_documents = static_cast<int64_t>(c.train.size());
  c.validation_documents = static_cast<int64_t>(c.validation.size());
  if (found != 6)
    throw Error(path + ": expected the six novel title lines, found " + std::to_string(found));
  return c;
}

std::string default_corpus_path() {
  const std::string path = data_path("corpus/austen-novels.txt");
  if (!fs::exists(path))
    throw Error(path + ": embedded corpus not found (" + data_dir_searched() + ")");
  return path;
}

}  // namespace statescope

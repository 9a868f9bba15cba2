// tokenizer.cpp — byte tokenizer and byte-level BPE from tokenizer.json (see tokenizer.h).
#include "core/data/tokenizer.h"

#if STATESCOPE_HAVE_ICU
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>
#endif


#include <cstdio>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/base/error.h"
#include "core/base/json_error.h"
#include "core/base/file_io.h"
#include "core/base/hub_cache.h"

namespace statescope {
#if STATESCOPE_HAVE_ICU
namespace {

using nlohmann::json;

// GPT-2's reversible byte -> unicode map: printable bytes map to themselves, the rest to 256 + n.
std::vector<std::string> byte_to_unicode() {
  std::vector<std::string> out(256);
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    const bool keep = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    const UChar32 cp = keep ? b : 256 + n++;
    char buf[4];
    int32_t len = 0;
    UBool err = false;
    U8_APPEND(reinterpret_cast<uint8_t*>(buf), len, 4, cp, err);
    out[b] = std::string(buf, len);
  }
  return out;
}

const std::vector<std::string>& b2u() {
  static const std::vector<std::string> m = byte_to_unicode();
  return m;
}

const std::unordered_map<UChar32, uint8_t>& u2b() {
  static const std::unordered_map<UChar32, uint8_t> m = [] {
    std::unordered_map<UChar32, uint8_t> r;
    for (int b = 0; b < 256; ++b) {
      int32_t i = 0;
      UChar32 c;
      U8_NEXT(reinterpret_cast<const uint8_t*>(b2u()[b].data()), i, static_cast<int32_t>(b2u()[b].size()), c);
      r[c] = static_cast<uint8_t>(b);
    }
    return r;
  }();
  return m;
}

enum Cls : uint8_t { kL, kN, kS, kO };  // letter, number, white space, other

Cls classify(UChar32 c) {
  if (c < 128) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return kL;
    if (c >= '0' && c <= '9') return kN;
    if (c == ' ' || (c >= 9 && c <= 13)) return kS;
    return kO;
  }
  if (u_isUWhiteSpace(c)) return kS;
  switch (u_charType(c)) {
    case U_UPPERCASE_LETTER: case U_LOWERCASE_LETTER: case U_TITLECASE_LETTER: case U_MODIFIER_LETTER:
    case U_OTHER_LETTER:
      return kL;
    case U_DECIMAL_DIGIT_NUMBER: case U_LETTER_NUMBER: case U_OTHER_NUMBER:
      return kN;
    default:
      return kO;
  }
}

uint64_t pair_key(int32_t a, int32_t b) { return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b); }

std::string nfc(const std::string& s) {
  bool ascii = true;
  for (unsigned char c : s) ascii &= c < 128;
  if (ascii) return s;  // NFC leaves ASCII alone
  UErrorCode st = U_ZERO_ERROR;
  const icu::Normalizer2* n = icu::Normalizer2::getNFCInstance(st);
  if (U_FAILURE(st)) throw Error("tokenizer: ICU NFC normalizer unavailable");
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(s);
  if (n->isNormalized(u, st)) return s;
  icu::UnicodeString r = n->normalize(u, st);
  std::string out;
  r.toUTF8String(out);
  return out;
}

}  // namespace
#endif

std::vector<int32_t> ByteTokenizer::encode(const std::string& text) const {
  return std::vector<int32_t>(reinterpret_cast<const unsigned char*>(text.data()),
                              reinterpret_cast<const unsigned char*>(text.data()) + text.size());
}

std::string ByteTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string s;
  s.reserve(ids.size());
  for (auto i : ids) {
    if (i < 0 || i > 255) throw Error("byte tokenizer: id " + std::to_string(i) + " is not a byte");
    s += static_cast<char>(i);
  }
  return s;
}

#if STATESCOPE_HAVE_ICU
std::vector<std::string> BpeTokenizer::pre_tokenize(const std::string& text) {
  // Code points with their byte offsets and classes.
  std::vector<int32_t> off;
  std::vector<UChar32> cp;
  std::vector<Cls> cls;
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t n8 = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < n8;) {
    off.push_back(i);
    UChar32 c;
    U8_NEXT(p, i, n8, c);
    if (c < 0) c = 0xFFFD;  // invalid UTF-8: its bytes still travel as one "other" char
    cp.push_back(c);
    cls.push_back(classify(c));
  }
  off.push_back(n8);
  const size_t n = cp.size();
  std::vector<std::string> out;
  auto emit = [&](size_t a, size_t b) { out.emplace_back(text.substr(off[a], off[b] - off[a])); };
  for (size_t i = 0; i < n;) {
    // 's 't 're 've 'm 'll 'd
    if (cp[i] == '\'' && i + 1 < n) {
      const UChar32 a = cp[i + 1];
      if (a == 's' || a == 't' || a == 'm' || a == 'd') { emit(i, i + 2); i += 2; continue; }
      if (i + 2 < n) {
        const UChar32 b = cp[i + 2];
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) { emit(i, i + 3); i += 3; continue; }
      }
    }
    // " ?\p{L}+" | " ?\p{N}+" | " ?[^\s\p{L}\p{N}]+"
    size_t k = (cp[i] == ' ' && i + 1 < n) ? i + 1 : i;
    if (cls[k] != kS) {
      const Cls c = cls[k];
      while (k < n && cls[k] == c) ++k;
      emit(i, k);
      i = k;
      continue;
    }
    // "\s+(?!\S)" | "\s+"
    size_t m = i;
    while (m < n && cls[m] == kS) ++m;
    const size_t end = (m < n && m - i >= 2) ? m - 1 : m;
    emit(i, end);
    i = end;
  }
  return out;
}

// Reads tokenizer.json field by field, each with its own error; a flat list of checks is easier to
// audit than the same checks spread over helpers (~80 lines on purpose).
std::unique_ptr<BpeTokenizer> BpeTokenizer::from_file(const std::string& path) try {
  const std::string text = read_file_bounded(path, kMaxJsonBytes, "tokenizer");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 3e477
    throw Error(path + ": " + json_error_text(e));
  }
  auto bad = [&](const std::string& field, const std::string& why) { return Error(path + ": field '" + field + "' " + why); };
  const json& m = j.value("model", json::object());
  if (m.value("type", std::string()) != "BPE") throw bad("model.type", "must be \"BPE\" (got " + m.value("type", json()).dump() + ")");
  for (const char* k : {"continuing_subword_prefix", "end_of_word_suffix", "unk_token", "dropout"})
    if (m.contains(k) && !m[k].is_null()) throw bad(std::string("model.") + k, "is not supported for byte-level BPE (got " + m[k].dump() + ")");
  if (m.value("byte_fallback", false)) throw bad("model.byte_fallback", "is not supported");
  auto t = std::make_unique<BpeTokenizer>();
  {
    uint64_t h = 1469598103934665603ull;  // FNV-1a of the file: the tokenizer's identity for token caches
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    char buf[32];
    std::snprintf(buf, sizeof buf, "bpe-%016llx", static_cast<unsigned long long>(h));
    t->fingerprint_ = buf;
  }
  t->ignore_merges_ = m.value("ignore_merges", false);
  const json& norm = j.value("normalizer", json());
  if (!norm.is_null()) {
    if (norm.value("type", std::string()) != "NFC") throw bad("normalizer", "must be null or NFC (got " + norm.dump() + ")");
    t->nfc_ = true;
  }
  const json& pre = j.value("pre_tokenizer", json());
  if (pre.value("type", std::string()) != "ByteLevel" || pre.value("add_prefix_space", false) || !pre.value("use_regex", true))
    throw bad("pre_tokenizer", "must be ByteLevel with add_prefix_space false and use_regex true (got " + pre.dump() + ")");
  const json& dec = j.value("decoder", json());
  if (!dec.is_null() && dec.value("type", std::string()) != "ByteLevel") throw bad("decoder", "must be ByteLevel (got " + dec.dump() + ")");
  if (!m.contains("vocab") || !m["vocab"].is_object()) throw bad("model.vocab", "must be an object {token: id}");
  const json& added = j.value("added_tokens", json::array());
  if (!added.is_array()) throw bad("added_tokens", "must be a list");
  // Ids are dense in every real tokenizer: each must be below the number of entries the file holds,
  // which bounds the id table by the file's own size before anything is allocated.
  const int64_t entries = static_cast<int64_t>(m["vocab"].size() + added.size());
  auto read_id = [&](const json& v, const std::string& field) -> int32_t {
    if (!v.is_number_integer()) throw bad(field, "must be an integer id (got " + v.dump() + ")");
    const int64_t i = v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX) ? -1 : v.get<int64_t>();
    if (i < 0 || i >= entries)
      throw bad(field, "id " + v.dump() + " is outside 0.." + std::to_string(entries - 1) + " (the file holds " +
                           std::to_string(entries) + " entries)");
    return static_cast<int32_t>(i);
  };
  t->id_to_token_.resize(static_cast<size_t>(entries));
  std::vector<bool> taken(static_cast<size_t>(entries), false);
  auto claim = [&](int32_t id, const std::string& content, const std::string& field) {
    if (taken[id] && t->id_to_token_[id] != content)
      throw bad(field, "id " + std::to_string(id) + " is already the id of " + json(t->id_to_token_[id]).dump());
    taken[id] = true;
    t->id_to_token_[id] = content;
  };
  int32_t max_id = -1;
  for (auto& [tok, id] : m["vocab"].items()) {
    const int32_t i = read_id(id, "model.vocab." + tok);
    t->vocab_[tok] = i;
    claim(i, tok, "model.vocab." + tok);
    max_id = std::max(max_id, i);
  }
  for (int b = 0; b < 256; ++b) {
    auto it = t->vocab_.find(b2u()[b]);
    if (it == t->vocab_.end()) throw bad("model.vocab", "lacks the byte-level symbol for byte " + std::to_string(b));
    t->byte_id_[b] = it->second;
  }
  if (!m.contains("merges") || !m["merges"].is_array()) throw bad("model.merges", "must be a list");
  int32_t rank = 0;
  for (const json& mg : m["merges"]) {
    std::string a, b;
    if (mg.is_array() && mg.size() == 2 && mg[0].is_string() && mg[1].is_string()) {
      a = mg[0].get<std::string>();
      b = mg[1].get<std::string>();
    } else if (mg.is_string()) {
      const std::string s = mg.get<std::string>();
      const size_t sp = s.find(' ', 1);
      if (sp == std::string::npos) throw bad("model.merges[" + std::to_string(rank) + "]", "is not \"a b\"");
      a = s.substr(0, sp);
      b = s.substr(sp + 1);
    } else {
      throw bad("model.merges[" + std::to_string(rank) + "]", "is neither [a, b] nor \"a b\"");
    }
    auto ia = t->vocab_.find(a), ib = t->vocab_.find(b), im = t->vocab_.find(a + b);
    if (ia == t->vocab_.end() || ib == t->vocab_.end() || im == t->vocab_.end())
      throw bad("model.merges[" + std::to_string(rank) + "]", "uses a token missing from the vocab: " + a + " " + b);
    t->merges_.emplace(pair_key(ia->second, ib->second), std::make_pair(rank, im->second));
    ++rank;
  }
  for (size_t k = 0; k < added.size(); ++k) {
    const json& a = added[k];
    const std::string field = "added_tokens[" + std::to_string(k) + "]";
    if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || !a.contains("id"))
      throw bad(field, "must be an object with a string 'content' and an 'id'");
    const std::string content = a["content"].get<std::string>();
    for (const char* kk : {"single_word", "lstrip", "rstrip"})
      if (a.value(kk, false)) throw bad("added_tokens (" + content + ")." + kk, "true is not supported");
    const int32_t id = read_id(a["id"], field + ".id");
    claim(id, content, field + ".id");
    max_id = std::max(max_id, id);
    t->added_.push_back({content, id, a.value("normalized", !a.value("special", false))});
    if (!content.empty()) t->added_first_[static_cast<unsigned char>(content[0])] = true;
    if (content == "<|endoftext|>" || content == "</s>" || content == "<|end_of_text|>") t->eos_ = id;
  }
  t->id_to_token_.resize(static_cast<size_t>(max_id + 1));  // ids past the highest one were never claimed
  t->vocab_size_ = static_cast<int64_t>(t->id_to_token_.size());
  return t;
} catch (const json::exception& e) {  // a field of the wrong JSON type (.value() on a list, ...)
  throw Error(path + ": not a tokenizer.json this reader understands (" + e.what() + ")");
}

int32_t BpeTokenizer::token_id(const std::string& token) const {
  for (auto& a : added_)
    if (a.content == token) return a.id;
  auto it = vocab_.find(token);
  return it == vocab_.end() ? -1 : it->second;
}

void BpeTokenizer::bpe_word(const std::string& word, std::vector<int32_t>& out) const {
  {
    std::lock_guard<std::mutex> g(cache_mu_);  // one tokenizer may serve several jobs' threads
    if (auto it = cache_.find(word); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> sym;
  sym.reserve(word.size());
  for (unsigned char c : word) sym.push_back(byte_id_[c]);
  bool whole = false;
  if (ignore_merges_) {
    std::string mapped;
    for (unsigned char c : word) mapped += b2u()[c];
    if (auto it = vocab_.find(mapped); it != vocab_.end()) sym.assign(1, it->second), whole = true;
  }
  while (!whole && sym.size() > 1) {
    int32_t best = std::numeric_limits<int32_t>::max(), merged = -1;
    uint64_t best_key = 0;
    for (size_t i = 0; i + 1 < sym.size(); ++i) {
      auto it = merges_.find(pair_key(sym[i], sym[i + 1]));
      if (it != merges_.end() && it->second.first < best) best = it->second.first, merged = it->second.second, best_key = it->first;
    }
    if (merged < 0) break;
    size_t w = 0;
    for (size_t i = 0; i < sym.size(); ++i) {  // every occurrence, left to right
      if (i + 1 < sym.size() && pair_key(sym[i], sym[i + 1]) == best_key) {
        sym[w++] = merged;
        ++i;
      } else {
        sym[w++] = sym[i];
      }
    }
    sym.resize(w);
  }
  {
    std::lock_guard<std::mutex> g(cache_mu_);
    if (cache_.size() > 500000) cache_.clear();
    cache_.emplace(word, sym);
  }
  out.insert(out.end(), sym.begin(), sym.end());
}

void BpeTokenizer::encode_piece(const std::string& piece, std::vector<int32_t>& out) const {
  for (const auto& w : pre_tokenize(piece)) bpe_word(w, out);
}

// Splits on added tokens (leftmost, longest first); the pieces between them continue down the
// pipeline: the first pass (raw text) handles tokens with normalized = false, then normalizes the
// pieces and splits them on tokens with normalized = true, as the tokenizers library does.
void BpeTokenizer::split_added(const std::string& text, bool normalized_pass, std::vector<int32_t>& out) const {
  auto rest = [&](const std::string& piece) {
    if (piece.empty()) return;
    if (!normalized_pass) split_added(nfc_ ? nfc(piece) : piece, true, out);
    else encode_piece(piece, out);
  };
  size_t start = 0, i = 0;
  while (i < text.size()) {
    if (!added_first_[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    const Added* hit = nullptr;
    for (const auto& a : added_)
      if (a.normalized == normalized_pass && !a.content.empty() && (!hit || a.content.size() > hit->content.size()) &&
          text.compare(i, a.content.size(), a.content) == 0)
        hit = &a;
    if (!hit) {
      ++i;
      continue;
    }
    rest(text.substr(start, i - start));
    out.push_back(hit->id);
    i += hit->content.size();
    start = i;
  }
  rest(text.substr(start));
}

std::vector<int32_t> BpeTokenizer::encode(const std::string& text) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3);
  split_added(text, false, out);
  return out;
}

std::string BpeTokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string s;
  for (int32_t id : ids) {
    if (id < 0 || id >= static_cast<int32_t>(id_to_token_.size()))
      throw Error("tokenizer: id " + std::to_string(id) + " is outside the vocabulary (" + std::to_string(id_to_token_.size()) + ")");
    const std::string& t = id_to_token_[id];
    std::string bytes;
    bool mapped = true;
    const auto* p = reinterpret_cast<const uint8_t*>(t.data());
    for (int32_t i = 0, n = static_cast<int32_t>(t.size()); i < n && mapped;) {
      UChar32 c;
      U8_NEXT(p, i, n, c);
      auto it = u2b().find(c);
      if (it == u2b().end()) mapped = false;
      else bytes += static_cast<char>(it->second);
    }
    s += mapped ? bytes : t;  // tokens outside the byte alphabet (added tokens) decode as written
  }
  return s;
}

#else  // built without ICU (the GPU machine has no libicu-dev): BPE is refused by name
namespace {
const char* kNoIcu = "this statescope was built without ICU (libicu-dev), so byte-level BPE tokenizers are unavailable";
}
std::vector<std::string> BpeTokenizer::pre_tokenize(const std::string&) { throw Error(kNoIcu); }
std::unique_ptr<BpeTokenizer> BpeTokenizer::from_file(const std::string& path) { throw Error(path + ": " + kNoIcu); }
int32_t BpeTokenizer::token_id(const std::string&) const { return -1; }
void BpeTokenizer::bpe_word(const std::string&, std::vector<int32_t>&) const { throw Error(kNoIcu); }
void BpeTokenizer::encode_piece(const std::string&, std::vector<int32_t>&) const { throw Error(kNoIcu); }
void BpeTokenizer::split_added(const std::string&, bool, std::vector<int32_t>&) const { throw Error(kNoIcu); }
std::vector<int32_t> BpeTokenizer::encode(const std::string&) const { throw Error(kNoIcu); }
std::string BpeTokenizer::decode(const std::vector<int32_t>&) const { throw Error(kNoIcu); }
#endif

std::string companion_tokenizer(const std::string& model_dir) {
  // The official Mamba checkpoints (state-spaces/mamba-*, mamba2-*) ship config.json and weights only;
  // their README loads the tokenizer of EleutherAI/gpt-neox-20b, as mamba_ssm's own scripts do.
  const std::string dir = std::filesystem::path(model_dir).lexically_normal().generic_string();
  if (dir.find("/models--state-spaces--") == std::string::npos || dir.find("/snapshots/") == std::string::npos) return "";
  const std::string id = "EleutherAI/gpt-neox-20b";
  std::string where;
  try {
    where = resolve_hub_snapshot(id).dir + "/tokenizer.json";
  } catch (const Error& e) {
    throw Error(model_dir + ": the state-spaces checkpoints ship no tokenizer.json and use " + id +
                "'s, which the Hugging Face cache lacks (" + e.what() + "); `huggingface-cli download " + id +
                " tokenizer.json` fetches only that file");
  }
  if (!std::filesystem::exists(where))
    throw Error(model_dir + ": the state-spaces checkpoints use " + id + "'s tokenizer.json, and the cached " + id +
                " has none (" + where + "); `huggingface-cli download " + id + " tokenizer.json` fetches it");
  return where;
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_dir) {
  const auto p = std::filesystem::path(model_dir) / "tokenizer.json";
  if (std::filesystem::exists(p)) return BpeTokenizer::from_file(p.string());
  if (const std::string c = companion_tokenizer(model_dir); !c.empty()) return BpeTokenizer::from_file(c);
  return std::make_unique<ByteTokenizer>();
}

}  // namespace statescope

// dataset.cpp — streaming tokenization of folders, JSON Lines, text and token files into a
// memory-mapped cache (see dataset.h for the rules).
#include "core/data/dataset.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/base/contained.h"
#include "core/base/error.h"
#include "core/base/json_error.h"
#include "core/base/file_io.h"
#include "core/base/hub_cache.h"
#include "core/data/compressed.h"
#include "core/data/parquet.h"

namespace statescope {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kFormat = kTokenCacheFormat;

enum class Kind { WholeFile, TextFile, Jsonl, Parquet, U16, U32 };

struct SourceFile {
  fs::path path;
  std::string rel;  // name used in document names
  int64_t size = 0;
  int64_t mtime = 0;
  Kind kind = Kind::TextFile;
  Compression compression = Compression::None;  // .gz / .xz / .zst: read through a decompressing stream
};

uint64_t fnv(uint64_t h, const std::string& s) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull;  // separator, so ("ab","c") != ("a","bc")
}

SourceFile describe(const fs::path& p, const std::string& rel, Kind kind) {
  SourceFile f;
  f.path = p;
  f.rel = rel;
  f.kind = kind;
  f.compression = compression_of(p.string());
  std::error_code ec;
  f.size = static_cast<int64_t>(fs::file_size(p, ec));
  if (ec) throw Error(p.string() + ": cannot read file size: " + ec.message());
  f.mtime = static_cast<int64_t>(fs::last_write_time(p, ec).time_since_epoch().count());
  return f;
}

// The extension that says a file's kind, under any compression: "pile.jsonl.zst" -> ".jsonl".
std::string inner_ext(const fs::path& p) { return fs::path(strip_compression(p.string())).extension().string(); }

std::vector<SourceFile> list_sources(const std::string& data) {
  std::vector<SourceFile> out;
  std::error_code ec;
  if (fs::is_directory(data, ec)) {
    // Never outside the folder named (a cache snapshot's bound is its repository, where its blobs are).
    const std::string repo = hub_repo_of_snapshot(data);
    walk_within(data, [&](const fs::path& p, const std::string& rel) {
      const auto ext = inner_ext(p);
      if (ext == ".parquet" && compression_of(p.string()) != Compression::None) return;
      if (ext != ".txt" && ext != ".jsonl" && ext != ".parquet") return;
      out.push_back(describe(p, rel, ext == ".jsonl" ? Kind::Jsonl : ext == ".parquet" ? Kind::Parquet : Kind::WholeFile));
    }, 1'000'000, repo);
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.rel < b.rel; });
    if (out.empty())
      throw Error(data + ": the folder holds no .txt or .jsonl files (plain, .gz, .xz or .zst) and no .parquet files");
  } else if (fs::is_regular_file(data, ec)) {
    const auto ext = inner_ext(data);
    const Kind k = ext == ".jsonl" ? Kind::Jsonl : ext == ".parquet" ? Kind::Parquet : ext == ".u16" ? Kind::U16
                 : ext == ".u32" ? Kind::U32 : Kind::TextFile;
    out.push_back(describe(data, fs::path(data).filename().string(), k));
    if (k == Kind::Parquet && out.back().compression != Compression::None)
      throw Error(data + ": a Parquet file compresses its own columns; give the .parquet file itself");
    if ((k == Kind::U16 || k == Kind::U32) && out.back().compression != Compression::None)
      throw Error(data + ": compressed token files are not read; decompress it first (" +
                  compression_name(out.back().compression) + ")");
  } else {
    require_regular_file(data, "data");  // says what it is instead: missing, a FIFO, a device
  }
  return out;
}

// One split's token file and its packed spans.
class SplitWriter {
 public:
  SplitWriter(const fs::path& path, int width, int64_t pack) : path_(path), width_(width), pack_(pack), f_(path.string()) {}
  void add(const std::string& name, const std::vector<int32_t>& ids) {
    const auto n = static_cast<int64_t>(ids.size());
    if (width_ == 2) {
      buf16_.assign(ids.begin(), ids.end());
      put(buf16_.data(), buf16_.size() * 2);
    } else {
      put(ids.data(), ids.size() * 4);
    }
    if (n >= pack_) close_span();  // a long document stands alone
    if (open_docs_ == 0) {
      open_start_ = tokens_;
      open_name_ = name;
    }
    ++open_docs_;
    tokens_ += n;
    ++documents_;
    if (tokens_ - open_start_ >= pack_) close_span();
  }
  void finish() {
    close_span();
    f_.close();
  }
  int64_t documents() const { return documents_; }
  json index() const { return {{"tokens", tokens_}, {"documents", documents_}, {"spans", spans_}}; }

 private:
  void put(const void* p, size_t bytes) {
    f_.write(p, bytes);  // every write checked: a full disk is an Error naming the token file
  }
  void close_span() {
    if (open_docs_ == 0) return;
    std::string name = open_name_;
    if (open_docs_ > 1) name += " (+" + std::to_string(open_docs_ - 1) + " documents)";
    spans_.push_back(json::array({open_start_, tokens_ - open_start_, name}));
    open_docs_ = 0;
  }
  fs::path path_;
  int width_;
  int64_t pack_;
  FileWriter f_;
  std::vector<uint16_t> buf16_;
  int64_t tokens_ = 0, documents_ = 0, open_start_ = 0, open_docs_ = 0;
  std::string open_name_;
  json spans_ = json::array();
};

// Routes documents by order; holds the latest training document back so that, if the source ends
// before any validation document, that one validates instead.
class Router {
 public:
  Router(SplitWriter& train, SplitWriter& val, int val_every) : train_(train), val_(val), every_(val_every) {}
  void add(std::string name, std::vector<int32_t> ids) {
    if (ids.empty()) return;
    if (seen_ % every_ == every_ - 1) {
      val_.add(name, ids);
    } else {
      if (has_pending_) train_.add(pending_name_, pending_);
      pending_name_ = std::move(name);
      pending_ = std::move(ids);
      has_pending_ = true;
    }
    ++seen_;
  }
  void finish(const std::string& data) {
    if (has_pending_) (val_.documents() == 0 ? val_ : train_).add(pending_name_, pending_);
    if (train_.documents() == 0 || val_.documents() == 0)
      throw Error(data + ": need at least two non-empty documents to split into train and validation; found " +
                  std::to_string(seen_));
  }

 private:
  SplitWriter &train_, &val_;
  int every_;
  int64_t seen_ = 0;
  bool has_pending_ = false;
  std::string pending_name_;
  std::vector<int32_t> pending_;
};

std::string read_whole(const SourceFile& f, uint64_t max_bytes) {
  ByteStream in(f.path.string(), f.compression, max_bytes);
  std::string text;
  std::vector<char> chunk(1 << 20);
  for (size_t got; (got = in.read(chunk.data(), chunk.size())) > 0;) text.append(chunk.data(), got);
  return text;
}

class Ingest {
 public:
  Ingest(const Tokenizer& tok, const DataOptions& o, Router& r, const DataProgressFn& progress, int64_t total)
      : tok_(tok), o_(o), r_(r), progress_(progress), total_(total) {}

  void file(const SourceFile& f) {
    switch (f.kind) {
      case Kind::WholeFile: text_doc(f.rel, read_whole(f, o_.max_decompressed)); break;
      case Kind::TextFile: text_file(f); break;
      case Kind::Jsonl: jsonl(f); break;
      case Kind::Parquet: parquet(f); break;
      case Kind::U16: tokens(f, 2); break;
      case Kind::U32: tokens(f, 4); break;
    }
    base_ += f.size;
    report(base_);
  }

 private:
  void report(int64_t done) {
    if (progress_ && !progress_(done, total_)) throw Error("data preparation cancelled");
  }
  void text_doc(const std::string& name, const std::string& text) {
    auto ids = tok_.encode(text);
    if (!ids.empty() && tok_.eos_id() >= 0) ids.push_back(tok_.eos_id());
    r_.add(name, std::move(ids));
  }
  void text_file(const SourceFile& f) {
    ByteStream in(f.path.string(), f.compression, o_.max_decompressed);
    std::string buf;
    std::vector<char> chunk(1 << 20);
    int64_t k = 0;
    bool eof = false;
    while (true) {
      while (!eof && static_cast<int64_t>(buf.size()) < 2 * o_.doc_bytes + 2) {
        const size_t got = in.read(chunk.data(), chunk.size());
        buf.append(chunk.data(), got);
        eof = got == 0;
      }
      if (buf.empty()) break;
      size_t end = buf.size();
      if (static_cast<int64_t>(buf.size()) > o_.doc_bytes) {
        const size_t blank = buf.find("\n\n", static_cast<size_t>(o_.doc_bytes));
        if (blank != std::string::npos && blank + 2 <= static_cast<size_t>(2 * o_.doc_bytes + 2)) end = blank + 2;
        else if (!eof || buf.size() > static_cast<size_t>(2 * o_.doc_bytes + 2))
          end = static_cast<size_t>(2 * o_.doc_bytes);  // no blank line within 2 x doc_bytes: cut there (whatever was read)
      }
      text_doc(f.rel + "#" + std::to_string(k++), buf.substr(0, end));
      buf.erase(0, end);
      report(base_ + in.compressed_consumed());
    }
  }
  void jsonl(const SourceFile& f) {
    ByteStream in(f.path.string(), f.compression, o_.max_decompressed);
    std::string line;
    int64_t lineno = 0, last = 0;
    while (in.getline(line, static_cast<size_t>(o_.max_line_bytes))) {
      ++lineno;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json j;
      try {
        j = json::parse(line);
      } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 3e477
        throw Error(f.path.string() + ":" + std::to_string(lineno) + ": not a JSON object (" + e.what() + ")");
      }
      const std::string& key = o_.text_field;
      if (!j.is_object() || !j.contains(key) || !j[key].is_string())
        throw Error(f.path.string() + ":" + std::to_string(lineno) + ": needs a string field \"" + key + "\"");
      text_doc(f.rel + ":" + std::to_string(lineno), j[key].get<std::string>());
      if (in.compressed_consumed() - last > (1 << 20)) report(base_ + (last = in.compressed_consumed()));
    }
  }
  // One document per row of the text column ("<file>:<row>"), read a row group at a time.
  void parquet(const SourceFile& f) {
    read_parquet_texts(f.path.string(), o_.text_field,
                       [&](int64_t row, std::string_view text) { text_doc(f.rel + ":" + std::to_string(row), std::string(text)); },
                       [&](int done, int groups) { report(base_ + f.size * done / std::max(groups, 1)); });
  }
  void tokens(const SourceFile& f, int width) {
    const int32_t eos = tok_.eos_id();
    if (eos < 0)
      throw Error(f.path.string() + ": a pre-tokenized file needs an end-of-text id to find its documents, and the "
                  "model's tokenizer (" + tok_.kind() + ") has none; give the model a tokenizer.json");
    if (f.size % width)
      throw Error(f.path.string() + ": " + std::to_string(f.size) + " bytes is not a whole number of " +
                  std::to_string(width) + "-byte tokens");
    std::FILE* in = std::fopen(f.path.c_str(), "rb");
    if (!in) throw Error(f.path.string() + ": cannot open");
    std::vector<unsigned char> raw(static_cast<size_t>(width) << 20);
    std::vector<int32_t> doc;
    int64_t pos = 0, k = 0;
    const int64_t vocab = tok_.vocab_size();
    try {
      size_t got;
      while ((got = std::fread(raw.data(), 1, raw.size(), in)) > 0) {
        for (size_t i = 0; i + width <= got; i += width, ++pos) {
          const uint32_t v = width == 2 ? uint32_t(raw[i]) | uint32_t(raw[i + 1]) << 8
                                        : uint32_t(raw[i]) | uint32_t(raw[i + 1]) << 8 | uint32_t(raw[i + 2]) << 16 |
                                              uint32_t(raw[i + 3]) << 24;
          if (static_cast<int64_t>(v) >= vocab)
            throw Error(f.path.string() + ": token " + std::to_string(v) + " at position " + std::to_string(pos) +
                        " is outside the tokenizer's vocabulary of " + std::to_string(vocab));
          doc.push_back(static_cast<int32_t>(v));
          if (static_cast<int32_t>(v) == eos) {
            r_.add(f.rel + "#" + std::to_string(k++), std::move(doc));
            doc.clear();
          }
        }
        report(base_ + pos * width);
      }
    } catch (...) {
      std::fclose(in);
      throw;
    }
    std::fclose(in);
    if (!doc.empty()) {
      doc.push_back(eos);
      r_.add(f.rel + "#" + std::to_string(k), std::move(doc));
    }
  }

  const Tokenizer& tok_;
  const DataOptions& o_;
  Router& r_;
  const DataProgressFn& progress_;
  int64_t total_, base_ = 0;
};

std::vector<Document> documents_of(const json& split, const fs::path& file, int width) {
  auto buf = TokenBuffer::map(file.string(), width);
  if (buf->size() != split.at("tokens").get<int64_t>())
    throw Error(file.string() + ": holds " + std::to_string(buf->size()) + " tokens, its index says " +
                split.at("tokens").dump() + " (delete the cache folder to rebuild it)");
  std::vector<Document> docs;
  for (const auto& s : split.at("spans"))
    docs.push_back({s.at(2).get<std::string>(), TokenSpan(buf, s.at(0).get<int64_t>(), s.at(1).get<int64_t>())});
  return docs;
}

Corpus from_cache(const fs::path& dir, const std::string& data) {
  std::ifstream in(dir / "index.json");
  if (!in) throw Error((dir / "index.json").string() + ": cannot open");
  json idx;
  try {
    idx = json::parse(in);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 3e477
    throw Error((dir / "index.json").string() + ": " + json_error_text(e));
  }
  const int width = idx.at("width").get<int>();
  Corpus c;
  c.source = data;
  c.tokenizer = idx.at("tokenizer_kind").get<std::string>();
  c.cache = dir.string();
  c.train = documents_of(idx.at("train"), dir / "train.tok", width);
  c.validation = documents_of(idx.at("validation"), dir / "validation.tok", width);
  c.train_documents = idx.at("train").at("documents").get<int64_t>();
  c.validation_documents = idx.at("validation").at("documents").get<int64_t>();
  return c;
}

Corpus embedded(const Tokenizer& tok) {
  Corpus c = load_austen(default_corpus_path());
  if (tok.kind() == "bytes") return c;
  for (auto* split : {&c.train, &c.validation})
    for (auto& d : *split) {
      auto ids = tok.encode(decode_bytes(d.tokens));
      if (tok.eos_id() >= 0) ids.push_back(tok.eos_id());
      d.tokens = TokenSpan(std::move(ids));
    }
  c.tokenizer = tok.kind();
  return c;
}

}  // namespace

std::string resolve_data_source(const std::string& data) {
  std::error_code ec;
  if (data == "embedded" || fs::exists(data, ec) || !is_hub_id(data)) return data;
  return resolve_hub_snapshot(data, HubRepoType::Dataset).dir;
}

std::string default_cache_dir() {
  if (const char* e = std::getenv("STATESCOPE_CACHE"); e && *e) return e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/statescope/tokens";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/statescope/tokens";
  return (fs::temp_directory_path() / "statescope-tokens").string();
}

Corpus load_data(const std::string& data, const Tokenizer& tok, const DataOptions& o, const DataProgressFn& progress) {
  if (data == "embedded") return embedded(tok);
  if (o.val_every < 2) throw Error("val_every must be at least 2 (got " + std::to_string(o.val_every) + ")");
  if (o.doc_bytes < 1 || o.pack_tokens < 1) throw Error("doc_bytes and pack_tokens must be positive");
  const std::string src = resolve_data_source(data);
  const auto files = list_sources(src);

  uint64_t h = fnv(1469598103934665603ull, kFormat);
  h = fnv(h, tok.fingerprint());
  h = fnv(h, std::to_string(o.doc_bytes) + "/" + std::to_string(o.val_every) + "/" + std::to_string(o.pack_tokens));
  if (o.text_field != "text") h = fnv(h, "text_field=" + o.text_field);  // the default keeps existing caches valid
  h = fnv(h, fs::absolute(src).lexically_normal().string());  // a dataset id: its snapshot, commit included
  int64_t total = 0;
  for (auto& f : files) {
    h = fnv(h, f.rel + "|" + std::to_string(f.size) + "|" + std::to_string(f.mtime));
    total += f.size;
  }
  char key[20];
  std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(h));
  const fs::path root = o.cache_dir.empty() ? fs::path(default_cache_dir()) : fs::path(o.cache_dir);
  // The cache is an output: never the corpus folder nor inside it (its entries would sit among the
  // user's files), never a folder that holds the corpus (clearing it must not come near the data).
  if (fs::is_directory(src) && path_within(resolved(root), resolved(src)))
    throw Error(root.string() + ": the token cache would be inside the corpus folder " + src +
                "; choose a cache outside it (--cache or $STATESCOPE_CACHE)");
  if (path_within(resolved(src), resolved(root)))
    throw Error(root.string() + ": the token cache folder holds the corpus " + src + "; choose a cache folder of its own");
  const fs::path dir = root / key;
  if (fs::exists(dir / "index.json")) return from_cache(dir, data);

  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw Error(root.string() + ": cannot create the token cache folder: " + ec.message());
  const fs::path tmp = root / (std::string(key) + ".tmp-" + std::to_string(::getpid()));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) throw Error(tmp.string() + ": cannot create: " + ec.message());
  const int width = tok.vocab_size() <= 65536 ? 2 : 4;
  try {
    SplitWriter train(tmp / "train.tok", width, o.pack_tokens), val(tmp / "validation.tok", width, o.pack_tokens);
    Router router(train, val, o.val_every);
    Ingest ingest(tok, o, router, progress, total);
    for (auto& f : files) ingest.file(f);
    router.finish(data);
    train.finish();
    val.finish();
    json idx{{"format", kFormat},         {"source", fs::absolute(src).string()},
             {"tokenizer", tok.fingerprint()}, {"tokenizer_kind", tok.kind()},
             {"eos", tok.eos_id()},       {"width", width},
             {"doc_bytes", o.doc_bytes},  {"val_every", o.val_every},
             {"pack_tokens", o.pack_tokens}, {"text_field", o.text_field}, {"files", files.size()},
             {"train", train.index()},    {"validation", val.index()}};
    FileWriter out((tmp / "index.json").string());
    out.write(idx.dump(1) + "\n");
    out.close();
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  fs::rename(tmp, dir, ec);
  if (ec) {  // another process finished first: use its cache
    fs::remove_all(tmp, ec);
    if (!fs::exists(dir / "index.json")) throw Error(dir.string() + ": cannot install the token cache");
  }
  return from_cache(dir, data);
}

Corpus load_model_data(const std::string& data, const std::string& model_dir, int64_t model_vocab,
                       const DataOptions& opt, const DataProgressFn& progress) {
  std::unique_ptr<Tokenizer> tok = model_dir.empty() ? std::make_unique<ByteTokenizer>() : load_tokenizer(model_dir);
  if (tok->vocab_size() > model_vocab)
    throw Error((model_dir.empty() ? std::string("byte tokenizer") : model_dir + ": tokenizer (" + tok->kind() + ")") +
                " has " + std::to_string(tok->vocab_size()) + " ids, more than the model's vocab_size " +
                std::to_string(model_vocab));
  return load_data(data, *tok, opt, progress);
}

}  // namespace statescope

// cmd_data.cpp — `statescope-cli data --data PATH [--model DIR]`: tokenize a corpus into the token
// cache (or find it there) and print what the engine will train and evaluate on; `--list-cache`,
// `--clear-stale`, `--clear-cache`: what the cache holds on disk, and removing it. No LibTorch.
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <fstream>
#include <iostream>

#include "app/cli/commands.h"
#include "app/cli/progress.h"
#include "core/model/model_config.h"
#include "core/data/dataset.h"
#include "core/model/model_registry.h"
#include "core/data/token_cache.h"

namespace statescope::cli {
namespace {

// kB fields of /proc/self/status (VmHWM: peak resident; RssAnon: heap; RssFile: mapped file pages).
int64_t proc_kb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  return -1;
}

std::string size_str(int64_t bytes) {  // "812 KiB", "3.4 MiB", "12.0 GiB"
  std::ostringstream o;
  o << std::fixed << std::setprecision(bytes < (1 << 20) ? 0 : 1);
  if (bytes < 1024) o << bytes << " B";
  else if (bytes < (1 << 20)) o << bytes / 1024.0 << " KiB";
  else if (bytes < (int64_t{1} << 30)) o << bytes / 1048576.0 << " MiB";
  else o << bytes / 1073741824.0 << " GiB";
  return o.str();
}

// `data --list-cache / --clear-stale / --clear-cache`: one line per entry, newest first.
int cache_report(const std::string& cache_dir, int clear) {  // clear: 0 no, 1 stale, 2 all
  const std::string root = cache_dir.empty() ? default_cache_dir() : cache_dir;
  const auto entries = list_token_cache(cache_dir);
  int64_t total = 0, stale = 0;
  std::cout << "token cache " << root << ": " << entries.size() << " entries\n";
  for (auto& e : entries) {
    char when[32];
    const std::time_t t = static_cast<std::time_t>(e.made);
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", std::localtime(&t));
    std::string state = e.partial ? "partial (interrupted)" : e.source_missing ? "source gone"
                      : e.superseded ? "superseded (source edited)" : "current";
    std::cout << "  " << when << "  " << std::setw(10) << size_str(e.bytes) << "  " << std::left << std::setw(6) << (e.tokenizer.empty() ? "-" : e.tokenizer) << std::right << "  "
              << std::left << std::setw(27) << state << std::right << "  " << (e.source.empty() ? e.dir : e.source) << "\n";
    total += e.bytes;
    if (e.stale()) stale += e.bytes;
  }
  std::cout << "  " << size_str(total) << " in all, " << size_str(stale) << " stale\n";
  if (clear) {
    const int64_t freed = clear_token_cache(cache_dir, clear == 1);
    std::cout << "removed " << (clear == 1 ? "stale entries" : "every entry") << ": " << size_str(freed) << " freed\n";
  }
  return 0;
}

}  // namespace

Runner add_data(CLI::App& app, const std::string& command) {
  struct O {
    std::string data = "embedded", model, tokenizer;
    DataOptions d;
    int64_t show = 0;
    bool list_cache = false, clear_stale = false, clear_cache = false;
  };
  auto o = std::make_shared<O>();
  app.add_option("--data", o->data,
                 "'embedded', a folder (.txt = one document, .jsonl = one per line), a .jsonl file, a .u16/.u32 token "
                 "file (documents end at end-of-text), a text file, a .parquet file or a folder of Parquet shards, or a "
                 "Hugging Face dataset id in the local cache (owner/name[@revision]); text and .jsonl also compressed "
                 "(.gz, .xz, .zst: pile.jsonl.zst), streamed")->capture_default_str();
  app.add_option("--text-field", o->d.text_field, "JSON Lines field / Parquet column that holds each document")
      ->capture_default_str();
  app.add_option("--model", o->model, "model directory or Hugging Face id whose tokenizer to use (default: bytes)");
  app.add_option("--tokenizer", o->tokenizer, "or: a tokenizer.json (file or folder) to use without a model")
      ->excludes(app.get_option("--model"));
  app.add_option("--val-every", o->d.val_every, "every N-th document is validation")->capture_default_str();
  app.add_option("--doc-bytes", o->d.doc_bytes, "plain text files: document size, cut at a blank line")
      ->capture_default_str();
  app.add_option("--pack-tokens", o->d.pack_tokens, "short documents are packed into spans of this many tokens")
      ->capture_default_str();
  app.add_option("--max-decompressed", o->d.max_decompressed,
                 "compressed files: stop when one decompresses to more than this many bytes (default: 100x its "
                 "size, at least 1 GiB, at most 64 GiB, and stopped past 256 MiB when the ratio exceeds 100x)")
      ->check([](const std::string& v) {
        return v.find_first_not_of("0123456789") == std::string::npos && v.find_first_not_of('0') != std::string::npos
                   ? std::string()
                   : "must be a positive number of bytes (the guard cannot be turned off), got " + v;
      });
  app.add_option("--cache", o->d.cache_dir, "token cache folder (default: $STATESCOPE_CACHE or ~/.cache/statescope/tokens)");
  app.add_option("--show", o->show, "print the first N tokens of validation, decoded")->capture_default_str();
  auto* list = app.add_flag("--list-cache", o->list_cache, "list the token cache (source, size, date, stale or not) and stop");
  auto* stale = app.add_flag("--clear-stale", o->clear_stale,
                             "remove cache entries whose source is gone or was edited since, and interrupted ones");
  app.add_flag("--clear-cache", o->clear_cache, "remove every cache entry (they are rebuilt when needed)")
      ->excludes(stale)->excludes(list);
  return [o]() {
    if (o->list_cache || o->clear_stale || o->clear_cache)
      return cache_report(o->d.cache_dir, o->clear_cache ? 2 : o->clear_stale ? 1 : 0);
    std::string dir;
    int64_t vocab = 256;
    if (!o->model.empty()) {
      dir = resolve_model(o->model);
      vocab = vocab_size(load_model_config((std::filesystem::path(dir) / "config.json").string()));
    }
    ProgressLine line;
    const auto t0 = std::chrono::steady_clock::now();
    bool prepared = false;
    const auto progress = tokenize_progress(line, o->data, &prepared);
    std::unique_ptr<Tokenizer> tok;  // for --show
    Corpus c;
    if (!o->tokenizer.empty()) {  // a tokenizer without a model: no vocabulary to check against
      const bool folder = std::filesystem::is_directory(o->tokenizer);
      tok = BpeTokenizer::from_file(folder ? o->tokenizer + "/tokenizer.json" : o->tokenizer);
      dir = folder ? o->tokenizer : std::filesystem::path(o->tokenizer).parent_path().string();
      c = load_data(o->data, *tok, o->d, progress);
    } else {
      c = load_model_data(o->data, dir, vocab, o->d, progress);
      if (o->show > 0) tok = dir.empty() ? std::unique_ptr<Tokenizer>(new ByteTokenizer) : load_tokenizer(dir);
    }
    line.done();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "data " << o->data << "\n  tokenizer " << c.tokenizer << (dir.empty() ? "" : " (from " + dir + ")")
              << "\n  cache "
              << (c.cache.empty() ? std::string("none (embedded corpus, held in memory)")
                                  : c.cache + (prepared ? "  (prepared in " + std::to_string(secs).substr(0, 6) + " s)"
                                                        : "  (reused)"))
              << "\n"
              << "  train: " << c.train_documents << " documents, " << c.train_tokens() << " tokens in "
              << c.train.size() << " spans\n"
              << "  validation: " << c.validation_documents << " documents, " << c.validation_tokens()
              << " tokens in " << c.validation.size() << " spans\n"
              << "  memory: peak resident " << proc_kb("VmHWM") / 1024 << " MiB, heap " << proc_kb("RssAnon") / 1024
              << " MiB, mapped file pages " << proc_kb("RssFile") / 1024 << " MiB\n";
    if (o->show > 0 && !c.validation.empty()) {
      const auto& t = c.validation.front().tokens;
      std::vector<int32_t> ids(t.begin(), t.begin() + std::min<int64_t>(o->show, t.size()));
      std::cout << "  validation begins: " << tok->decode(ids) << "\n";
    }
    return 0;
  };
}

}  // namespace statescope::cli

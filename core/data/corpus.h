// corpus.h — text corpora as documents of byte-level tokens, split into train and validation by
// document (never at random byte offsets, so validation text is truly unseen). No LibTorch.
//
// The embedded corpus is byte-level text held in memory. Other data (folders, JSON Lines, token files)
// is tokenized once into a memory-mapped cache by core/data/dataset.h; its Documents are views of that.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/data/token_store.h"

namespace statescope {

struct Document {
  std::string name;   // e.g. "EMMA/CHAPTER I", a file name, or "train docs 0..811" for a packed span
  TokenSpan tokens;   // ids; a span of a mapped file or owned memory
  // Which tokens count as training targets: empty = all; else one byte per token (1: token i is
  // scored when predicted from tokens < i). Task data masks prompts and padding (answer-only loss).
  std::vector<uint8_t> loss_mask;
};

struct Corpus {
  std::string source;
  std::string tokenizer = "bytes";             // "bytes" | "bpe"
  std::string cache;                           // token cache folder ("" when held in memory)
  int64_t train_documents = 0, validation_documents = 0;  // source documents (a Document may pack many)
  std::vector<Document> train, validation;
  int64_t train_tokens() const;
  int64_t validation_tokens() const;
};

std::vector<int32_t> encode_bytes(const std::string& text);
std::string decode_bytes(const std::vector<int32_t>& tokens);
std::string decode_bytes(const TokenSpan& tokens);

// The embedded corpus (data/corpus/austen-novels.txt): novels start at their title lines, chapters
// at "CHAPTER"/"Chapter" lines; one document per chapter. The novel named `validation_novel`
// (default Persuasion) is the validation split, the other five are training text.
Corpus load_austen(const std::string& path, const std::string& validation_novel = "Persuasion");

// The embedded corpus: data_path("corpus/austen-novels.txt") (core/base/paths.h); throws when absent.
std::string default_corpus_path();

}  // namespace statescope

// corpus.h — text corpora as documents of byte-level tokens, split into train and validation by
// document (never at random byte offsets, so validation text is truly unseen). No LibTorch.
//
// Byte-level tokenizer: a token is a byte (vocab 256). statescope's own models use it; checkpoints
// with a tokenizer.json will use BPE (issue 7).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace statescope {

struct Document {
  std::string name;              // e.g. "EMMA/CHAPTER I" or a file name
  std::vector<int32_t> tokens;   // byte values 0..255
};

struct Corpus {
  std::string source;
  std::vector<Document> train, validation;
  int64_t train_tokens() const;
  int64_t validation_tokens() const;
};

std::vector<int32_t> encode_bytes(const std::string& text);
std::string decode_bytes(const std::vector<int32_t>& tokens);

// The embedded corpus (data/corpus/austen-novels.txt): novels start at their title lines, chapters
// at "CHAPTER"/"Chapter" lines; one document per chapter. The novel named `validation_novel`
// (default Persuasion) is the validation split, the other five are training text.
Corpus load_austen(const std::string& path, const std::string& validation_novel = "Persuasion");

// Any UTF-8 text: a .txt file (split at blank lines into documents of about `doc_bytes`) or a folder
// of .txt files (one document per file, sorted by name). Every `val_every`-th document (by order)
// is validation. Throws Error naming the path when nothing usable is found.
Corpus load_text(const std::string& path, int64_t doc_bytes = 32768, int val_every = 10);

// The embedded corpus path, resolved from $STATESCOPE_DATA, the source tree, or next to the binary.
std::string default_corpus_path();

}  // namespace statescope

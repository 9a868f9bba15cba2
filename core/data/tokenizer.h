// tokenizer.h — text <-> token ids. Two kinds, picked by the model directory:
//   ByteTokenizer: statescope's own models, one token per byte (ids 0..255).
//   BpeTokenizer: a Hugging Face tokenizer.json with a byte-level BPE model (GPT-NeoX / GPT-2
//   family, as used by Mamba-2): NFC (or no) normalizer, ByteLevel pre-tokenizer with the GPT-2
//   regex, byte-to-unicode mapping, merges, added and special tokens split out first. Exactly
//   what the `tokenizers` library does for these files (tests/golden/make_tokenizer_golden.py).
// No LibTorch, no Qt. Unsupported tokenizer.json features are refused naming the field.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace statescope {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  virtual std::vector<int32_t> encode(const std::string& text) const = 0;  // no special tokens added
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  virtual int64_t vocab_size() const = 0;   // largest id + 1
  virtual int32_t eos_id() const = 0;       // end-of-text separator between documents (-1: none)
  virtual std::string kind() const = 0;     // "bytes" | "bpe"
  virtual std::string fingerprint() const = 0;  // identity for token caches (hash of tokenizer.json)
};

class ByteTokenizer : public Tokenizer {
 public:
  std::vector<int32_t> encode(const std::string& text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int64_t vocab_size() const override { return 256; }
  int32_t eos_id() const override { return -1; }
  std::string kind() const override { return "bytes"; }
  std::string fingerprint() const override { return "bytes"; }
};

class BpeTokenizer : public Tokenizer {
 public:
  // Throws Error naming the file and field on anything it cannot reproduce exactly.
  static std::unique_ptr<BpeTokenizer> from_file(const std::string& tokenizer_json);
  std::vector<int32_t> encode(const std::string& text) const override;
  std::string decode(const std::vector<int32_t>& ids) const override;
  int64_t vocab_size() const override { return vocab_size_; }
  int32_t eos_id() const override { return eos_; }
  std::string kind() const override { return "bpe"; }
  std::string fingerprint() const override { return fingerprint_; }
  int32_t token_id(const std::string& token) const;  // -1 when absent

  // Pieces the ByteLevel pre-tokenizer (GPT-2 regex) cuts `text` into (exposed for tests).
  static std::vector<std::string> pre_tokenize(const std::string& text);

 private:
  struct Added {
    std::string content;
    int32_t id;
    bool normalized;
  };
  void encode_piece(const std::string& piece, std::vector<int32_t>& out) const;  // normalized, no added tokens
  void bpe_word(const std::string& word, std::vector<int32_t>& out) const;        // one pre-token
  void split_added(const std::string& text, bool normalized_pass, std::vector<int32_t>& out) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> id_to_token_;
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;  // (left, right) -> (rank, merged id)
  std::vector<Added> added_;
  bool added_first_[256] = {};  // bytes that start some added token (fast skip)
  int32_t byte_id_[256];   // vocab id of each byte's mapped character
  bool nfc_ = false, ignore_merges_ = false;
  int64_t vocab_size_ = 0;
  int32_t eos_ = -1;
  std::string fingerprint_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;  // pre-token -> ids
  mutable std::mutex cache_mu_;  // encode() is const and may run on several threads
};

// The tokenizer.json a model directory without one uses: for a cached snapshot of a state-spaces
// checkpoint (they ship none), EleutherAI/gpt-neox-20b's in the same Hugging Face cache (Error saying
// how to fetch it when it is not there); "" for any other directory.
std::string companion_tokenizer(const std::string& model_dir);

// tokenizer.json in the directory -> BpeTokenizer; else its companion_tokenizer(); else ByteTokenizer.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& model_dir);

}  // namespace statescope

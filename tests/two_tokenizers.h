// two_tokenizers.h — bytes and the BPE fixture (tests/golden/tokenizer, from `save_pretrained`): the
// two tokenizers a scorer or a prompt builder is checked with. No LibTorch.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/data/tokenizer.h"

namespace statescope::test {

struct TwoTokenizers {
  ByteTokenizer bytes;
  std::unique_ptr<Tokenizer> bpe = load_tokenizer(std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/tokenizer");
  std::vector<const Tokenizer*> all() const { return {&bytes, bpe.get()}; }
};

}  // namespace statescope::test

// bench_tokenizer.cpp — encoding speed of the BPE tokenizer on one core, cold (empty word cache)
// and warm (second pass over the same text). Usage: bench_tokenizer TOKENIZER.json TEXT [repeats]
// Prints MB/s; bench/run_tokenizer.sh sets it against the `tokenizers` library in the same run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "core/data/tokenizer.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s tokenizer.json text.txt [repeats]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  std::ifstream f(argv[2], std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(f)), {});
  double cold = 1e30, warm = 1e30;
  size_t n = 0;
  for (int r = 0; r < repeats; ++r) {
    auto tok = statescope::BpeTokenizer::from_file(argv[1]);  // fresh cache
    for (int pass = 0; pass < 2; ++pass) {
      const auto t0 = std::chrono::steady_clock::now();
      n = tok->encode(text).size();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      (pass == 0 ? cold : warm) = std::min(pass == 0 ? cold : warm, s);
    }
  }
  std::printf("statescope  %zu bytes -> %zu tokens  cold %.2f MB/s  warm %.2f MB/s\n", text.size(), n,
              text.size() / cold / 1e6, text.size() / warm / 1e6);
  return 0;
}

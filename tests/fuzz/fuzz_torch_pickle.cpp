// fuzz_torch_pickle.cpp — the weights-only reader of torch.save checkpoints, two ways. The first
// byte picks:
//   even: the rest is a whole archive (zip, as torch.save writes it), read from a file;
//   odd:  the rest is a storage table, then data.pkl: u8 n, n x (u8 key length, key, u32 LE size),
//         then the pickle. Storages are served from the table (bytes 0x3c), so the mutator reaches
//         the pickle machine without having to keep a zip's CRCs right.
// Seeds: every pytorch_model.bin in tests/golden/, both ways (bench/fuzz.sh makes the table form).
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "core/base/error.h"
#include "core/model/torch_pickle.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr uint32_t kMaxStorage = 1u << 20;  // a table entry may claim at most 1 MiB (fuzzing speed)

void check(const std::map<std::string, torch::Tensor>& sd) {
  for (auto& [name, t] : sd) {  // every tensor the reader returns must be readable end to end
    if (!t.defined() || !t.is_contiguous()) __builtin_trap();
    if (t.numel() > 0) {
      volatile const uint8_t* p = static_cast<const uint8_t*>(t.data_ptr());
      volatile uint8_t x = p[0] ^ p[t.nbytes() - 1];
      (void)x;
    }
  }
}

void from_table(const uint8_t* d, size_t n) {
  std::map<std::string, uint32_t> table;
  size_t at = 0;
  if (at >= n) return;
  const size_t entries = d[at++];
  for (size_t e = 0; e < entries; ++e) {
    if (at >= n) return;
    const size_t kl = d[at++];
    if (at + kl + 4 > n) return;
    std::string key(reinterpret_cast<const char*>(d + at), kl);
    at += kl;
    uint32_t sz;
    std::memcpy(&sz, d + at, 4);
    at += 4;
    if (sz > kMaxStorage) return;
    table[key] = sz;
  }
  const std::string pickle(reinterpret_cast<const char*>(d + at), n - at);
  auto storage = [&](const std::string& key, void* bytes) -> size_t {
    auto it = table.find(key);
    if (it == table.end()) throw statescope::Error("fuzz: no record data/" + key);
    if (bytes) std::memset(bytes, 0x3c, it->second);
    return it->second;
  };
  check(statescope::parse_state_dict_pickle(pickle, storage, "fuzz/data.pkl"));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  try {
    if (data[0] % 2 == 0)
      check(statescope::read_torch_state_dict(statescope::fuzz::write_file("pytorch_model.bin", data + 1, size - 1)));
    else
      from_table(data + 1, size - 1);
  } catch (const statescope::Error&) {
  }
  return 0;
}

// safetensors.h — a strict reader and a writer for the safetensors format, without LibTorch.
//
// File layout: u64 little-endian header length N, N bytes of JSON {name: {dtype, shape,
// data_offsets: [begin, end]}, "__metadata__": {...}}, then the data buffer; offsets are relative
// to the buffer. Every claim the header makes is checked against the file before any byte is used.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace statescope {

enum class DType { F32, F16, BF16, F64, I64, I32 };

size_t dtype_size(DType d);
const char* dtype_name(DType d);

struct TensorRecord {
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the data buffer
  int64_t numel() const;
};

struct SafetensorsFile {
  std::string path;
  std::map<std::string, TensorRecord> tensors;
  std::map<std::string, std::string> metadata;
  std::vector<char> data;  // the data buffer (file minus header)
  const char* bytes(const TensorRecord& r) const { return data.data() + r.begin; }
};

// Reads and validates a whole file. Throws Error naming the file and the tensor or field.
SafetensorsFile read_safetensors(const std::string& path);
// Parses from memory (for tests and sharded files); `source` names it in messages.
SafetensorsFile parse_safetensors(std::vector<char> file_bytes, const std::string& source);

struct TensorToWrite {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void* data;  // contiguous, numel*dtype_size bytes
};
// Writes tensors sorted by name, header padded to a multiple of 8 bytes, as the reference does.
void write_safetensors(const std::string& path, std::vector<TensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata);

}  // namespace statescope

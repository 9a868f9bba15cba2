// compressed.h — a corpus file read as a stream of bytes whatever its compression: plain, gzip
// (.gz, several members too), xz (.xz, concatenated streams too) or Zstandard (.zst, several frames
// too), decompressed through fixed buffers so memory stays flat in the file's size. No LibTorch.
//
// Errors name the file and where: a corrupt or truncated stream gives the offset in the compressed
// file; output past `max_bytes` stops before it is used (a decompression bomb); a line longer than
// the caller's limit stops getline before the line's memory grows past it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace statescope {

enum class Compression { None, Gzip, Xz, Zstd };

// By the file name's last extension: ".gz", ".xz", ".zst"; anything else None.
Compression compression_of(const std::string& path);
// The name without that extension ("pile.jsonl.zst" -> "pile.jsonl"); unchanged when None.
std::string strip_compression(const std::string& path);
// "gzip", "xz", "zstd", "none".
const char* compression_name(Compression c);

// The limit a file of `compressed_bytes` may decompress to by default: 100x its size, at least
// 1 GiB and at most 64 GiB (text compresses 3-10x; zeros 200-1000x; a bomb, thousands of times).
// Under the default limit the running ratio is watched too: past the first 256 MiB a file that has
// given more than 100x the compressed bytes it took is stopped there, long before it fills a disk.
// A limit the caller sets (--max-decompressed) replaces both.
inline constexpr uint64_t kBombRatio = 100;
inline constexpr uint64_t kRatioAfter = uint64_t{256} << 20;
inline constexpr uint64_t kDecompressedCap = uint64_t{64} << 30;
uint64_t default_decompressed_limit(uint64_t compressed_bytes);

class ByteStream {
 public:
  // Opens `path`; max_bytes 0: default_decompressed_limit(file size). Throws Error naming the file
  // when it cannot be opened, or when this build has no decoder for `c`.
  ByteStream(const std::string& path, Compression c, uint64_t max_bytes = 0);
  ~ByteStream();
  ByteStream(const ByteStream&) = delete;
  ByteStream& operator=(const ByteStream&) = delete;

  // Up to n decompressed bytes into out; 0 only at the end of the data.
  size_t read(char* out, size_t n);
  // The next line without its '\n' (a last line without one too); false at the end. Throws Error
  // "<file>: line <k> is longer than <max_line> bytes" before holding more than max_line bytes.
  bool getline(std::string& line, size_t max_line);
  int64_t compressed_consumed() const;  // bytes of the file read so far (for progress)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace statescope

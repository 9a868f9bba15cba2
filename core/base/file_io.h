// file_io.h — reading inputs that may not be what they claim, and writing bytes with every error seen.
//
// Inputs: a path that names a FIFO, a socket, a device or a folder where a file is expected is refused
// by name *before* it is opened (opening a FIFO blocks until someone writes to it; /dev/zero reads
// forever). Small structured files (configs, specs, tokenizers) are read whole with a size bound.
// Outputs: FileWriter writes through POSIX write(2) with its own buffer, checks every call, and
// fsyncs before it reports success, so a full disk or an I/O error becomes an Error naming the file,
// never a silently short file. No LibTorch, no Qt, no HDF5.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace statescope {

// Throws Error naming `path` (prefixed by `what`, e.g. "config.json", when given) unless it exists and
// is a regular file, links followed. The message says what it is instead (a FIFO, a character
// device, a folder, ...).
void require_regular_file(const std::string& path, const std::string& what = "");
// What a path is, in words ("a FIFO", "a folder", "a character device", "a regular file", "missing").
std::string file_kind(const std::string& path);

// Reads a whole regular file of at most `max_bytes` (checked on the open descriptor, so a file that
// grows meanwhile is still bounded). Throws Error naming the file.
std::string read_file_bounded(const std::string& path, uint64_t max_bytes, const std::string& what = "");
constexpr uint64_t kMaxJsonBytes = uint64_t{256} << 20;  // configs, specs, tokenizer.json: far above any real one

// A file written through write(2): buffered, every call checked (EINTR retried, short writes
// continued), fsync'd by close(). Errors throw statescope::Error naming the file ("disk full" for
// ENOSPC/EDQUOT/EFBIG). The destructor closes without checking (after an error, the caller removes
// the file).
class FileWriter {
 public:
  explicit FileWriter(const std::string& path);  // creates or truncates, mode 0644
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;
  void write(const void* data, size_t bytes);
  void write(std::string_view s) { write(s.data(), s.size()); }
  void close();  // flushes, fsyncs and closes; throws on any failure
  const std::string& path() const { return path_; }
  uint64_t bytes() const { return bytes_; }

 private:
  void flush_buffer();
  std::string path_;
  int fd_ = -1;
  std::string buf_;
  uint64_t bytes_ = 0;
};

// The message for a failed write of `path`: "<path>: write failed: no space left on the device (disk
// full)", naming `what` (a dataset, a tensor) when given.
std::string write_error(const std::string& path, int err, const std::string& what = "");

}  // namespace statescope

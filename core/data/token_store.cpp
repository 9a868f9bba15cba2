// token_store.cpp — in-memory and memory-mapped token buffers.
#include "core/data/token_store.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/error.h"

namespace statescope {

std::shared_ptr<const TokenBuffer> TokenBuffer::owned(std::vector<int32_t> ids) {
  std::shared_ptr<TokenBuffer> b(new TokenBuffer);
  b->owned_ = std::move(ids);
  b->data_ = b->owned_.data();
  b->size_ = static_cast<int64_t>(b->owned_.size());
  b->width_ = 4;
  return b;
}

std::shared_ptr<const TokenBuffer> TokenBuffer::map(const std::string& path, int width) {
  if (width != 2 && width != 4) throw Error(path + ": token width must be 2 or 4 bytes, not " + std::to_string(width));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open token file: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw Error(path + ": cannot stat token file: " + std::strerror(e));
  }
  const auto bytes = static_cast<size_t>(st.st_size);
  if (bytes % width != 0) {
    ::close(fd);
    throw Error(path + ": " + std::to_string(bytes) + " bytes is not a whole number of " + std::to_string(width) +
                "-byte tokens");
  }
  std::shared_ptr<TokenBuffer> b(new TokenBuffer);
  b->width_ = width;
  b->size_ = static_cast<int64_t>(bytes / width);
  if (bytes > 0) {
    void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      throw Error(path + ": cannot map token file: " + std::strerror(e));
    }
    ::madvise(p, bytes, MADV_RANDOM);  // windows are read at random offsets; no read-ahead of the whole file
    b->map_ = p;
    b->map_bytes_ = bytes;
    b->data_ = p;
  }
  ::close(fd);
  return b;
}

TokenBuffer::~TokenBuffer() {
  if (map_) ::munmap(map_, map_bytes_);
}

void TokenBuffer::copy(int64_t begin, int64_t n, int64_t* out) const {
  if (width_ == 2) {
    const auto* p = static_cast<const uint16_t*>(data_) + begin;
    for (int64_t k = 0; k < n; ++k) out[k] = p[k];
  } else {
    const auto* p = static_cast<const int32_t*>(data_) + begin;
    for (int64_t k = 0; k < n; ++k) out[k] = p[k];
  }
}

TokenSpan::TokenSpan(std::vector<int32_t> ids) : buf_(TokenBuffer::owned(std::move(ids))) {
  size_ = buf_->size();
}

TokenSpan::TokenSpan(std::shared_ptr<const TokenBuffer> buf, int64_t offset, int64_t size)
    : buf_(std::move(buf)), off_(offset), size_(size) {
  if (!buf_ || offset < 0 || size < 0 || offset + size > buf_->size())
    throw Error("token span [" + std::to_string(offset) + ", " + std::to_string(offset + size) +
                ") lies outside its buffer");
}

}  // namespace statescope

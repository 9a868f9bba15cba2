// token_store.h — token ids that may live on disk. No LibTorch.
//
// TokenBuffer: an immutable array of ids, either in memory (int32) or memory-mapped from a file of
// little-endian uint16 / uint32 (so a corpus larger than RAM costs only the pages a sampler touches).
// TokenSpan: a document's tokens, a view [offset, offset + size) of a shared buffer. It reads like a
// const std::vector<int32_t> (size, [], iterators) and is built implicitly from one.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace statescope {

class TokenBuffer {
 public:
  static std::shared_ptr<const TokenBuffer> owned(std::vector<int32_t> ids);
  // Maps `path` read-only; width 2 (uint16) or 4 (uint32). Throws Error naming the path.
  static std::shared_ptr<const TokenBuffer> map(const std::string& path, int width);
  ~TokenBuffer();
  TokenBuffer(const TokenBuffer&) = delete;
  TokenBuffer& operator=(const TokenBuffer&) = delete;

  int64_t size() const { return size_; }
  int width() const { return width_; }
  bool mapped() const { return map_ != nullptr; }
  int32_t operator[](int64_t i) const {
    if (width_ == 2) return static_cast<const uint16_t*>(data_)[i];
    return static_cast<const int32_t*>(data_)[i];
  }
  // out[k] = ids[begin + k] for k < n.
  void copy(int64_t begin, int64_t n, int64_t* out) const;

 private:
  TokenBuffer() = default;
  std::vector<int32_t> owned_;
  const void* data_ = nullptr;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  int64_t size_ = 0;
  int width_ = 4;
};

class TokenSpan {
 public:
  class iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = int32_t;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = int32_t;
    iterator() = default;
    iterator(const TokenBuffer* b, int64_t i) : b_(b), i_(i) {}
    int32_t operator*() const { return (*b_)[i_]; }
    int32_t operator[](difference_type k) const { return (*b_)[i_ + k]; }
    iterator& operator++() { ++i_; return *this; }
    iterator operator++(int) { auto t = *this; ++i_; return t; }
    iterator& operator--() { --i_; return *this; }
    iterator operator--(int) { auto t = *this; --i_; return t; }
    iterator& operator+=(difference_type k) { i_ += k; return *this; }
    iterator& operator-=(difference_type k) { i_ -= k; return *this; }
    iterator operator+(difference_type k) const { return {b_, i_ + k}; }
    friend iterator operator+(difference_type k, iterator it) { return it + k; }
    iterator operator-(difference_type k) const { return {b_, i_ - k}; }
    difference_type operator-(const iterator& o) const { return i_ - o.i_; }
    bool operator==(const iterator& o) const { return i_ == o.i_; }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }
    bool operator<(const iterator& o) const { return i_ < o.i_; }
    bool operator>(const iterator& o) const { return i_ > o.i_; }
    bool operator<=(const iterator& o) const { return i_ <= o.i_; }
    bool operator>=(const iterator& o) const { return i_ >= o.i_; }

   private:
    const TokenBuffer* b_ = nullptr;
    int64_t i_ = 0;
  };

  TokenSpan() = default;
  TokenSpan(std::vector<int32_t> ids);  // NOLINT(implicit): owns a copy
  TokenSpan(std::initializer_list<int32_t> ids) : TokenSpan(std::vector<int32_t>(ids)) {}
  TokenSpan(std::shared_ptr<const TokenBuffer> buf, int64_t offset, int64_t size);

  size_t size() const { return static_cast<size_t>(size_); }
  bool empty() const { return size_ == 0; }
  int32_t operator[](size_t i) const { return (*buf_)[off_ + static_cast<int64_t>(i)]; }
  iterator begin() const { return {buf_.get(), off_}; }
  iterator end() const { return {buf_.get(), off_ + size_}; }
  std::vector<int32_t> to_vector() const { return {begin(), end()}; }
  void copy(int64_t begin, int64_t n, int64_t* out) const { buf_->copy(off_ + begin, n, out); }
  bool mapped() const { return buf_ && buf_->mapped(); }

 private:
  std::shared_ptr<const TokenBuffer> buf_;
  int64_t off_ = 0, size_ = 0;
};

}  // namespace statescope

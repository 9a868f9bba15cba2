// compressed.cpp — see compressed.h. zlib, liblzma and libzstd in streaming mode; each decoder
// fills the output buffer from a fixed input buffer, refilled from the file as it drains.
#include "core/data/compressed.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/base/error.h"
#include "core/base/file_io.h"

#ifdef STATESCOPE_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef STATESCOPE_HAVE_LZMA
#include <lzma.h>
#endif
#ifdef STATESCOPE_HAVE_ZSTD
#include <zstd.h>
#endif

namespace statescope {

namespace {
constexpr size_t kBuffer = size_t{1} << 18;  // 256 KiB in and out

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
}  // namespace

Compression compression_of(const std::string& path) {
  if (ends_with(path, ".gz")) return Compression::Gzip;
  if (ends_with(path, ".xz")) return Compression::Xz;
  if (ends_with(path, ".zst")) return Compression::Zstd;
  return Compression::None;
}

std::string strip_compression(const std::string& path) {
  switch (compression_of(path)) {
    case Compression::Gzip: return path.substr(0, path.size() - 3);
    case Compression::Xz: return path.substr(0, path.size() - 3);
    case Compression::Zstd: return path.substr(0, path.size() - 4);
    case Compression::None: break;
  }
  return path;
}

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::Gzip: return "gzip";
    case Compression::Xz: return "xz";
    case Compression::Zstd: return "zstd";
    case Compression::None: break;
  }
  return "none";
}

uint64_t default_decompressed_limit(uint64_t compressed_bytes) {
  const uint64_t gib = uint64_t{1} << 30;
  const uint64_t ratio = compressed_bytes > UINT64_MAX / kBombRatio ? UINT64_MAX : compressed_bytes * kBombRatio;
  return std::min(kDecompressedCap, std::max(gib, ratio));
}

struct ByteStream::Impl {
  std::string path;
  Compression c;
  uint64_t limit = 0, produced = 0;
  bool ratio_guard = false;  // the default limit: the running ratio is watched too
  std::FILE* f = nullptr;
  std::vector<char> in = std::vector<char>(kBuffer), out = std::vector<char>(kBuffer);
  size_t in_pos = 0, in_len = 0;    // unread input: in[in_pos, in_len)
  size_t out_pos = 0, out_len = 0;  // undelivered output: out[out_pos, out_len)
  int64_t consumed = 0;             // bytes taken from the file
  bool file_end = false, data_end = false, mid_stream = false;
  int64_t lines = 0;
#ifdef STATESCOPE_HAVE_ZLIB
  z_stream z{};
#endif
#ifdef STATESCOPE_HAVE_LZMA
  lzma_stream x = LZMA_STREAM_INIT;
#endif
#ifdef STATESCOPE_HAVE_ZSTD
  ZSTD_DCtx* zs = nullptr;
#endif

  bool started = false;  // the decoder was initialised (so it is ended)

  ~Impl() {
#ifdef STATESCOPE_HAVE_ZLIB
    if (started && c == Compression::Gzip) inflateEnd(&z);
#endif
#ifdef STATESCOPE_HAVE_LZMA
    if (started && c == Compression::Xz) lzma_end(&x);
#endif
#ifdef STATESCOPE_HAVE_ZSTD
    if (zs) ZSTD_freeDCtx(zs);
#endif
    if (f) std::fclose(f);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(path + ": " + what + " at byte " + std::to_string(consumed - static_cast<int64_t>(in_len - in_pos)) +
                " of the " + compression_name(c) + " file");
  }
  void refill() {  // more input when the buffer is drained
    if (in_pos < in_len || file_end) return;
    in_len = std::fread(in.data(), 1, in.size(), f);
    in_pos = 0;
    consumed += static_cast<int64_t>(in_len);
    if (in_len == 0) {
      if (std::ferror(f)) throw Error(path + ": read error at byte " + std::to_string(consumed));
      file_end = true;
    }
  }
  // Decodes into out[0, cap); returns the bytes made (0: the data has ended).
  size_t decode(char* dst, size_t cap) {
    while (!data_end) {
      refill();
      size_t made = 0;
      switch (c) {
        case Compression::None:
          made = std::min(cap, in_len - in_pos);
          std::memcpy(dst, in.data() + in_pos, made);
          in_pos += made;
          if (file_end) data_end = true;
          break;
        case Compression::Gzip: made = gzip(dst, cap); break;
        case Compression::Xz: made = xz(dst, cap); break;
        case Compression::Zstd: made = zstd(dst, cap); break;
      }
      if (made > 0) {
        produced += made;
        if (produced > limit)
          throw Error(path + ": decompresses to more than " + std::to_string(limit) +
                      " bytes, the limit for this file (a decompression bomb, or set a larger limit)");
        // The default guard also watches the ratio as it goes: text compresses 3-10x, zeros 200-1000x.
        const uint64_t taken = static_cast<uint64_t>(std::max<int64_t>(consumed - static_cast<int64_t>(in_len - in_pos), 1));
        if (ratio_guard && produced > kRatioAfter && produced / taken > kBombRatio)
          throw Error(path + ": " + std::to_string(produced) + " bytes from the first " + std::to_string(taken) +
                      " compressed ones, more than " + std::to_string(kBombRatio) +
                      "x (text compresses 3-10x: a decompression bomb); set a limit (--max-decompressed) to read it anyway");
        return made;
      }
    }
    return 0;
  }

  size_t gzip(char* dst, size_t cap) {
#ifdef STATESCOPE_HAVE_ZLIB
    if (file_end && in_pos == in_len) {  // no input left
      if (mid_stream) fail("truncated gzip data: the file ends inside a member");
      data_end = true;
      return 0;
    }
    z.next_in = reinterpret_cast<Bytef*>(in.data() + in_pos);
    z.avail_in = static_cast<uInt>(in_len - in_pos);
    z.next_out = reinterpret_cast<Bytef*>(dst);
    z.avail_out = static_cast<uInt>(cap);
    mid_stream = true;
    const int r = inflate(&z, Z_NO_FLUSH);
    in_pos = in_len - z.avail_in;
    const size_t made = cap - z.avail_out;
    if (r == Z_STREAM_END) {  // a member ends; another may follow (concatenated .gz files)
      mid_stream = false;
      inflateReset(&z);
    } else if (r != Z_OK && r != Z_BUF_ERROR) {
      fail(std::string("corrupt gzip data (") + (z.msg ? z.msg : "zlib error " + std::to_string(r)) + ")");
    }
    return made;
#else
    (void)dst, (void)cap;
    throw Error(path + ": this build has no gzip decoder (zlib was missing when it was built)");
#endif
  }

  size_t xz(char* dst, size_t cap) {
#ifdef STATESCOPE_HAVE_LZMA
    x.next_in = reinterpret_cast<const uint8_t*>(in.data() + in_pos);
    x.avail_in = in_len - in_pos;
    x.next_out = reinterpret_cast<uint8_t*>(dst);
    x.avail_out = cap;
    const lzma_ret r = lzma_code(&x, file_end ? LZMA_FINISH : LZMA_RUN);
    in_pos = in_len - x.avail_in;
    const size_t made = cap - x.avail_out;
    if (r == LZMA_STREAM_END) {  // every stream decoded and the input used up (LZMA_CONCATENATED)
      data_end = true;
    } else if (r == LZMA_BUF_ERROR && file_end && made == 0) {
      fail("truncated xz data: the file ends inside a stream");
    } else if (r != LZMA_OK && r != LZMA_BUF_ERROR) {
      fail(std::string("corrupt xz data (") +
           (r == LZMA_FORMAT_ERROR ? "not in the .xz format" : r == LZMA_DATA_ERROR ? "data error" :
            r == LZMA_OPTIONS_ERROR ? "unsupported options" : r == LZMA_MEM_ERROR ? "out of memory" :
            "liblzma error " + std::to_string(static_cast<int>(r))) + ")");
    }
    return made;
#else
    (void)dst, (void)cap;
    throw Error(path + ": this build has no xz decoder (liblzma was missing when it was built)");
#endif
  }

  size_t zstd(char* dst, size_t cap) {
#ifdef STATESCOPE_HAVE_ZSTD
    if (file_end && in_pos == in_len && !mid_stream) {
      data_end = true;
      return 0;
    }
    ZSTD_inBuffer ib{in.data() + in_pos, in_len - in_pos, 0};
    ZSTD_outBuffer ob{dst, cap, 0};
    const size_t r = ZSTD_decompressStream(zs, &ob, &ib);
    in_pos += ib.pos;
    if (ZSTD_isError(r)) fail(std::string("corrupt zstd data (") + ZSTD_getErrorName(r) + ")");
    mid_stream = r != 0;  // 0: a frame is complete; another may follow
    if (file_end && in_pos == in_len && ob.pos == 0 && mid_stream)
      fail("truncated zstd data: the file ends inside a frame");
    return ob.pos;
#else
    (void)dst, (void)cap;
    throw Error(path + ": this build has no zstd decoder (libzstd was missing when it was built)");
#endif
  }
};

ByteStream::ByteStream(const std::string& path, Compression c, uint64_t max_bytes) : impl_(std::make_unique<Impl>()) {
  auto& s = *impl_;
  s.path = path;
  s.c = c;
  require_regular_file(path);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  s.limit = max_bytes ? max_bytes : default_decompressed_limit(ec ? 0 : size);
  s.ratio_guard = max_bytes == 0 && c != Compression::None;
  s.f = std::fopen(path.c_str(), "rb");
  if (!s.f) throw Error(path + ": cannot open");
  switch (c) {
    case Compression::Gzip:
#ifdef STATESCOPE_HAVE_ZLIB
      if (inflateInit2(&s.z, 15 + 32) != Z_OK) throw Error(path + ": cannot start the gzip decoder");  // 32: gzip or zlib header
      s.started = true;
#endif
      break;
    case Compression::Xz:
#ifdef STATESCOPE_HAVE_LZMA
      if (lzma_stream_decoder(&s.x, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) throw Error(path + ": cannot start the xz decoder");
      s.started = true;
#endif
      break;
    case Compression::Zstd:
#ifdef STATESCOPE_HAVE_ZSTD
      s.zs = ZSTD_createDCtx();
      if (!s.zs) throw Error(path + ": cannot start the zstd decoder");
#endif
      break;
    case Compression::None: break;
  }
}

ByteStream::~ByteStream() = default;

size_t ByteStream::read(char* dst, size_t n) {
  auto& s = *impl_;
  if (s.out_pos < s.out_len) {  // what getline left over first
    const size_t k = std::min(n, s.out_len - s.out_pos);
    std::memcpy(dst, s.out.data() + s.out_pos, k);
    s.out_pos += k;
    return k;
  }
  return s.decode(dst, n);
}

bool ByteStream::getline(std::string& line, size_t max_line) {
  auto& s = *impl_;
  line.clear();
  bool any = false;
  while (true) {
    if (s.out_pos == s.out_len) {
      s.out_pos = 0;
      s.out_len = s.decode(s.out.data(), s.out.size());
      if (s.out_len == 0) {
        if (any) ++s.lines;
        return any;
      }
    }
    any = true;
    const char* b = s.out.data() + s.out_pos;
    const size_t avail = s.out_len - s.out_pos;
    const void* nl = std::memchr(b, '\n', avail);
    const size_t take = nl ? static_cast<size_t>(static_cast<const char*>(nl) - b) : avail;
    if (line.size() + take > max_line)
      throw Error(s.path + ": line " + std::to_string(s.lines + 1) + " is longer than " + std::to_string(max_line) +
                  " bytes (the limit for one line)");
    line.append(b, take);
    s.out_pos += take + (nl ? 1 : 0);
    if (nl) {
      ++s.lines;
      return true;
    }
  }
}

int64_t ByteStream::compressed_consumed() const { return impl_->consumed - static_cast<int64_t>(impl_->in_len - impl_->in_pos); }

}  // namespace statescope

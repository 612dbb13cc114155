// Sequential bytes of one opened input file, as stored or inflated when it starts with gzip's magic.
// Everything is read from the handle whose kind was checked (zlib's inflate over our own reads, not
// gzopen by path), so a file swapped for a FIFO after the check is never opened, let alone waited on.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "util/platform.hpp"

namespace anycl::data {

class ByteSource {
 public:
  /// Takes the opened regular file `file`; `path` names it in messages (DataError).
  ByteSource(detail::platform::File file, std::string path);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  /// Whether the file is gzip (it starts with 1f 8b).
  bool gzip() const { return gzip_; }
  /// Reads up to `n` bytes; fewer only at the end of the (decompressed) data. A truncated or
  /// corrupt gzip stream throws DataError with zlib's message.
  size_t read(uint8_t* dst, size_t n);

 private:
  size_t read_gzip(uint8_t* dst, size_t n);
  void inflate_more();
  // Keeps the unread input and reads more behind it, until `want` bytes wait or the file ends.
  void fill(size_t want);
  size_t waiting() const { return in_end_ - in_pos_; }
  [[noreturn]] void fail(const std::string& what) const;

  detail::platform::File file_;
  std::string path_;
  std::vector<uint8_t> in_;
  size_t in_pos_ = 0;
  size_t in_end_ = 0;
  bool file_ended_ = false;
  std::vector<uint8_t> out_;  // inflated bytes not yet read (gzip only)
  size_t out_pos_ = 0;
  size_t out_end_ = 0;
  bool gzip_ = false;
  bool stream_ended_ = false;  // the last gzip member ended and no other follows
  z_stream z_{};
};

}  // namespace anycl::data

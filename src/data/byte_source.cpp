// ByteSource (see the header): a raw input buffer over the opened file, passed through as it is or
// through zlib's inflate with gzip framing, member after member as gzread does.
#include "byte_source.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "anycl/error.hpp"

namespace anycl::data {
namespace {

constexpr size_t kInputBuffer = size_t{1} << 17;  // fewer reads than zlib's 8 KiB default
constexpr const char* kRedownload = "re-download the file";
// inflateInit2's window bits for a gzip wrapper (16 + the largest window).
constexpr int kGzipWindowBits = 16 + MAX_WBITS;

}  // namespace

ByteSource::ByteSource(detail::platform::File file, std::string path)
    : file_(std::move(file)), path_(std::move(path)), in_(kInputBuffer) {
  fill(2);
  gzip_ = waiting() >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
  if (gzip_) out_.resize(2 * kInputBuffer);  // twice the input, as in gzread
  if (gzip_ && inflateInit2(&z_, kGzipWindowBits) != Z_OK)
    fail(fmt::format("cannot start decompressing (zlib: {}) — is memory short?",
                     z_.msg ? z_.msg : "no memory"));
}

ByteSource::~ByteSource() {
  if (gzip_) inflateEnd(&z_);
}

void ByteSource::fail(const std::string& what) const { throw DataError(fmt::format("{}: {}", path_, what)); }

void ByteSource::fill(size_t want) {
  if (waiting() >= want || file_ended_) return;
  std::memmove(in_.data(), in_.data() + in_pos_, waiting());
  in_end_ = waiting();
  in_pos_ = 0;
  while (in_end_ < want && !file_ended_) {
    std::error_code ec;
    const size_t got = detail::platform::read(file_, in_.data() + in_end_, in_.size() - in_end_, ec);
    if (ec) fail(fmt::format("read error: {}", ec.message()));
    in_end_ += got;
    file_ended_ = in_end_ < in_.size();  // platform::read stops short only at the end of the file
  }
}

size_t ByteSource::read(uint8_t* dst, size_t n) {
  if (gzip_) return read_gzip(dst, n);
  const size_t buffered = std::min(n, waiting());
  std::memcpy(dst, in_.data() + in_pos_, buffered);
  in_pos_ += buffered;
  if (buffered == n || file_ended_) return buffered;
  std::error_code ec;
  const size_t got = detail::platform::read(file_, dst + buffered, n - buffered, ec);
  if (ec) fail(fmt::format("read error: {}", ec.message()));
  return buffered + got;
}

size_t ByteSource::read_gzip(uint8_t* dst, size_t n) {
  size_t got = 0;
  while (got < n) {
    if (out_pos_ == out_end_) {
      if (stream_ended_) break;
      inflate_more();
    }
    const size_t take = std::min(n - got, out_end_ - out_pos_);
    std::memcpy(dst + got, out_.data() + out_pos_, take);
    out_pos_ += take;
    got += take;
  }
  return got;
}

// Fills the output buffer (as gzread does, so that a corrupt stream is refused at the first read
// rather than after its garbage was taken for a header) or up to the last member's end.
void ByteSource::inflate_more() {
  out_pos_ = out_end_ = 0;
  while (out_end_ < out_.size() && !stream_ended_) {
    fill(1);
    if (waiting() == 0)  // the words gzread uses, so a cut file reads the same as ever
      fail(fmt::format("gzip stream is truncated (zlib: unexpected end of file) — {}", kRedownload));
    z_.next_in = in_.data() + in_pos_;
    z_.avail_in = static_cast<uInt>(waiting());
    z_.next_out = out_.data() + out_end_;
    z_.avail_out = static_cast<uInt>(out_.size() - out_end_);
    const size_t before = in_pos_ + out_end_;
    const int rc = inflate(&z_, Z_NO_FLUSH);
    in_pos_ = static_cast<size_t>(z_.next_in - in_.data());
    out_end_ = static_cast<size_t>(z_.next_out - out_.data());
    const bool stuck = rc == Z_BUF_ERROR && in_pos_ + out_end_ == before;  // input and room, no progress
    if (rc == Z_STREAM_END) {
      // Another member may follow (concatenated gzip files); anything else after a member is
      // ignored, as gzread ignores it.
      fill(2);
      stream_ended_ = !(waiting() >= 2 && in_[in_pos_] == 0x1f && in_[in_pos_ + 1] == 0x8b);
      if (!stream_ended_) inflateReset(&z_);
    } else if ((rc != Z_OK && rc != Z_BUF_ERROR) || stuck) {
      fail(fmt::format("gzip stream is corrupt (zlib: {}) — {}", z_.msg ? z_.msg : zError(rc), kRedownload));
    }
  }
}

}  // namespace anycl::data

// IDX reader: header checks, then the body read from a plain file (size known up front) or a gzip
// stream (size unknown, so the buffer grows only as decompressed bytes actually arrive).
#include "anycl/data/idx.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "byte_source.hpp"
#include "util/input_file.hpp"

namespace anycl::data {
namespace {

// No MNIST-style set comes near this; a header claiming more is corrupt, and refusing it here means
// a hostile header cannot make us even try a huge allocation.
constexpr uint64_t kMaxPayload = uint64_t{16} << 30;
// First gzip read chunk; it doubles per step, so a lying header costs at most one such allocation.
constexpr size_t kFirstChunk = size_t{1} << 20;
constexpr const char* kRedownload = "re-download the file";
// Deflate cannot expand a byte into more than 1032 (its longest match per shortest code), so a gzip
// file claiming more than this many bytes per compressed byte lies; refused before inflating.
constexpr uint64_t kMaxGzipRatio = 1032;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw DataError(fmt::format("{}: {}", path, what));
}

std::string dims_text(const std::vector<uint32_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

// Names the IDX element types we refuse, so the message says what the file actually holds.
const char* type_name(uint8_t type) {
  switch (type) {
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "16-bit integer";
    case 0x0C:
      return "32-bit integer";
    case 0x0D:
      return "32-bit float";
    case 0x0E:
      return "64-bit float";
    default:
      return nullptr;
  }
}

// Opens `path` once: its kind and size are checked on that handle, and every byte is read from it.
// The size is needed by the plain-file body check.
ByteSource open_idx(const std::string& path, uint64_t* file_size) {
  detail::platform::File file;
  try {
    file = detail::open_input_file(path, UINT64_MAX, "IDX file", file_size);
  } catch (const DataError& e) {
    throw DataError(fmt::format("{} — pass --data DIR with the MNIST-format files", e.what()));
  }
  if (*file_size == 0) fail(path, "empty file (0 bytes) — " + std::string(kRedownload));
  return ByteSource(std::move(file), path);
}

// Checks magic, type and dimension count; returns the number of dimensions.
size_t check_magic(const std::string& path, const uint8_t h[4], size_t expected_dims) {
  if (h[0] != 0 || h[1] != 0)
    fail(path,
         fmt::format("not an IDX file: starts with {:02x} {:02x} {:02x} {:02x}, expected 00 00 08 <dims> "
                     "— check that this is the right file",
                     h[0], h[1], h[2], h[3]));
  if (h[2] != 0x08) {
    if (const char* name = type_name(h[2]))
      fail(path, fmt::format("holds {} data (IDX type 0x{:02x}); only unsigned-byte IDX (type 0x08) is "
                             "supported — convert the data to unsigned bytes",
                             name, h[2]));
    fail(path, fmt::format("unknown IDX type byte 0x{:02x} (expected 0x08, unsigned byte) — the file is "
                           "corrupt or not IDX",
                           h[2]));
  }
  size_t ndims = h[3];
  if (ndims == 0) fail(path, "IDX header declares 0 dimensions — the file is corrupt");
  if (expected_dims != 0 && ndims != expected_dims)
    fail(path, fmt::format("has {} dimensions, expected {} (an idx{} {} file) — check that the file is in "
                           "the right slot",
                           ndims, expected_dims, expected_dims, expected_dims == 1 ? "label" : "data"));
  return ndims;
}

uint64_t checked_payload(const std::string& path, const std::vector<uint32_t>& dims) {
  uint64_t total = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0)
      fail(path, fmt::format("dimension {} is 0 (dims {}) — the file holds no data or is corrupt", i,
                             dims_text(dims)));
    if (__builtin_mul_overflow(total, uint64_t{dims[i]}, &total) || total > kMaxPayload)
      fail(path, fmt::format("dims {} claim more than {} GiB of data — the header is corrupt",
                             dims_text(dims), kMaxPayload >> 30));
  }
  return total;
}

// Reads and checks the header from `src`: magic, dims, and the payload they claim against what the
// file can hold (exactly, for a plain file; by deflate's largest ratio, for gzip).
IdxHeader read_header(ByteSource& src, const std::string& path, uint64_t file_size, size_t expected_dims) {
  const char* what = src.gzip() ? "decompressed data" : "file";

  uint8_t h[4];
  size_t got = src.read(h, 4);
  if (got < 4)
    fail(path, fmt::format("truncated header: {} is {} bytes, an IDX header needs at least 4 — {}", what, got,
                           kRedownload));
  size_t ndims = check_magic(path, h, expected_dims);

  std::vector<uint8_t> raw(4 * ndims);
  got = src.read(raw.data(), raw.size());
  if (got < raw.size())
    fail(path, fmt::format("truncated header: {} dimensions need {} size bytes, only {} follow — {}", ndims,
                           raw.size(), got, kRedownload));
  IdxHeader header;
  header.gzip = src.gzip();
  header.dims.resize(ndims);
  for (size_t i = 0; i < ndims; ++i)  // big-endian on disk
    header.dims[i] = uint32_t{raw[4 * i]} << 24 | uint32_t{raw[4 * i + 1]} << 16 |
                     uint32_t{raw[4 * i + 2]} << 8 | uint32_t{raw[4 * i + 3]};
  const uint64_t payload = checked_payload(path, header.dims);
  const std::string dims = dims_text(header.dims);
  if (!src.gzip()) {
    // The size is known: compare before allocating anything the header asks for.
    const uint64_t have = file_size - 4 - raw.size();
    if (have < payload)
      fail(path, fmt::format("truncated: dims {} need {} data bytes, the file holds {} — {}", dims, payload,
                             have, kRedownload));
    if (have > payload)
      fail(path, fmt::format("{} bytes of trailing data after the {} that dims {} describe — the file is "
                             "corrupt; {}",
                             have - payload, payload, dims, kRedownload));
  } else if (payload / kMaxGzipRatio > file_size) {
    fail(path, fmt::format("dims {} claim {} bytes of data, more than a {}-byte gzip file can hold (deflate "
                           "expands at most {}:1) — the header is corrupt; {}",
                           dims, payload, file_size, kMaxGzipRatio, kRedownload));
  }
  return header;
}

IdxArray read_impl(const std::string& path, size_t expected_dims) {
  uint64_t file_size = 0;
  ByteSource src = open_idx(path, &file_size);
  IdxArray out;
  out.dims = read_header(src, path, file_size, expected_dims).dims;
  const uint64_t payload = checked_payload(path, out.dims);
  const std::string dims = dims_text(out.dims);

  if (!src.gzip()) {
    out.data.resize(payload);
    if (src.read(out.data.data(), payload) < payload)  // the file shrank under us
      fail(path, fmt::format("truncated while reading: dims {} need {} data bytes — {}", dims, payload,
                             kRedownload));
    return out;
  }

  // gzip: the decompressed size is unknown until the stream ends, so grow the buffer only as data
  // arrives; exact reserve() keeps the final capacity equal to the payload.
  size_t filled = 0;
  while (filled < payload) {
    size_t target = static_cast<size_t>(std::min<uint64_t>(payload, std::max(kFirstChunk, 2 * filled)));
    out.data.reserve(target);
    out.data.resize(target);
    size_t n = src.read(out.data.data() + filled, target - filled);
    filled += n;
    if (filled < target)
      fail(path, fmt::format("truncated: dims {} need {} data bytes, the gzip stream holds only {} — {}",
                             dims, payload, filled, kRedownload));
  }
  uint8_t extra;
  if (src.read(&extra, 1) != 0)
    fail(path, fmt::format("trailing data: the decompressed stream is longer than the {} bytes dims {} "
                           "describe — the file is corrupt; {}",
                           payload, dims, kRedownload));
  return out;
}

}  // namespace

IdxArray read_idx(const std::string& path) { return read_impl(path, 0); }

IdxHeader read_idx_header(const std::string& path, size_t expected_dims) {
  uint64_t file_size = 0;
  ByteSource src = open_idx(path, &file_size);
  return read_header(src, path, file_size, expected_dims);
}

IdxArray read_idx(const std::string& path, size_t expected_dims) { return read_impl(path, expected_dims); }

}  // namespace anycl::data

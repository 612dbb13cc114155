// Reader for IDX files (the MNIST family's format), plain or gzip-compressed. Every header is checked
// against the bytes actually present before anything is allocated from it; failures are DataErrors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace anycl::data {

/// One unsigned-byte IDX array: `dims` as stored (big-endian in the file), `data` row-major.
struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data;
};

/// An IDX file's header: `dims` as stored, and whether the file is gzip-compressed.
struct IdxHeader {
  std::vector<uint32_t> dims;
  bool gzip = false;
};

/// Reads and checks only the header of an IDX file (magic, type, `expected_dims` when not 0, and the
/// size the dims claim against the file's size: exact for a plain file, within deflate's largest
/// expansion for gzip) — cheap checks that come before any body is inflated. DataError otherwise.
IdxHeader read_idx_header(const std::string& path, size_t expected_dims = 0);

/// Reads an unsigned-byte (type 0x08) IDX file; gzip is detected by its 1f 8b magic, not the name.
/// Throws DataError naming the path and the fault (magic, dims, truncation, trailing bytes, zlib).
IdxArray read_idx(const std::string& path);

/// As read_idx(path), but also requires exactly `expected_dims` dimensions (1 for labels, 3 for
/// images; 0 = any), checked right after the header so a wrong file fails before its body is read.
IdxArray read_idx(const std::string& path, size_t expected_dims);

}  // namespace anycl::data

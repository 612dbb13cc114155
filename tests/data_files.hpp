// Test helpers that WRITE tiny IDX files (plain or gzip) into a temporary folder, so the data tests
// and the CLI tests can build MNIST-format folders without shipping any binary fixtures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "helpers.hpp"  // TempDir

namespace anycl::test {

/// Runs `f` and returns what() of the E it throws, or "<nothing thrown>"; other exceptions propagate,
/// so a wrong type fails the test. Lets one test check several key words of a message.
template <class E, class F>
std::string thrown_message(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<nothing thrown>";
}

/// True when `text` contains every one of `words` (use as CHECK_MESSAGE(contains_all(m, {...}), m)).
inline bool contains_all(const std::string& text, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words)
    if (text.find(w) == std::string::npos) return false;
  return true;
}

/// `n` bytes from an mt19937 seeded with `seed`, uniform in [0, bound).
std::vector<uint8_t> random_bytes(size_t n, uint32_t seed, unsigned bound = 256);

/// The bytes of an IDX file: magic 00 00 <type> <dims.size()>, big-endian dims, then `data` as is.
std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data,
                               uint8_t type = 0x08);

/// Writes `bytes` to `path` unchanged.
void write_file(const std::string& path, const std::vector<uint8_t>& bytes);

/// Writes `bytes` to `path` as a gzip stream.
void write_gzip(const std::string& path, const std::vector<uint8_t>& bytes);

/// gzip-compresses `bytes` in memory (for tests that then truncate or corrupt the stream).
std::vector<uint8_t> gzip_bytes(const std::vector<uint8_t>& bytes);

/// What write_mnist_folder wrote, for comparing against what the loader reads back.
struct TinySet {
  std::vector<uint8_t> train_pixels, train_labels, test_pixels, test_labels;
};

/// Shape and encoding of a tiny MNIST-format folder.
struct TinySpec {
  size_t train = 12, test = 5, rows = 4, cols = 3, classes = 10;
  bool gzip = false;
  uint32_t seed = 1234;
};

/// Writes train-/t10k- images and labels (named `-idx3-ubyte`, plus `.gz` when spec.gzip) into `dir`.
/// Labels are drawn in [0, classes); every class has a training sample (when train >= classes) and the
/// last training label is classes-1, so inference is exact and no class is empty.
TinySet write_mnist_folder(const std::string& dir, const TinySpec& spec = {});

}  // namespace anycl::test

// Writers for tiny IDX fixtures (see data_files.hpp); test-only code, so failures throw std errors.
#include "data_files.hpp"

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

namespace anycl::test {

namespace fs = std::filesystem;

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed, unsigned bound) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<unsigned> dist(0, bound - 1);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = static_cast<uint8_t>(dist(rng));
  return out;
}

std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data,
                               uint8_t type) {
  std::vector<uint8_t> out = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(d >> shift));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::vector<uint8_t> gzip_bytes(const std::vector<uint8_t>& bytes) {
  z_stream zs{};
  // windowBits 15 + 16 asks deflate for a gzip wrapper rather than zlib's.
  if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::vector<uint8_t> out(deflateBound(&zs, static_cast<uLong>(bytes.size())) + 32);
  zs.next_in = const_cast<Bytef*>(bytes.data());
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  return out;
}

void write_gzip(const std::string& path, const std::vector<uint8_t>& bytes) {
  write_file(path, gzip_bytes(bytes));
}

TinySet write_mnist_folder(const std::string& dir, const TinySpec& spec) {
  TinySet set;
  const size_t f = spec.rows * spec.cols;
  const unsigned classes = static_cast<unsigned>(spec.classes);
  set.train_pixels = random_bytes(spec.train * f, spec.seed);
  set.train_labels = random_bytes(spec.train, spec.seed + 1, classes);
  set.test_pixels = random_bytes(spec.test * f, spec.seed + 2);
  set.test_labels = random_bytes(spec.test, spec.seed + 3, classes);
  // Every class gets a training sample (spread over the set), so the inferred class count is exact and
  // load_folder's empty-class check passes; the last label is the largest.
  for (size_t c = 0; c < classes && spec.train >= classes; ++c)
    set.train_labels[c * spec.train / classes] = static_cast<uint8_t>(c);
  if (!set.train_labels.empty()) set.train_labels.back() = static_cast<uint8_t>(classes - 1);

  const auto r = static_cast<uint32_t>(spec.rows), c = static_cast<uint32_t>(spec.cols);
  auto put = [&](const std::string& name, const std::vector<uint32_t>& dims,
                 const std::vector<uint8_t>& data) {
    std::string path = (fs::path(dir) / name).string();
    if (spec.gzip)
      write_gzip(path + ".gz", idx_bytes(dims, data));
    else
      write_file(path, idx_bytes(dims, data));
  };
  put("train-images-idx3-ubyte", {static_cast<uint32_t>(spec.train), r, c}, set.train_pixels);
  put("train-labels-idx1-ubyte", {static_cast<uint32_t>(spec.train)}, set.train_labels);
  put("t10k-images-idx3-ubyte", {static_cast<uint32_t>(spec.test), r, c}, set.test_pixels);
  put("t10k-labels-idx1-ubyte", {static_cast<uint32_t>(spec.test)}, set.test_labels);
  return set;
}

}  // namespace anycl::test

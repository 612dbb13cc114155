// Data sets on the host: one MNIST-format folder (train + t10k, images + labels) loaded into uint8
// splits. Pixels stay bytes here; the device normalises by 1/255 when a batch is uploaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace anycl::data {

/// The folder the Debian package dataset-fashion-mnist installs.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// Host copy of one split.
struct Dataset {
  size_t count = 0, rows = 0, cols = 0, num_classes = 0;
  std::vector<uint8_t> pixels;  // count*rows*cols, row-major per image
  std::vector<uint8_t> labels;  // count
  /// Values per image (rows*cols).
  size_t features() const { return rows * cols; }
  /// Images [first, first+n) as floats pixel/255.0f, laid out (n, features). ValidationError if out of range.
  std::vector<float> normalized(size_t first, size_t n) const;
};

/// How load_folder trims and splits what it reads.
struct LoadOptions {
  size_t limit = 0;               // keep the first `limit` training images (test stays whole); 0 = all
  double validation_split = 0.0;  // in [0,1): the LAST fraction of the (limited) train set, as Keras does
  size_t num_classes = 0;         // 0 = max training label + 1 (over the whole file, before `limit`)
  bool test_only = false;         // load only the t10k split (needs num_classes); train stays empty
};

/// The three splits of one folder; `validation.count` is 0 when no split was asked for.
struct DataSplits {
  Dataset train, validation, test;
  std::string dir;
};

/// Loads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
/// t10k-labels-idx1-ubyte from `dir` (each plain or .gz; "train-images.idx3-ubyte" spelling too).
/// An empty `dir` means default_data_dir(). DataError for any file fault, ValidationError for bad options.
///   anycl::data::LoadOptions opts;
///   opts.validation_split = 0.1;
///   auto splits = anycl::data::load_folder(anycl::data::default_data_dir(), opts);
DataSplits load_folder(const std::string& dir, const LoadOptions& opts = {});

/// $ANYCL_DATA if set and non-empty, else kFashionMnistDir.
std::string default_data_dir();

}  // namespace anycl::data

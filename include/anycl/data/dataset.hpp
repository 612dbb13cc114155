// Data sets on the host: one MNIST-format folder (train + t10k, images + labels) loaded into uint8
// splits, or an application's own float features with class indices or float targets. Pixels stay
// bytes here; the device normalises by 1/255 when a batch is gathered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace anycl::data {

/// The folder the Debian package dataset-fashion-mnist installs.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

/// Host copy of one split. Features are `pixels` (bytes, normalised v/255 on the device) or, when
/// non-empty, `values` (floats used as given). Targets are `labels` (byte class indices), or when
/// non-empty `classes` (int32 class indices, any number of classes) or `targets` (floats,
/// count × target_width, for regression; num_classes is 0 then).
struct Dataset {
  size_t count = 0, rows = 0, cols = 0, num_classes = 0;
  std::vector<uint8_t> pixels;   // count*rows*cols, row-major per image
  std::vector<uint8_t> labels;   // count
  std::vector<float> values;     // count*rows*cols float features, instead of pixels
  std::vector<int32_t> classes;  // count class indices in [0, num_classes), instead of labels
  std::vector<float> targets;    // count*target_width float targets, instead of labels
  size_t target_width = 0;       // values per target (regression)
  /// Values per image (rows*cols).
  size_t features() const { return rows * cols; }
  /// Images [first, first+n) as floats pixel/255.0f (or the float features as given), laid out
  /// (n, features). ValidationError if out of range.
  std::vector<float> normalized(size_t first, size_t n) const;
  /// A copy of the first n samples (every form: bytes or floats, any targets). n <= count.
  Dataset first(size_t n) const;

  /// Float features x (n rows × d, row-major) with class indices y in [0, k): ValidationError
  /// naming the first bad index for a label out of range or a feature that is not finite.
  static Dataset from_features(std::vector<float> x, const std::vector<int32_t>& y, size_t d, size_t k);
  static Dataset from_features(std::vector<float> x, const std::vector<uint32_t>& y, size_t d, size_t k);
  /// Float features x (n × d) with float targets t (n × outputs), for regression.
  static Dataset from_targets(std::vector<float> x, std::vector<float> t, size_t d, size_t outputs);
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

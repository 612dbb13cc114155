// Tests for load_folder and Dataset: tiny generated folders (plain, gzip, dotted names), limit and
// validation split, class-count inference, every pairing fault, and the real Fashion-MNIST if installed.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "anycl/data/dataset.hpp"
#include "anycl/error.hpp"
#include "data_files.hpp"
#include "util/platform.hpp"

namespace fs = std::filesystem;
using anycl::DataError;
using anycl::ValidationError;
using namespace anycl::data;
using namespace anycl::test;

namespace {

#define CHECK_WORDS(msg, ...) CHECK_MESSAGE(contains_all(msg, {__VA_ARGS__}), msg)

std::vector<uint8_t> slice(const std::vector<uint8_t>& v, size_t first, size_t n) {
  return {v.begin() + static_cast<std::ptrdiff_t>(first), v.begin() + static_cast<std::ptrdiff_t>(first + n)};
}

std::string load_error(const std::string& dir, const LoadOptions& opts = {}) {
  return thrown_message<DataError>([&] { load_folder(dir, opts); });
}

// Restores $ANYCL_DATA on scope exit so tests do not leak environment into each other.
struct EnvGuard {
  std::optional<std::string> old = anycl::detail::platform::get_env("ANYCL_DATA");
  ~EnvGuard() { anycl::detail::platform::set_env("ANYCL_DATA", old); }
};

}  // namespace

TEST_CASE("load_folder reads plain and gzip folders back exactly") {
  for (bool gz : {false, true}) {
    CAPTURE(gz);
    TempDir tmp;
    TinySpec spec;
    spec.gzip = gz;
    TinySet set = write_mnist_folder(tmp.path(), spec);
    DataSplits s = load_folder(tmp.path());
    CHECK(s.dir == tmp.path());
    CHECK(s.train.count == 12);
    CHECK(s.test.count == 5);
    CHECK(s.train.rows == 4);
    CHECK(s.train.cols == 3);
    CHECK(s.train.features() == 12);
    CHECK(s.train.num_classes == 10);
    CHECK(s.test.num_classes == 10);
    CHECK(s.train.pixels == set.train_pixels);
    CHECK(s.train.labels == set.train_labels);
    CHECK(s.test.pixels == set.test_pixels);
    CHECK(s.test.labels == set.test_labels);
    CHECK(s.validation.count == 0);
    CHECK(s.validation.pixels.empty());
  }
}

TEST_CASE("load_folder accepts the dotted spelling and prefers the plain file over .gz") {
  TempDir tmp;
  const std::string d = tmp.path();
  TinySet plain = write_mnist_folder(d);
  for (std::string name :
       {"train-images-idx3", "train-labels-idx1", "t10k-images-idx3", "t10k-labels-idx1"}) {
    std::string dotted = name;
    dotted[dotted.size() - 5] = '.';  // train-images-idx3 -> train-images.idx3
    fs::rename(tmp.file(name + "-ubyte"), tmp.file(dotted + "-ubyte"));
  }
  CHECK(load_folder(d).train.pixels == plain.train_pixels);
  TinySpec other;
  other.gzip = true;
  other.seed = 99;
  write_mnist_folder(d, other);  // -idx3-ubyte.gz ranks above the dotted plain name
  CHECK(load_folder(d).train.pixels != plain.train_pixels);
  TinySpec plain_again;
  plain_again.seed = 7;
  TinySet set = write_mnist_folder(d, plain_again);  // plain -idx3-ubyte ranks above .gz
  CHECK(load_folder(d).train.pixels == set.train_pixels);
}

TEST_CASE("limit keeps the first training images and leaves test whole") {
  TempDir tmp;
  TinySet set = write_mnist_folder(tmp.path());
  LoadOptions o;
  o.limit = 7;
  DataSplits s = load_folder(tmp.path(), o);
  CHECK(s.train.count == 7);
  CHECK(s.train.pixels == slice(set.train_pixels, 0, 7 * 12));
  CHECK(s.train.labels == slice(set.train_labels, 0, 7));
  CHECK(s.test.count == 5);  // the test split is never limited
  CHECK(s.test.labels == set.test_labels);
  o.limit = 2;
  CHECK(load_folder(tmp.path(), o).test.count == 5);
  CHECK(s.train.num_classes == 10);  // inferred from the whole file, not the kept part
  o.limit = 1000;
  s = load_folder(tmp.path(), o);
  CHECK(s.train.count == 12);
  CHECK(s.train.pixels == set.train_pixels);
}

TEST_CASE("validation_split takes the last fraction of the limited training set - as Keras does") {
  TempDir tmp;
  TinySet set = write_mnist_folder(tmp.path());
  LoadOptions o;
  o.validation_split = 0.25;  // int(12 * 0.75) = 9 train, 3 validation
  DataSplits s = load_folder(tmp.path(), o);
  CHECK(s.train.count == 9);
  CHECK(s.validation.count == 3);
  CHECK(s.train.pixels == slice(set.train_pixels, 0, 9 * 12));
  CHECK(s.validation.pixels == slice(set.train_pixels, 9 * 12, 3 * 12));
  CHECK(s.validation.labels == slice(set.train_labels, 9, 3));
  CHECK(s.validation.rows == 4);
  CHECK(s.validation.cols == 3);
  CHECK(s.validation.num_classes == 10);
  CHECK(s.test.count == 5);

  o.limit = 8;  // int(8 * 0.75) = 6: validation is images 6 and 7, not the file's tail
  s = load_folder(tmp.path(), o);
  CHECK(s.train.count == 6);
  CHECK(s.validation.labels == slice(set.train_labels, 6, 2));
}

TEST_CASE("validation_split outside 0 to 1 or leaving nothing to train on is a ValidationError") {
  TempDir tmp;
  write_mnist_folder(tmp.path());
  for (double bad : {1.0, -0.1, 1.5, std::nan("")}) {
    CAPTURE(bad);
    LoadOptions o;
    o.validation_split = bad;
    CHECK_WORDS(thrown_message<ValidationError>([&] { load_folder(tmp.path(), o); }), "--validation-split",
                "must be in [0, 1)");
  }
  LoadOptions o;
  o.limit = 1;
  o.validation_split = 0.5;
  CHECK_WORDS(thrown_message<ValidationError>([&] { load_folder(tmp.path(), o); }), "leaves none");
}

TEST_CASE("num_classes is inferred from the training labels - can be overridden - and is enforced") {
  TempDir tmp;
  const std::string d = tmp.path();
  TinySpec emnist;  // EMNIST byclass: labels up to 61
  emnist.classes = 62;
  emnist.train = 200;
  write_mnist_folder(d, emnist);
  CHECK(load_folder(d).train.num_classes == 62);
  LoadOptions o;
  o.num_classes = 100;
  CHECK(load_folder(d, o).test.num_classes == 100);
  o.num_classes = 10;
  CHECK_WORDS(load_error(d, o), "train-labels-idx1-ubyte", "not below the class count 10", "as stated",
              "--classes N", "at least 62");

  // A test label the (inferred) class count cannot hold.
  write_file(tmp.file("t10k-labels-idx1-ubyte"), idx_bytes({5}, {1, 2, 70, 3, 4}));
  CHECK_WORDS(load_error(d), "t10k-labels-idx1-ubyte", "label 70 at index 2", "inferred", "at least 71");
}

TEST_CASE("load_folder: image and label counts must match") {
  TempDir tmp;
  write_mnist_folder(tmp.path());
  write_file(tmp.file("train-labels-idx1-ubyte"), idx_bytes({11}, random_bytes(11, 3, 10)));
  CHECK_WORDS(load_error(tmp.path()), "train-images-idx3-ubyte holds 12 images",
              "train-labels-idx1-ubyte holds 11 labels");
}

TEST_CASE("load_folder: train and test image sizes must agree") {
  TempDir tmp;
  write_mnist_folder(tmp.path());
  write_file(tmp.file("t10k-images-idx3-ubyte"), idx_bytes({5, 3, 4}, random_bytes(60, 4)));
  CHECK_WORDS(load_error(tmp.path()), "holds 4x3 images", "t10k-images-idx3-ubyte holds 3x4");
}

TEST_CASE("load_folder: files in the wrong slot - directories and missing files") {
  TempDir tmp;
  const std::string d = tmp.path();
  write_mnist_folder(d);
  fs::remove(tmp.file("t10k-images-idx3-ubyte"));  // (mingw-w64's libstdc++ 12 cannot overwrite in copy_file)
  fs::copy_file(tmp.file("t10k-labels-idx1-ubyte"), tmp.file("t10k-images-idx3-ubyte"));
  CHECK_WORDS(load_error(d), "t10k-images-idx3-ubyte", "has 1 dimensions, expected 3");

  fs::remove(tmp.file("t10k-images-idx3-ubyte"));
  fs::create_directory(tmp.file("t10k-images-idx3-ubyte"));
  CHECK_WORDS(load_error(d), "t10k-images-idx3-ubyte", "is a directory");

  fs::remove(tmp.file("t10k-images-idx3-ubyte"));
  CHECK_WORDS(load_error(d), d, "no t10k-images-idx3-ubyte", "--data DIR");

  CHECK_WORDS(load_error(d + "/nowhere"), "nowhere", "folder does not exist", "--data DIR");
  CHECK_WORDS(load_error(tmp.file("train-labels-idx1-ubyte")), "is not a folder");
}

TEST_CASE("the default folder: $ANYCL_DATA - else Fashion-MNIST with an install hint when absent") {
  EnvGuard guard;
  TempDir tmp;
  anycl::detail::platform::set_env("ANYCL_DATA", tmp.file("missing"));
  CHECK(default_data_dir() == tmp.file("missing"));
  CHECK_WORDS(load_error(""), tmp.file("missing"), "folder does not exist", "ANYCL_DATA");
  anycl::detail::platform::set_env("ANYCL_DATA", std::nullopt);
  CHECK(default_data_dir() == kFashionMnistDir);
  if (!fs::exists(kFashionMnistDir))
    CHECK_WORDS(load_error(kFashionMnistDir), "Fashion-MNIST not found at /usr/share/datasets/fashion-mnist",
                "apt-get install dataset-fashion-mnist`, or pass --data DIR");
}

TEST_CASE("Dataset::normalized scales to the unit interval and checks its range") {
  TempDir tmp;
  TinySet set = write_mnist_folder(tmp.path());
  DataSplits s = load_folder(tmp.path());
  std::vector<float> x = s.train.normalized(2, 3);
  REQUIRE(x.size() == 3 * 12);
  for (size_t i = 0; i < x.size(); ++i) {
    CAPTURE(i);
    CHECK(x[i] == static_cast<float>(set.train_pixels[2 * 12 + i]) / 255.0f);
  }
  CHECK(s.train.normalized(12, 0).empty());
  CHECK_THROWS_AS(s.train.normalized(10, 3), ValidationError);
  CHECK_THROWS_AS(s.train.normalized(13, 0), ValidationError);
  CHECK_THROWS_AS(s.train.normalized(1, SIZE_MAX), ValidationError);  // no wrap-around in first + n
}

TEST_CASE("the real Fashion-MNIST folder" *
          doctest::skip(!fs::exists(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz"))) {
  DataSplits s = load_folder(kFashionMnistDir);
  CHECK(s.train.count == 60000);
  CHECK(s.test.count == 10000);
  CHECK(s.train.rows == 28);
  CHECK(s.train.cols == 28);
  CHECK(s.train.num_classes == 10);
  CHECK(s.train.pixels.size() == 60000u * 784);
  // Fashion-MNIST is balanced: 6000 training and 1000 test images per class.
  std::vector<size_t> train_hist(10), test_hist(10);
  for (uint8_t l : s.train.labels) ++train_hist[l];
  for (uint8_t l : s.test.labels) ++test_hist[l];
  CHECK(train_hist == std::vector<size_t>(10, 6000));
  CHECK(test_hist == std::vector<size_t>(10, 1000));
}

TEST_CASE(
    "labels that leave a class without a training sample stop loading - the class count can be stated") {
  TempDir tmp;
  const std::string d = tmp.path();
  TinySpec spec;
  spec.train = 100;
  TinySet set = write_mnist_folder(d, spec);
  // One corrupt label (255) among 0-9 would otherwise make a 256-class model.
  set.train_labels[17] = 255;
  write_file(tmp.file("train-labels-idx1-ubyte"), idx_bytes({100}, set.train_labels));
  const std::string m = load_error(d);
  CHECK_WORDS(m, "train-labels-idx1-ubyte", "256 classes", "245 of them", "10–254", "255 ×1", "--classes N");
  LoadOptions o;
  o.num_classes = 256;  // stated: empty classes are then the user's choice
  CHECK(load_folder(d, o).train.num_classes == 256);
  // Through the command: test_cli_data.cpp.
}

TEST_CASE("gzip IDX headers are checked against each other before either body is inflated") {
  TempDir tmp;
  const std::string d = tmp.path();
  TinySpec spec;
  spec.gzip = true;
  write_mnist_folder(d, spec);
  // A stream claiming 5,000,000 images of 4x3 (60 MB) whose body is 60,000 random bytes: within
  // deflate's ratio, so only the count check against the 12 labels catches it before inflating.
  write_gzip(tmp.file("train-images-idx3-ubyte.gz"), idx_bytes({5000000, 4, 3}, random_bytes(60000, 3)));
  CHECK_WORDS(load_error(d), "train-images-idx3-ubyte.gz", "5000000 images", "12 labels");
  // A header claiming more than deflate can expand the file to is refused by itself.
  write_gzip(tmp.file("train-images-idx3-ubyte.gz"), idx_bytes({5000000, 4, 3}, random_bytes(100, 3)));
  CHECK_WORDS(load_error(d), "train-images-idx3-ubyte.gz", "more than a", "gzip file can hold");
}

TEST_CASE("test_only loads the test split alone") {
  TempDir tmp;
  const std::string d = tmp.path();
  write_mnist_folder(d);
  std::filesystem::remove(tmp.file("train-images-idx3-ubyte"));
  std::filesystem::remove(tmp.file("train-labels-idx1-ubyte"));
  LoadOptions o;
  o.test_only = true;
  CHECK_WORDS(thrown_message<ValidationError>([&] { load_folder(d, o); }), "num_classes");
  o.num_classes = 10;
  const DataSplits s = load_folder(d, o);
  CHECK(s.test.count == 5);
  CHECK(s.train.count == 0);
  // `anycl eval` on such a folder: test_cli_data.cpp.
}

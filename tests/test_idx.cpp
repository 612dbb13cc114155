// Tests for the IDX reader: plain and gzip read-back, then one case per malformed input, each checking
// the exception type and the key words of its message (path, fault, and the zlib text where relevant).
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "anycl/data/idx.hpp"
#include "anycl/error.hpp"
#include "data_files.hpp"
#include "helpers.hpp"
#include "hostile_files.hpp"

using anycl::DataError;
using anycl::data::IdxArray;
using anycl::data::read_idx;
using anycl::test::contains_all;
using anycl::test::gzip_bytes;
using anycl::test::idx_bytes;
using anycl::test::Missing;
using anycl::test::random_bytes;
using anycl::test::TempDir;
using anycl::test::thrown_message;
using anycl::test::write_file;
using anycl::test::write_gzip;

namespace {

// Message of the DataError read_idx(path) throws; checked to name the path, as every one must.
std::string read_error(const std::string& path, size_t expected_dims = 0) {
  std::string msg = thrown_message<DataError>([&] { read_idx(path, expected_dims); });
  CHECK_MESSAGE(msg.find(path) != std::string::npos, msg);
  return msg;
}

// `msg` is evaluated once: a failing check's message must not call read_error (and CHECK) again.
#define CHECK_WORDS(msg, ...)                                         \
  do {                                                                \
    const std::string words_in_ = (msg);                              \
    CHECK_MESSAGE(contains_all(words_in_, {__VA_ARGS__}), words_in_); \
  } while (false)

}  // namespace

TEST_CASE("read_idx reads back plain and gzip files - detecting gzip by content") {
  TempDir tmp;
  const std::vector<uint32_t> dims = {5, 4, 3};
  const auto data = random_bytes(60, 7);
  const auto bytes = idx_bytes(dims, data);
  write_file(tmp.file("plain"), bytes);
  write_gzip(tmp.file("compressed"), bytes);      // gzip without a .gz name
  write_file(tmp.file("plain-named.gz"), bytes);  // plain despite the .gz name
  for (const char* name : {"plain", "compressed", "plain-named.gz"}) {
    CAPTURE(name);
    IdxArray a = read_idx(tmp.file(name));
    CHECK(a.dims == dims);
    CHECK(a.data == data);
    CHECK(read_idx(tmp.file(name), 3).data == data);
  }
  const auto labels = random_bytes(9, 8, 10);
  write_gzip(tmp.file("labels.gz"), idx_bytes({9}, labels));
  IdxArray l = read_idx(tmp.file("labels.gz"), 1);
  CHECK(l.dims == std::vector<uint32_t>{9});
  CHECK(l.data == labels);
}

TEST_CASE("read_idx reads a gzip body larger than one read chunk") {
  TempDir tmp;
  // 3 MiB crosses the 1 MiB first chunk and two doublings; values mod 7 keep deflate fast.
  auto data = random_bytes(3u << 20, 9, 7);
  write_gzip(tmp.file("big.gz"), idx_bytes({3u << 10, 32, 32}, data));
  IdxArray a = read_idx(tmp.file("big.gz"));
  CHECK(a.dims == std::vector<uint32_t>{3u << 10, 32, 32});
  CHECK(a.data == data);
}

TEST_CASE("read_idx: bad magic") {
  TempDir tmp;
  auto bytes = idx_bytes({4}, random_bytes(4, 1));
  bytes[1] = 0x03;
  write_file(tmp.file("f"), bytes);
  CHECK_WORDS(read_error(tmp.file("f")), "not an IDX file", "00 03 08 01");
}

TEST_CASE("read_idx: element types other than unsigned byte are named") {
  TempDir tmp;
  write_file(tmp.file("float"), idx_bytes({2}, random_bytes(8, 2), 0x0D));
  CHECK_WORDS(read_error(tmp.file("float")), "32-bit float", "0x0d", "unsigned-byte", "0x08");
  write_file(tmp.file("signed"), idx_bytes({2}, random_bytes(2, 2), 0x09));
  CHECK_WORDS(read_error(tmp.file("signed")), "signed byte", "0x09");
  write_file(tmp.file("unknown"), idx_bytes({2}, random_bytes(2, 2), 0x42));
  CHECK_WORDS(read_error(tmp.file("unknown")), "unknown IDX type", "0x42");
}

TEST_CASE("read_idx: dimension count") {
  TempDir tmp;
  write_file(tmp.file("zero"), {0, 0, 8, 0});
  CHECK_WORDS(read_error(tmp.file("zero")), "0 dimensions", "corrupt");
  write_file(tmp.file("images"), idx_bytes({2, 2, 2}, random_bytes(8, 3)));
  CHECK_WORDS(read_error(tmp.file("images"), 1), "has 3 dimensions, expected 1", "label");
  write_file(tmp.file("labels"), idx_bytes({8}, random_bytes(8, 3)));
  CHECK_WORDS(read_error(tmp.file("labels"), 3), "has 1 dimensions, expected 3");
}

TEST_CASE("read_idx: a zero dimension") {
  TempDir tmp;
  write_file(tmp.file("f"), idx_bytes({3, 0, 2}, {}));
  CHECK_WORDS(read_error(tmp.file("f")), "dimension 1 is 0", "3x0x2");
}

TEST_CASE("read_idx: absurd and overflowing dims fail before any allocation") {
  TempDir tmp;
  // 2^96 bytes: overflows 64 bits, caught by the checked multiplication.
  write_file(tmp.file("overflow"), idx_bytes({0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, random_bytes(50, 4)));
  CHECK_WORDS(read_error(tmp.file("overflow")), "4294967295x4294967295x4294967295", "claim more than");
  // 4e9 images of 28x28 in a ~100-byte file, plain and gzip.
  auto huge = idx_bytes({4000000000u, 28, 28}, random_bytes(80, 4));
  write_file(tmp.file("huge"), huge);
  write_gzip(tmp.file("huge.gz"), huge);
  CHECK_WORDS(read_error(tmp.file("huge")), "4000000000x28x28", "claim more than");
  CHECK_WORDS(read_error(tmp.file("huge.gz")), "4000000000x28x28", "claim more than");
  // Under the cap but far beyond the data: the plain file is compared with its size, the gzip file
  // with the most that deflate can expand it to, so both fail before inflating anything.
  auto big = idx_bytes({1000000u, 28, 28}, random_bytes(80, 5));
  write_file(tmp.file("big"), big);
  write_gzip(tmp.file("big.gz"), big);
  CHECK_WORDS(read_error(tmp.file("big")), "truncated", "784000000", "holds 80");
  CHECK_WORDS(read_error(tmp.file("big.gz")), "784000000", "more than a", "gzip file can hold", "1032:1");
  // Within deflate's ratio but cut short: the gzip buffer grows only as bytes arrive.
  auto cut = idx_bytes({1000u, 28, 28}, random_bytes(1000, 6));  // random bytes do not compress
  write_gzip(tmp.file("cut.gz"), cut);
  CHECK_WORDS(read_error(tmp.file("cut.gz")), "truncated", "784000", "holds only 1000");
}

TEST_CASE("read_idx: truncated header") {
  TempDir tmp;
  write_file(tmp.file("short"), {0, 0});
  CHECK_WORDS(read_error(tmp.file("short")), "truncated header", "2 bytes");
  write_file(tmp.file("dims"), {0, 0, 8, 3, 0, 0, 0, 5, 0, 0});
  CHECK_WORDS(read_error(tmp.file("dims")), "truncated header", "3 dimensions need 12", "only 6");
  write_gzip(tmp.file("short.gz"), {0, 0, 8});
  CHECK_WORDS(read_error(tmp.file("short.gz")), "truncated header", "decompressed data is 3 bytes");
}

TEST_CASE("read_idx: truncated body and trailing garbage") {
  TempDir tmp;
  auto bytes = idx_bytes({6, 5}, random_bytes(30, 6));
  auto cut = bytes;
  cut.resize(cut.size() - 7);
  write_file(tmp.file("cut"), cut);
  write_gzip(tmp.file("cut.gz"), cut);
  CHECK_WORDS(read_error(tmp.file("cut")), "truncated", "6x5 need 30", "holds 23", "re-download");
  CHECK_WORDS(read_error(tmp.file("cut.gz")), "truncated", "6x5 need 30", "holds only 23");
  auto extra = bytes;
  extra.push_back(0x5a);
  write_file(tmp.file("extra"), extra);
  write_gzip(tmp.file("extra.gz"), extra);
  CHECK_WORDS(read_error(tmp.file("extra")), "1 bytes of trailing data", "6x5");
  CHECK_WORDS(read_error(tmp.file("extra.gz")), "trailing data", "6x5");
}

TEST_CASE("read_idx: empty - missing - directory - random bytes") {
  TempDir tmp;
  write_file(tmp.file("empty"), {});
  CHECK_WORDS(read_error(tmp.file("empty")), "empty file");
  CHECK_WORDS(read_error(tmp.file("absent")), "file not found");
  CHECK_WORDS(read_error(tmp.path()), "is a directory");
  auto noise = random_bytes(1000, 11);
  noise[0] = 0x37;  // keep the seeded noise from starting like IDX or gzip by chance
  write_file(tmp.file("noise"), noise);
  CHECK_WORDS(read_error(tmp.file("noise")), "not an IDX file");
}

TEST_CASE("read_idx: corrupt and truncated gzip streams carry zlib's message") {
  TempDir tmp;
  const auto gz = gzip_bytes(idx_bytes({40, 50}, random_bytes(2000, 12)));
  REQUIRE(gz.size() > 100);

  auto cut = gz;
  cut.resize(gz.size() / 2);
  write_file(tmp.file("cut.gz"), cut);
  CHECK_WORDS(read_error(tmp.file("cut.gz")), "gzip stream is truncated", "zlib: unexpected end of file");

  // The trailer's CRC covers every byte, so flipped data is always caught, if not sooner.
  auto flipped = gz;
  for (size_t i = 20; i < 60; ++i) flipped[i] ^= 0xA5;
  write_file(tmp.file("flipped.gz"), flipped);
  CHECK_WORDS(read_error(tmp.file("flipped.gz")), "gzip stream is corrupt", "zlib: ");

  auto noise = random_bytes(200, 13);
  noise[0] = 0x1f;  // gzip magic, then garbage
  noise[1] = 0x8b;
  write_file(tmp.file("noise.gz"), noise);
  CHECK_WORDS(read_error(tmp.file("noise.gz")), "gzip stream is", "zlib: ");
}

namespace {

// Puts `file` and `fifo` at `target` in turn until it dies (hard links renamed over the target, so
// both stay reachable under their own names), waking any reader blocked opening the FIFO.
class Swapper {
 public:
  Swapper(std::string file, std::string fifo, std::string target, std::string stage)
      : thread_([=] {
          std::error_code ec;
          for (uint64_t i = 0; !stop_; ++i) {
            std::filesystem::remove(stage, ec);
            std::filesystem::create_hard_link(i % 2 ? fifo : file, stage, ec);
            std::filesystem::rename(stage, target, ec);
            anycl::test::wake_fifo_reader(fifo);
          }
        }) {}
  ~Swapper() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

// Issue 25: the reader once checked the file's kind by path and then reopened it by path, so a FIFO
// renamed over the file in between made it wait for a writer forever. While a Swapper puts the file
// and a FIFO at one path in turn, each load must either read the file or refuse the FIFO; a reader
// that opened the FIFO by path is woken by the swapper and fails otherwise (the suite never hangs).
TEST_CASE("read_idx never waits on a FIFO swapped in for the file after its check") {
  TempDir tmp;
  const std::string fifo = tmp.file("pipe");
  if (!anycl::test::make_fifo(fifo))
    ANYCL_SKIP_TEST(Missing::capability, "no FIFOs in this system's file system");
  const auto data = random_bytes(600, 14);
  write_file(tmp.file("plain"), idx_bytes({6, 10, 10}, data));
  write_gzip(tmp.file("gzip"), idx_bytes({6, 10, 10}, data));
  for (const std::string kind : {"plain", "gzip"}) {
    CAPTURE(kind);
    const std::string target = tmp.file("swapped-" + kind);
    std::filesystem::copy_file(tmp.file(kind), target);
    int loaded = 0, refused = 0;
    std::vector<std::string> wrong;  // any other outcome: the bug
    {
      const Swapper swapper(tmp.file(kind), fifo, target, tmp.file("stage"));
      // The window between a check and a reopen is microseconds wide: about 1 in 1,000 loads hit it.
      for (int i = 0; i < 20000; ++i) {
        try {
          const bool right =
              i % 2 ? anycl::data::read_idx_header(target, 3).dims[0] == 6 : read_idx(target, 3).data == data;
          if (right)
            ++loaded;
          else
            wrong.push_back("read the wrong bytes");
        } catch (const DataError& e) {
          if (contains_all(e.what(), {target, "FIFO", "not a regular file"}))
            ++refused;
          else
            wrong.push_back(e.what());
        }
      }
    }
    CHECK_MESSAGE(wrong.empty(), wrong.size() << " of 20000 loads neither read the file (" << loaded
                                              << ") nor refused the FIFO (" << refused
                                              << "), first: " << (wrong.empty() ? "" : wrong[0]));
  }
}

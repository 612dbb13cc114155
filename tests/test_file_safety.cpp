// The file guarantees of docs/guarantees.md at the library level: one atomic writer (unique
// temporaries created exclusively without following links, no replacing a non-regular file, stale
// temporaries of dead processes cleaned up) and one bounded reader (regular files only, size capped).
#include <doctest/doctest.h>
#include <fmt/format.h>
#ifndef _WIN32
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <anycl/error.hpp>
#include <anycl/util/atomic_file.hpp>
#include <anycl/util/bounded_read.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "data_files.hpp"
#include "helpers.hpp"
#include "hostile_files.hpp"
#include "runtime/disk_cache.hpp"
#include "util/platform.hpp"

using anycl::test::contains_all;
using anycl::test::slurp;
using anycl::test::TempDir;
using anycl::test::thrown_message;
namespace fs = std::filesystem;

namespace {

void put(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

int64_t own_pid() { return anycl::detail::platform::process_id(); }

constexpr const char* kNoFifos = "no FIFOs in this system's file system";
constexpr const char* kNoSymlinks =
    "this process may not create symbolic links here (Windows: privilege or developer mode)";

}  // namespace

TEST_CASE("the atomic writer never follows a link planted at a temporary name") {
  TempDir dir;
  if (!anycl::test::can_make_symlinks(dir.path())) ANYCL_SKIP_TEST(Missing::capability, kNoSymlinks);
  const std::string out = dir.file("model.anycl"), victim = dir.file("victim");
  put(victim, "precious");
  // Where the writer used to put its temporary: "<out>.tmp.<pid>", opened with O_TRUNC.
  fs::create_symlink(victim, fmt::format("{}.tmp.{}", out, own_pid()));
  fs::create_symlink(victim, out + ".tmp");
  anycl::write_file_atomically(out, std::string_view("new model"));
  CHECK(slurp(out) == "new model");
  CHECK(slurp(victim) == "precious");
  CHECK(fs::is_symlink(fmt::format("{}.tmp.{}", out, own_pid())));  // not ours to remove
}

std::string refused_write(const std::string& path) {
  return thrown_message<anycl::Error>([&] { anycl::write_file_atomically(path, std::string_view("x")); });
}

size_t temporaries_in(const std::string& folder) {
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(folder))
    entries += e.path().filename().string().find(".tmp.") != std::string::npos;
  return entries;
}

TEST_CASE("the atomic writer refuses to replace a directory or write into a missing folder") {
  TempDir dir;
  const std::string folder = dir.file("folder");
  fs::create_directory(folder);
  std::string m = refused_write(folder);
  CHECK_MESSAGE(contains_all(m, {folder, "directory"}), m);
  m = refused_write(dir.file("missing/x.svg"));
  CHECK_MESSAGE(contains_all(m, {"missing", "does not exist"}), m);
  CHECK(temporaries_in(dir.path()) == 0);  // nothing but what was there
}

TEST_CASE("the atomic writer refuses to replace a FIFO") {
  TempDir dir;
  const std::string fifo = dir.file("pipe");
  if (!anycl::test::make_fifo(fifo)) ANYCL_SKIP_TEST(Missing::capability, kNoFifos);
  const std::string m = refused_write(fifo);
  CHECK_MESSAGE(contains_all(m, {fifo, "FIFO", "replaces only regular files"}), m);
  CHECK(fs::is_fifo(fifo));
  CHECK(temporaries_in(dir.path()) == 0);
}

TEST_CASE(
    "the atomic writer refuses a link to a device and replaces a link to a file without writing through") {
  TempDir dir;
  if (!anycl::test::can_make_symlinks(dir.path())) ANYCL_SKIP_TEST(Missing::capability, kNoSymlinks);
  const std::string link = dir.file("null");
  fs::create_symlink(anycl::test::character_device(), link);
  const std::string m = refused_write(link);
  CHECK_MESSAGE(contains_all(m, {link, "character device"}), m);
  CHECK(fs::is_symlink(link));
  CHECK(temporaries_in(dir.path()) == 0);
  // A link to a regular file is replaced by the new file; its target is never written through.
  put(dir.file("target"), "old");
  fs::create_symlink(dir.file("target"), dir.file("link"));
  anycl::write_file_atomically(dir.file("link"), std::string_view("new"));
  CHECK(slurp(dir.file("target")) == "old");
  CHECK(!fs::is_symlink(dir.file("link")));
  CHECK(slurp(dir.file("link")) == "new");
}

TEST_CASE("concurrent atomic writes of one file each leave one whole version") {
  TempDir dir;
  const std::string out = dir.file("same.svg");
  std::vector<std::thread> writers;
  std::vector<std::string> errors(8);
  for (int t = 0; t < 8; ++t)
    writers.emplace_back([&, t] {
      const std::string text(4096 + size_t(t), char('a' + t));
      try {
        for (int i = 0; i < 50; ++i) anycl::write_file_atomically(out, std::string_view(text));
      } catch (const anycl::Error& e) {
        errors[size_t(t)] = e.what();
      }
    });
  for (auto& w : writers) w.join();
  for (const auto& e : errors) CHECK_MESSAGE(e.empty(), e);
  const std::string last = slurp(out);
  REQUIRE(last.size() >= 4096);
  CHECK(last == std::string(last.size(), last[0]));
  CHECK(last.size() == 4096 + size_t(last[0] - 'a'));
  size_t left = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) left += e.path() != fs::path(out);
  CHECK(left == 0);
}

TEST_CASE("temporaries of dead writers are removed - a live writer's and other files are kept") {
  TempDir dir;
  const std::string out = dir.file("run.csv");
  const std::string dead = fmt::format("{}.tmp.{}.0123456789abcdef", out, anycl::test::dead_process_id());
  const std::string live = fmt::format("{}.tmp.{}.0123456789abcdef", out, own_pid());
  const std::string other = out + ".tmp.keep-me", foreign = dir.file("notes.csv.tmp.1.0123456789abcdef");
  for (const auto& p : {dead, live, other, foreign}) put(p, "x");
  CHECK(anycl::is_temporary_name(fs::path(dead).filename().string(), "run.csv"));
  CHECK_FALSE(anycl::is_temporary_name("run.csv.tmp.12.xyz", "run.csv"));
  anycl::write_file_atomically(out, std::string_view("epoch\n"));
  CHECK_FALSE(fs::exists(dead));
  CHECK(fs::exists(live));
  CHECK(fs::exists(other));
  CHECK(fs::exists(foreign));
}

std::string refused_read(const std::string& path, uint64_t cap) {
  return thrown_message<anycl::DataError>([&] { anycl::read_file_bounded(path, cap, "model file"); });
}

TEST_CASE("the bounded reader refuses a FIFO at once - naming the path") {
  TempDir dir;
  const std::string fifo = dir.file("model.anycl");
  // No writer: opening it blocking would wait forever.
  if (!anycl::test::make_fifo(fifo)) ANYCL_SKIP_TEST(Missing::capability, kNoFifos);
  const std::string m = refused_read(fifo, 1 << 20);
  CHECK_MESSAGE(contains_all(m, {fifo, "FIFO", "not a regular file"}), m);
}

TEST_CASE("the bounded reader refuses links that lead nowhere - naming the path") {
  TempDir dir;
  if (!anycl::test::can_make_symlinks(dir.path())) ANYCL_SKIP_TEST(Missing::capability, kNoSymlinks);
  fs::create_symlink(dir.file("gone"), dir.file("dangling"));
  std::string m = refused_read(dir.file("dangling"), 1 << 20);
  CHECK_MESSAGE(contains_all(m, {"dangling", "link to", "gone", "does not exist"}), m);
  fs::create_symlink(dir.file("loop"), dir.file("loop"));
  m = refused_read(dir.file("loop"), 1 << 20);
  CHECK_MESSAGE(contains_all(m, {"loop", "loops back"}), m);
}

TEST_CASE("the bounded reader refuses devices directories and files over the cap - naming the path") {
  TempDir dir;
  const auto read = refused_read;
  const std::string device = anycl::test::character_device();
  std::string m = read(device, 1 << 20);
  CHECK_MESSAGE(contains_all(m, {device, "character device"}), m);
  m = read(dir.path(), 1 << 20);
  CHECK_MESSAGE(contains_all(m, {dir.path(), "directory"}), m);
  const std::string big = dir.file("big.anycl");
  put(big, "");
  fs::resize_file(big, uint64_t{5} << 30);  // sparse: costs no disk
  m = read(big, anycl::kMaxModelFileBytes);
  CHECK_MESSAGE(contains_all(m, {big, "too large", "5.0 GiB"}), m);
  m = read(dir.file("absent"), 1 << 20);
  CHECK_MESSAGE(contains_all(m, {"absent", "file not found"}), m);
  put(dir.file("small"), "12345");
  const auto bytes = anycl::read_file_bounded(dir.file("small"), 5, "model file");
  CHECK(std::string(bytes.begin(), bytes.end()) == "12345");
  m = read(dir.file("small"), 4);
  CHECK_MESSAGE(contains_all(m, {"small", "too large", "5 bytes"}), m);
}

TEST_CASE("a kernel-cache entry whose size field disagrees with the file is dropped without allocating") {
#ifdef _WIN32
  ANYCL_SKIP_TEST(Missing::capability, "the check needs a per-process memory limit (setrlimit), POSIX only");
#else
  TempDir dir;
  const anycl::detail::DiskCache cache(dir.path());
  const std::string key = "activation-0123456789abcdef";
  REQUIRE(cache.put(key, std::vector<unsigned char>(100, 7)));
  REQUIRE(cache.get(key).has_value());
  // A size field of 0xFFFFFFFF: the entry used to cost a 4 GiB allocation. In a child process
  // under a memory limit it must simply be a miss, and the entry must go.
  {
    std::fstream f(cache.path(key), std::ios::in | std::ios::out | std::ios::binary);
    const uint64_t huge = 0xFFFFFFFFull;
    f.seekp(12);
    f.write(reinterpret_cast<const char*>(&huge), sizeof(huge));
  }
  const pid_t pid = fork();
  if (pid == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t limit = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(1) << 30);
    const rlimit rl{limit, limit};
    setrlimit(RLIMIT_AS, &rl);
    try {
      _exit(cache.get(key).has_value() ? 2 : 0);
    } catch (...) {
      _exit(3);  // std::bad_alloc: the header was believed
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), "child status ", status);
  CHECK_FALSE(fs::exists(cache.path(key)));
#endif
}

TEST_CASE("a FIFO under a kernel-cache entry's name is a miss at once and is left alone") {
  TempDir dir;
  const anycl::detail::DiskCache cache(dir.path());
  const std::string key = "activation-0123456789abcdef";
  // A miss at once (not a hang), left alone; put refuses it.
  if (!anycl::test::make_fifo(cache.path(key))) ANYCL_SKIP_TEST(Missing::capability, kNoFifos);
  CHECK_FALSE(cache.get(key).has_value());
  CHECK(fs::is_fifo(cache.path(key)));
  CHECK_FALSE(cache.put(key, std::vector<unsigned char>(10, 1)));
  CHECK(fs::is_fifo(cache.path(key)));
}

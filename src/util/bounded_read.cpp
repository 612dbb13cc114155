// The one bounded reader (see the header): open without blocking, check the opened file's kind
// and size, then read exactly that many bytes.
#include "anycl/util/bounded_read.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "input_file.hpp"
#include "platform.hpp"

namespace anycl {
namespace fs = std::filesystem;
namespace {

std::string human_bytes(uint64_t n) {
  if (n >= (uint64_t{1} << 30)) return fmt::format("{:.1f} GiB", double(n) / double(uint64_t{1} << 30));
  if (n >= (uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", double(n) / double(uint64_t{1} << 20));
  return fmt::format("{} bytes", n);
}

[[noreturn]] void open_failed(const fs::path& path, std::string_view what, const std::error_code& ec) {
  const std::string head = fmt::format("cannot open {} '{}'", what, path.string());
  std::error_code ignored;
  if (ec == std::errc::no_such_file_or_directory && fs::is_symlink(fs::symlink_status(path, ignored)))
    throw DataError(fmt::format("{}: it is a link to '{}', which does not exist — check the link", head,
                                fs::read_symlink(path, ignored).string()));
  if (ec == std::errc::too_many_symbolic_link_levels)
    throw DataError(fmt::format("{}: it is a link that loops back on itself — check the link", head));
  if (ec == std::errc::no_such_file_or_directory)
    throw DataError(fmt::format("{}: file not found — check the path", head));
  throw DataError(fmt::format("{}: {}", head, ec.message()));
}

}  // namespace

detail::platform::File detail::open_input_file(const fs::path& path, uint64_t max_bytes,
                                               std::string_view what, uint64_t* size) {
  std::error_code ec;
  detail::platform::File file = detail::platform::open_for_reading(path, ec);
  if (ec) open_failed(path, what, ec);
  const detail::platform::FileInfo info = detail::platform::info(file, ec);
  if (ec) throw DataError(fmt::format("cannot inspect {} '{}': {}", what, path.string(), ec.message()));
  if (info.type != fs::file_type::regular)
    throw DataError(fmt::format("{} '{}' is {}, not a regular file — give the path of a {}", what,
                                path.string(), detail::platform::describe(info.type), what));
  if (info.size > max_bytes)
    throw DataError(
        fmt::format("{} '{}' is too large: {} ({} bytes), more than any {} can be ({}) — check "
                    "that this is the right file",
                    what, path.string(), human_bytes(info.size), info.size, what, human_bytes(max_bytes)));
  *size = info.size;
  return file;
}

namespace {

template <typename Bytes>
Bytes read_impl(const fs::path& path, uint64_t max_bytes, std::string_view what) {
  uint64_t size = 0;
  const detail::platform::File file = detail::open_input_file(path, max_bytes, what, &size);
  Bytes bytes(static_cast<size_t>(size), '\0');
  std::error_code ec;
  const size_t got = detail::platform::read(file, bytes.data(), bytes.size(), ec);
  if (ec) throw DataError(fmt::format("cannot read {} '{}': {}", what, path.string(), ec.message()));
  if (got != bytes.size())
    throw DataError(
        fmt::format("{} '{}' shrank while being read ({} of {} bytes) — is another program "
                    "writing it?",
                    what, path.string(), got, bytes.size()));
  char extra = 0;
  if (detail::platform::read(file, &extra, 1, ec) != 0)
    throw DataError(
        fmt::format("{} '{}' grew while being read — is another program writing it?", what, path.string()));
  return bytes;
}

}  // namespace

std::vector<unsigned char> read_file_bounded(const fs::path& path, uint64_t max_bytes,
                                             std::string_view what) {
  return read_impl<std::vector<unsigned char>>(path, max_bytes, what);
}

std::string read_text_file_bounded(const fs::path& path, uint64_t max_bytes, std::string_view what) {
  return read_impl<std::string>(path, max_bytes, what);
}

uint64_t check_input_file(const fs::path& path, std::string_view what) {
  uint64_t size = 0;
  detail::open_input_file(path, UINT64_MAX, what, &size);
  return size;
}

}  // namespace anycl

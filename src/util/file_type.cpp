// What a file of some type is, in words, for messages (platform.hpp): the same on every system.
#include "util/platform.hpp"

namespace anycl::detail::platform {

const char* describe(std::filesystem::file_type t) {
  switch (t) {
    case std::filesystem::file_type::directory:
      return "a directory";
    case std::filesystem::file_type::character:
      return "a character device";
    case std::filesystem::file_type::block:
      return "a block device";
    case std::filesystem::file_type::fifo:
      return "a FIFO (named pipe)";
    case std::filesystem::file_type::socket:
      return "a socket";
    case std::filesystem::file_type::symlink:
      return "a symbolic link";
    default:
      return "not a regular file";
  }
}

}  // namespace anycl::detail::platform

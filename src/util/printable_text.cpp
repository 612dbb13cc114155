// printable_text (printable_text.hpp): a UTF-8 check byte by byte, quoting what fails it.
#include "util/printable_text.hpp"

#include <fmt/format.h>

namespace anycl::detail {

// The message as every binding can read it: valid UTF-8 with no NUL or control bytes (user bytes
// from a path, a layers string or a model file are quoted, not echoed), each other byte as \xNN.
std::string printable_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  const auto* b = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = b[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) ok = (b[i + k] & 0xC0) == 0x80;
    if (ok && len == 2) ok = c >= 0xC2;  // no overlong forms
    if (ok && len == 3) {
      const unsigned cp = ((c & 0xFu) << 12) | ((b[i + 1] & 0x3Fu) << 6) | (b[i + 2] & 0x3Fu);
      ok = cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF);
    }
    if (ok && len == 4) {
      const unsigned cp =
          ((c & 0x7u) << 18) | ((b[i + 1] & 0x3Fu) << 12) | ((b[i + 2] & 0x3Fu) << 6) | (b[i + 3] & 0x3Fu);
      ok = cp >= 0x10000 && cp <= 0x10FFFF;
    }
    if (ok && len == 1 && (c < 0x20 || c == 0x7F) && c != '\n' && c != '\t') ok = false;
    if (!ok) {
      out += fmt::format("\\x{:02X}", c);
      ++i;
      continue;
    }
    out.append(text, i, len);
    i += len;
  }
  return out;
}

}  // namespace anycl::detail

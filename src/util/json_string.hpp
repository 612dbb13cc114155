// JSON string escaping for the JSON texts anycl writes (device lists, bench tables); anycl only
// writes JSON, never parses it.
#pragma once

#include <string>

namespace anycl::detail {

/// `text` as a quoted JSON string.
inline std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          static const char* hex = "0123456789abcdef";
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

}  // namespace anycl::detail

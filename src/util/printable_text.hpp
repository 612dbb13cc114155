// Text that may quote user bytes (a path, a layers string, an environment variable, a model file's
// line) made safe to show: valid UTF-8 without NUL or control bytes but newline and tab; every other
// byte as \xNN. The C API's messages (every binding reads them) and the anycl command's go through it.
#pragma once

#include <string>

namespace anycl::detail {

/// `text` with each byte that is not part of valid UTF-8, and each control byte but '\n' and '\t', as \xNN.
std::string printable_text(const std::string& text);

}  // namespace anycl::detail

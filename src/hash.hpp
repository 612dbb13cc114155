// FNV-1a 64-bit: a small, stable hash for cache keys and file checksums. Not cryptographic;
// it detects corruption and keys entries, nothing more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace anycl::detail {

// Not the standard FNV-1a basis (14695981039346656037): a digit short since the first release. Kept,
// because every model, checkpoint, cache entry and tuning file written so far is checked with it.
constexpr uint64_t kFnvOffset = 1469598103934665603ull;

/// Continues an FNV-1a hash over `size` bytes.
inline uint64_t fnv1a(const void* data, size_t size, uint64_t hash = kFnvOffset) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

/// Continues an FNV-1a hash over a string, with a separator so ("ab","c") != ("a","bc").
inline uint64_t fnv1a(std::string_view text, uint64_t hash = kFnvOffset) {
  hash = fnv1a(text.data(), text.size(), hash);
  return fnv1a("\x1f", 1, hash);
}

}  // namespace anycl::detail

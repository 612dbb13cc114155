// Flag parsing and value validation for the anycl command.
#include "args.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace anycl::cli {

Args::Args(int argc, char** argv, int first, std::set<std::string> value_flags,
           std::set<std::string> switches) {
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      positional_.push_back(arg);
      continue;
    }
    std::string value;
    const auto eq = arg.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) value = arg.substr(eq + 1), arg = arg.substr(0, eq);
    if (switches.count(arg)) {
      if (inline_value) throw UsageError(fmt::format("{} takes no value", arg));
      values_[arg] = "1";
    } else if (value_flags.count(arg)) {
      if (!inline_value) {
        if (i + 1 >= argc) throw UsageError(fmt::format("{} needs a value", arg));
        value = argv[++i];
      }
      values_[arg] = value;
    } else {
      throw UsageError(fmt::format("unknown flag {}", arg));
    }
  }
}

std::string Args::get(const std::string& flag, const std::string& fallback) const {
  auto it = values_.find(flag);
  return it == values_.end() ? fallback : it->second;
}

long long Args::get_int(const std::string& flag, long long fallback, long long min, long long max) const {
  if (!has(flag)) return fallback;
  const std::string text = get(flag);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < min || v > max)
    throw UsageError(fmt::format("{} must be an integer in [{}, {}], got '{}'", flag, min, max, text));
  return v;
}

double Args::get_double(const std::string& flag, double fallback, double min, double max) const {
  if (!has(flag)) return fallback;
  const std::string text = get(flag);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v < min || v > max)
    throw UsageError(fmt::format("{} must be a number in [{}, {}], got '{}'", flag, min, max, text));
  return v;
}

}  // namespace anycl::cli

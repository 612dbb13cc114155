// Parsing and matching the tuning database: one entry per file, a `match` line of case-insensitive
// substrings of the platform, device and driver names, then `kernel` lines as in a tuning file.
#include "blas/tuning/tuning_database.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "anycl/blas/tuning.hpp"
#include "anycl/error.hpp"
#include "util/platform.hpp"

namespace anycl {
namespace {

constexpr const char* kMagic = "anycl-tuning-database 1";

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "key=value with spaces" pairs separated by ';' on a match line.
bool matches(const std::string& rule, const DeviceInfo& d, size_t& keys) {
  std::istringstream in(rule);
  std::string part;
  keys = 0;
  while (std::getline(in, part, ';')) {
    const auto eq = part.find('=');
    if (eq == std::string::npos) continue;
    std::string key = part.substr(0, eq), value = part.substr(eq + 1);
    key.erase(0, key.find_first_not_of(' '));
    key.erase(key.find_last_not_of(' ') + 1);
    value.erase(0, value.find_first_not_of(' '));
    value.erase(value.find_last_not_of(' ') + 1);
    const std::string* field = key == "platform" ? &d.platform_name
                               : key == "device" ? &d.name
                               : key == "driver" ? &d.driver_version
                                                 : nullptr;
    if (!field) throw ValidationError(fmt::format("tuning database: unknown match key '{}'", key));
    if (lower(*field).find(lower(value)) == std::string::npos) return false;
    ++keys;
  }
  return keys > 0;
}

struct Entry {
  std::string match;
  GemmTuning tuning;
};

Entry parse_entry(const std::string& name, const std::string& text) {
  std::istringstream in(text);
  std::string line;
  auto fail = [&](const std::string& why) {
    return ValidationError(fmt::format("tuning database entry tuning/{}.txt: {}", name, why));
  };
  if (!std::getline(in, line) || line != kMagic)
    throw fail(fmt::format("the first line must be '{}'", kMagic));
  Entry e;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string tag, kernel, kv;
    words >> tag;
    if (tag == "match") {
      std::getline(words >> std::ws, e.match);
    } else if (tag == "measured") {
      std::getline(words >> std::ws, e.tuning.device);
    } else if (tag == "kernel" && (words >> kernel)) {
      auto& params = e.tuning.kernels[kernel];
      while (words >> kv) {
        const auto eq = kv.find('=');
        char* end = nullptr;
        const unsigned long long v =
            eq == std::string::npos ? 0 : std::strtoull(kv.c_str() + eq + 1, &end, 10);
        if (eq == std::string::npos || eq == 0 || !end || *end || kv.size() == eq + 1)
          throw fail(fmt::format("bad parameter '{}' for {}", kv, kernel));
        params[kv.substr(0, eq)] = size_t(v);
      }
    } else {
      throw fail(fmt::format("unexpected line '{}'", line));
    }
  }
  if (e.match.empty()) throw fail("no match line");
  if (e.tuning.kernels.empty()) throw fail("no kernel lines");
  return e;
}

}  // namespace

std::optional<GemmTuning> database_tuning(const DeviceInfo& device, std::string* entry) {
  const std::string env = detail::platform::get_env("ANYCL_TUNING_DATABASE").value_or("");
  if (env == "off" || env == "0") return std::nullopt;
  std::optional<GemmTuning> best;
  size_t best_keys = 0;
  for (const auto& file : detail::embedded_tuning_database()) {
    const Entry e = parse_entry(file.name, file.source);
    size_t keys = 0;
    if (matches(e.match, device, keys) && keys > best_keys) {  // the most specific match wins
      best = e.tuning, best_keys = keys;
      if (entry) *entry = "tuning/" + file.name + ".txt";
    }
  }
  return best;
}

std::string database_entry(const GemmTuning& t, const DeviceInfo& d) {
  std::string out = fmt::format("{}\n# {} — {} (driver {}); written by `anycl tune --export`.\n", kMagic,
                                d.name, d.platform_name, d.driver_version);
  out += "# Narrow or widen the match to the device class these parameters suit; tuned in ";
  out += fmt::format("{:.0f} s.\n", t.seconds);
  out += fmt::format("match platform={}; device={}\n", d.platform_name, d.name);
  out += fmt::format("measured {} / {} / driver {}\n", d.name, d.platform_name, d.driver_version);
  for (const auto& [kernel, params] : t.kernels) {
    out += "kernel " + kernel;
    for (const auto& [key, value] : params) out += fmt::format(" {}={}", key, value);
    out += "\n";
  }
  return out;
}

}  // namespace anycl

// The per-device tuning file: GemmTuning's text form (plain text, "kernel NAME KEY=VALUE…" lines, a
// checksum and an end marker so that a truncated or altered file is refused) and where it lives.
#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "anycl/blas/tuning.hpp"
#include "anycl/error.hpp"
#include "anycl/util/bounded_read.hpp"
#include "hash.hpp"
#include "runtime/disk_cache.hpp"
#include "train/atomic_file.hpp"

namespace anycl {
namespace {

constexpr const char* kMagic = detail::kTuningFileMagic;  // the file's first line
constexpr const char* kEnd = "end";

}  // namespace

std::string tuning_file_path(const DeviceInfo& device) {
  const std::string dir = detail::DiskCache::default_dir();
  if (dir.empty()) return "";
  return dir + "/" + detail::tuning_file_name(detail::device_hash(device));
}

std::optional<GemmTuning> load_tuning(const std::string& path, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<GemmTuning> {
    if (why) *why = reason;
    return std::nullopt;
  };
  std::error_code ec;
  if (std::filesystem::symlink_status(path, ec).type() == std::filesystem::file_type::not_found)
    return fail("no tuning file " + path);
  std::string text;
  try {
    text = read_text_file_bounded(path, kMaxTextFileBytes, "tuning file");
  } catch (const DataError& e) {
    return fail(e.what());
  }
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kMagic) return fail(path + ": not an anycl tuning file");
  GemmTuning t;
  bool ended = false;
  uint64_t sum = detail::fnv1a(line + "\n");
  while (std::getline(in, line)) {
    if (line.rfind("checksum ", 0) == 0) {
      if (line != fmt::format("checksum {:016x}", sum)) return fail(path + ": checksum mismatch");
      ended = std::getline(in, line) && line == kEnd;
      break;
    }
    sum = detail::fnv1a(line + "\n", sum);
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string tag, name;
    words >> tag;
    if (tag == "device" || tag == "driver") {
      std::getline(words >> std::ws, name);
      (tag == "device" ? t.device : t.driver) = name;
    } else if (tag == "seconds") {
      words >> t.seconds;
    } else if (tag == "gemm_ms_before_after") {
      words >> t.seconds_before >> t.seconds_after;
      t.seconds_before /= 1e3, t.seconds_after /= 1e3;
    } else if (tag == "quick") {
      t.quick = true;
    } else if (tag == "kernel" && (words >> name)) {
      auto& params = t.kernels[name];
      std::string kv;
      while (words >> kv) {
        const auto eq = kv.find('=');
        char* end = nullptr;
        const unsigned long long v =
            eq == std::string::npos ? 0 : std::strtoull(kv.c_str() + eq + 1, &end, 10);
        if (eq == std::string::npos || eq == 0 || !end || *end != '\0' || kv.size() == eq + 1)
          return fail(fmt::format("{}: bad parameter '{}' for {}", path, kv, name));
        params[kv.substr(0, eq)] = size_t(v);
      }
      if (params.empty()) return fail(fmt::format("{}: kernel {} has no parameters", path, name));
    } else {
      return fail(fmt::format("{}: unexpected line '{}'", path, line));
    }
  }
  if (!ended) return fail(path + ": truncated (no checksum and end lines)");
  if (t.kernels.empty()) return fail(path + ": no kernels");
  return t;
}

void save_tuning(const std::string& path, const GemmTuning& t) {
  std::string text = fmt::format("{}\n# written by `anycl tune`; `anycl tune --reset` removes it\n", kMagic);
  text += fmt::format("device {}\ndriver {}\nseconds {:.1f}\n", t.device, t.driver, t.seconds);
  if (t.seconds_before > 0 && t.seconds_after > 0)
    text +=
        fmt::format("gemm_ms_before_after {:.4f} {:.4f}\n", t.seconds_before * 1e3, t.seconds_after * 1e3);
  if (t.quick) text += "quick\n";
  for (const auto& [name, params] : t.kernels) {
    if (params.empty()) continue;  // a choice line at "none" (anyclConvDwXgemm): absent says the same
    text += "kernel " + name;
    for (const auto& [key, value] : params) text += fmt::format(" {}={}", key, value);
    text += "\n";
  }
  uint64_t sum = 0;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = text.find('\n', begin) + 1;
    sum = detail::fnv1a(text.substr(begin, end - begin), begin == 0 ? detail::kFnvOffset : sum);
    begin = end;
  }
  text += fmt::format("checksum {:016x}\n{}\n", sum, kEnd);
  const auto slash = path.rfind('/');
  if (slash != std::string::npos) {
    std::error_code ignored;
    std::filesystem::create_directories(path.substr(0, slash), ignored);
  }
  detail::write_file_atomically(path, std::vector<unsigned char>(text.begin(), text.end()));
}

}  // namespace anycl

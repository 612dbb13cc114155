// Parsing and matching the tuning database: one entry per file, a `match` line of case-insensitive
// substrings of the platform, device and driver names (`a|b`: either), then `kernel` lines as in a
// tuning file, `candidate` lines (more sets for first-use tuning's shortlist) and an optional
// `generic` line (a fallback for a whole platform: first-use tuning still runs where it matches).
// The entries are the shipped tuning/*.txt, or those of a folder ANYCL_TUNING_DATABASE names.
#include "blas/tuning/tuning_database.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

#include "anycl/blas/tuning.hpp"
#include "anycl/error.hpp"
#include "anycl/util/bounded_read.hpp"
#include "blas/gemm_plan.hpp"
#include "util/platform.hpp"

namespace anycl {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMagic = "anycl-tuning-database 1";

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "key=value with spaces" pairs separated by ';' on a match line. Every key is read (an unknown one
// is an error naming the entry's file) before the answer.
bool matches(const std::string& rule, const DeviceInfo& d, size_t& keys, const std::string& file) {
  std::istringstream in(rule);
  std::string part;
  keys = 0;
  bool all = true;
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
    if (!field)
      throw ValidationError(
          fmt::format("tuning database entry {}: unknown match key '{}' (platform, device "
                      "or driver)",
                      file, key));
    bool any = false;
    std::istringstream alternatives(value);
    for (std::string alt; std::getline(alternatives, alt, '|');)
      any = any || (!alt.empty() && lower(*field).find(lower(alt)) != std::string::npos);
    all = all && any;
    ++keys;
  }
  return all && keys > 0;
}

struct Entry {
  std::string match;
  GemmTuning tuning;
  std::vector<std::pair<std::string, std::map<std::string, size_t>>> candidates;  // kernel, set
  GemmTuning large;  // `large kernel …`: replaces those kernels for models with large GEMMs
  bool generic = false;
};

// "KEY=VALUE" words after a kernel name, as in a tuning file.
std::map<std::string, size_t> parameters(std::istringstream& words, const std::string& kernel,
                                         const std::function<ValidationError(const std::string&)>& fail) {
  std::map<std::string, size_t> params;
  std::string kv;
  while (words >> kv) {
    const auto eq = kv.find('=');
    char* end = nullptr;
    const unsigned long long v = eq == std::string::npos ? 0 : std::strtoull(kv.c_str() + eq + 1, &end, 10);
    if (eq == std::string::npos || eq == 0 || !end || *end || kv.size() == eq + 1)
      throw fail(fmt::format("bad parameter '{}' for {}", kv, kernel));
    params[kv.substr(0, eq)] = size_t(v);
  }
  return params;
}

Entry parse_entry(const std::string& file, const std::string& text) {
  std::istringstream in(text);
  std::string line;
  const std::function<ValidationError(const std::string&)> fail = [&](const std::string& why) {
    return ValidationError(fmt::format("tuning database entry {}: {}", file, why));
  };
  if (!std::getline(in, line) || line != kMagic)
    throw fail(fmt::format("the first line must be '{}'", kMagic));
  Entry e;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string tag, kernel;
    words >> tag;
    if (tag == "match") {
      std::getline(words >> std::ws, e.match);
    } else if (tag == "measured") {
      std::getline(words >> std::ws, e.tuning.device);
    } else if (tag == "kernel" && (words >> kernel)) {
      e.tuning.kernels[kernel] = parameters(words, kernel, fail);
    } else if (tag == "large" && (words >> tag) && tag == "kernel" && (words >> kernel)) {
      e.large.kernels[kernel] = parameters(words, kernel, fail);
    } else if (tag == "candidate" && (words >> kernel)) {
      e.candidates.emplace_back(kernel, parameters(words, kernel, fail));
    } else if (tag == "generic") {
      e.generic = true;
    } else {
      throw fail(fmt::format("unexpected line '{}'", line));  // a `large` line must name a kernel too
    }
  }
  if (e.match.empty()) throw fail("no match line");
  size_t keys = 0;
  matches(e.match, DeviceInfo{}, keys, file);  // its keys checked now, whatever device asks later
  if (e.tuning.kernels.empty()) throw fail("no kernel lines");
  return e;
}

// One entry of the database in use: where it comes from (for messages) and its text.
struct EntryFile {
  std::string file;
  std::string text;
};

constexpr size_t kMaxEntryFiles = 1000;
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 20;

// ANYCL_TUNING_DATABASE: unset, "on" or "1" for the shipped entries, "off" or "0" for none matching,
// anything else the folder whose *.txt entries replace the shipped ones.
std::string database_setting() { return detail::platform::get_env("ANYCL_TUNING_DATABASE").value_or(""); }

bool database_off() {
  const std::string env = database_setting();
  return env == "off" || env == "0";
}

std::vector<EntryFile> folder_entries(const std::string& folder) {
  const std::string usage =
      "set ANYCL_TUNING_DATABASE to on (anycl's shipped entries), off (none) or a folder of entries "
      "(*.txt files as `anycl tune --export` prints them)";
  std::error_code ec;
  const fs::file_status status = fs::status(folder, ec);
  if (!fs::is_directory(status))
    throw ValidationError(fmt::format("ANYCL_TUNING_DATABASE={}: {} — {}", folder,
                                      ec                   ? ec.message()
                                      : fs::exists(status) ? std::string("not a folder")
                                                           : std::string("no such folder"),
                                      usage));
  std::vector<fs::path> paths;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".txt") paths.push_back(it->path());
  if (ec)
    throw ValidationError(
        fmt::format("ANYCL_TUNING_DATABASE={}: cannot list the folder: {}", folder, ec.message()));
  if (paths.size() > kMaxEntryFiles)
    throw ValidationError(
        fmt::format("ANYCL_TUNING_DATABASE={}: {} entries, more than the {} a database holds — {}", folder,
                    paths.size(), kMaxEntryFiles, usage));
  std::sort(paths.begin(), paths.end());
  std::vector<EntryFile> entries;
  entries.reserve(paths.size());
  for (const fs::path& path : paths)  // regular files only, each bounded before it is read
    entries.push_back({path.string(), read_text_file_bounded(path, kMaxEntryBytes, "tuning database entry")});
  return entries;
}

// The entries in use: the shipped tuning/*.txt, or a folder's in their place.
std::vector<EntryFile> database_entries() {
  const std::string env = database_setting();
  if (!env.empty() && env != "on" && env != "1" && !database_off()) return folder_entries(env);
  std::vector<EntryFile> entries;
  for (const auto& shipped : detail::embedded_tuning_database())
    entries.push_back({"tuning/" + shipped.name + ".txt", shipped.source});
  return entries;
}

}  // namespace

std::optional<GemmTuning> database_tuning(const DeviceInfo& device, std::string* entry, bool* generic,
                                          const std::vector<GemmShape>* shapes) {
  if (generic) *generic = false;
  if (database_off()) return std::nullopt;
  const bool large = shapes && std::any_of(shapes->begin(), shapes->end(), large_gemm);
  std::optional<GemmTuning> best;
  size_t best_keys = 0;
  for (const auto& file : database_entries()) {
    const Entry e = parse_entry(file.file, file.text);
    size_t keys = 0;
    if (matches(e.match, device, keys, file.file) && keys > best_keys) {  // the most specific match wins
      best = e.tuning, best_keys = keys;
      if (large)
        for (const auto& [kernel, params] : e.large.kernels) best->kernels[kernel] = params;
      // No dW, Dense or Winograd set of its own unless the entry names one (a CNN's `large` set left by an
      // earlier model)
      best->kernels.emplace(detail::kConvDwXgemm, std::map<std::string, size_t>{});
      best->kernels.emplace(detail::kDenseXgemm, std::map<std::string, size_t>{});
      best->kernels.emplace(detail::kConvWinogradXgemm, std::map<std::string, size_t>{});
      if (entry) *entry = file.file;
      if (generic) *generic = e.generic;
    }
  }
  return best;
}

std::vector<std::map<std::string, size_t>> database_parameter_sets(const std::string& kernel) {
  // Not subject to ANYCL_TUNING_DATABASE=off, which stands in for a device no entry matches: such a
  // device's first-use tuning is exactly where the known-good sets are wanted.
  std::vector<std::map<std::string, size_t>> own, more;
  for (const auto& file : database_entries()) {
    const Entry e = parse_entry(file.file, file.text);
    for (const GemmTuning* sets : {&e.tuning, &e.large})
      if (const auto it = sets->kernels.find(kernel); it != sets->kernels.end()) own.push_back(it->second);
    for (const auto& [name, params] : e.candidates)
      if (name == kernel) more.push_back(params);
  }
  own.insert(own.end(), more.begin(), more.end());
  return own;
}

std::string database_entry(const GemmTuning& t, const DeviceInfo& d) {
  std::string out = fmt::format("{}\n# {} — {} (driver {}); written by `anycl tune --export`.\n", kMagic,
                                d.name, d.platform_name, d.driver_version);
  out += "# Narrow or widen the match to the device class these parameters suit; tuned in ";
  out += fmt::format("{:.0f} s.\n", t.seconds);
  out += fmt::format("match platform={}; device={}\n", d.platform_name, d.name);
  out += fmt::format("measured {} / {} / driver {}\n", d.name, d.platform_name, d.driver_version);
  for (const auto& [kernel, params] : t.kernels) {
    if (params.empty()) continue;  // a choice line at "none": absent says the same
    out += "kernel " + kernel;
    for (const auto& [key, value] : params) out += fmt::format(" {}={}", key, value);
    out += "\n";
  }
  return out;
}

}  // namespace anycl

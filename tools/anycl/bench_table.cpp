// Table and JSON output of `anycl bench`.
#include "bench_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <thread>

#include "json.hpp"

namespace anycl::cli {

Cell Cell::num(double v, int decimals) {
  Cell c;
  c.text = fmt::format("{:.{}f}", v, decimals);
  c.value = v;
  c.numeric = true;
  return c;
}

Cell Cell::str(std::string s) {
  Cell c;
  c.text = std::move(s);
  return c;
}

std::string host_cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return text;
}

std::string context_line(const DeviceInfo& d) {
  return fmt::format("device: {} ({} {}, driver {}) · host: {}, {} threads · {}", d.name, d.platform_name,
                     d.platform_version, d.driver_version, host_cpu_name(),
                     std::thread::hardware_concurrency(), utc_now());
}

void print_table(const Table& t, const DeviceInfo& device) {
  fmt::print("\n== {} ==\n{}\n", t.title, context_line(device));
  std::vector<size_t> width;
  for (const auto& c : t.columns) width.push_back(c.size());
  for (const auto& row : t.rows)
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], row[i].text.size());
  auto line = [&](auto cell_text, auto is_numeric) {
    std::string out;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string text = cell_text(i);
      out += is_numeric(i) ? fmt::format("{:>{}}", text, width[i]) : fmt::format("{:<{}}", text, width[i]);
      if (i + 1 < width.size()) out += "  ";
    }
    fmt::print("{}\n", out);
  };
  line([&](size_t i) { return t.columns[i]; },
       [&](size_t i) {  // a column's header aligns with its numbers, even when the first row has none
         for (const auto& row : t.rows)
           if (i < row.size() && row[i].numeric) return true;
         return false;
       });
  for (const auto& row : t.rows)
    line([&](size_t i) { return i < row.size() ? row[i].text : std::string(); },
         [&](size_t i) { return i < row.size() && row[i].numeric; });
  for (const auto& n : t.notes) fmt::print("  note: {}\n", n);
  std::fflush(stdout);
}

void print_json(const std::vector<Table>& tables, const DeviceInfo& d, const std::string& host_blas) {
  fmt::print("{{\"device\": {}, \"platform\": {}, \"driver\": {}, \"host_cpu\": {}, \"host_threads\": {}, ",
             json_string(d.name), json_string(d.platform_name + " " + d.platform_version),
             json_string(d.driver_version), json_string(host_cpu_name()),
             std::thread::hardware_concurrency());
  fmt::print("\"host_blas\": {}, \"date\": {}", json_string(host_blas), json_string(utc_now()));
  for (const auto& t : tables) {
    fmt::print(",\n \"{}\": [", t.name);
    for (size_t r = 0; r < t.rows.size(); ++r) {
      fmt::print("{}\n  {{", r ? "," : "");
      for (size_t i = 0; i < t.columns.size() && i < t.rows[r].size(); ++i) {
        const Cell& c = t.rows[r][i];
        fmt::print("{}{}: {}", i ? ", " : "", json_string(t.columns[i]),
                   c.numeric ? fmt::format("{}", c.value) : json_string(c.text));
      }
      fmt::print("}}");
    }
    fmt::print("]");
  }
  fmt::print("\n}}\n");
}

double median(std::vector<double> s) {
  if (s.empty()) return 0;
  std::sort(s.begin(), s.end());
  return s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
}

}  // namespace anycl::cli

// The bench's results: tables of numbers and text, printed aligned or as JSON, each headed by
// the device, driver, host CPU and date so a figure never travels without its context.
#pragma once

#include <string>
#include <vector>

#include "anycl/device.hpp"

namespace anycl::cli {

/// One cell: a number (printed with `decimals`) or a text.
struct Cell {
  std::string text;
  double value = 0;
  bool numeric = false;
  static Cell num(double v, int decimals = 1);
  static Cell str(std::string s);
  static Cell none() { return str("-"); }
};

struct Table {
  std::string name;   // "gemm", "bandwidth", ...
  std::string title;  // one line shown above the table
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  std::vector<std::string> notes;  // what limits the figures, how they were measured
};

/// "device: … (platform, driver …) · host: … · date …" — printed above every table.
std::string context_line(const DeviceInfo& device);
/// The host CPU's model name (from /proc/cpuinfo), "unknown" elsewhere.
std::string host_cpu_name();
/// Today's date and time, UTC, ISO 8601.
std::string utc_now();

/// Prints a table for people.
void print_table(const Table& table, const DeviceInfo& device);
/// Prints every table as one JSON object {"device": …, "date": …, "<name>": [row objects…]}.
void print_json(const std::vector<Table>& tables, const DeviceInfo& device, const std::string& host_blas);

/// Median of `samples` (which it sorts).
double median(std::vector<double> samples);

}  // namespace anycl::cli

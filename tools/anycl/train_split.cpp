// Parsing and resolving --split (see train_split.hpp).
#include "train_split.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "anycl/dist/speed_shares.hpp"
#include "args.hpp"

namespace anycl::cli {
namespace {

constexpr const char* kSplitHint =
    "give 'equal', 'auto' or positive weights separated by ':', e.g. --split 3:1";

std::string join(const std::vector<double>& values, const char* format) {
  std::string out;
  for (double v : values) out += (out.empty() ? "" : ":") + fmt::format(fmt::runtime(format), v);
  return out;
}

}  // namespace

SplitFlag parse_split(const std::string& text) {
  SplitFlag split;
  if (text == "equal") return split;
  if (text == "auto") {
    split.automatic = true;
    return split;
  }
  if (text.empty()) throw UsageError(fmt::format("--split is empty — {}", kSplitHint));
  std::istringstream in(text + ":");  // the sentinel makes "1:" end in an empty weight
  std::string part;
  while (std::getline(in, part, ':')) {
    char* end = nullptr;
    const double w = std::strtod(part.c_str(), &end);
    if (part.empty() || *end != '\0' || !std::isfinite(w))
      throw UsageError(fmt::format("--split: '{}' in '{}' is not a number — {}", part, text, kSplitHint));
    if (!(w > 0))
      throw UsageError(
          fmt::format("--split: weights must be positive, got {} in '{}' — {}", part, text, kSplitHint));
    split.weights.push_back(w);
  }
  return split;
}

void check_split_count(const SplitFlag& split, size_t local_devices, size_t processes) {
  const size_t n = split.weights.size(), world = local_devices * processes;
  if (n == 0 || n == local_devices || n == world) return;
  throw UsageError(fmt::format(
      "--split gives {} weight(s) but training uses {} replica(s) ({} process(es) × {} device(s)) — give "
      "one weight per device{}, or use --split equal or auto",
      n, world, processes, local_devices,
      processes > 1 ? fmt::format(" or one per replica ({})", world) : ""));
}

std::string format_split(const std::vector<double>& shares) { return join(shares, "{:.4g}"); }

std::vector<double> resolve_split(const SplitFlag& split, const std::vector<Runtime*>& runtimes,
                                  const ModelSpec& spec, const data::Dataset& train, size_t batch,
                                  Collective* collective, std::string& note) {
  if (!split.automatic) {
    note = split.weights.empty() ? "equal shares" : "weights " + join(split.weights, "{}");
    return split.weights;
  }
  const SpeedShares measured = measure_speed_shares(runtimes, spec, train, batch, collective);
  const std::string printed = format_split(measured.shares);
  note = fmt::format(
      "auto — measured {} samples/s per replica → shares {} (timing-dependent: repeat this run exactly "
      "with --split {})",
      join(measured.samples_per_second, "{:.0f}"), printed, printed);
  return parse_split(printed).weights;
}

}  // namespace anycl::cli

// `anycl plot`: learning curves (loss and accuracy per epoch) from a metrics file as an SVG.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "anycl/util/atomic_file.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "learning_curves.hpp"

namespace anycl::cli {
namespace {

constexpr const char* kUsage =
    "usage: anycl plot METRICS -o OUT.svg [--title TEXT]\n"
    "  Draws loss and accuracy per epoch (train and test/val) from a metrics file written by\n"
    "  `anycl train --metrics run.csv` (or .jsonl) as a standalone SVG a browser opens.\n"
    "  -o, --output FILE   the SVG to write\n"
    "  --title TEXT        the figure's title (default: the metrics file's name)\n";

}  // namespace

int run_plot(int argc, char** argv) {
  // Args knows long flags only; -o is the conventional short spelling of --output.
  std::vector<std::string> spelled(argv, argv + argc);
  std::vector<char*> av;
  for (auto& a : spelled) av.push_back(a == "-o" ? const_cast<char*>("--output") : a.data());
  const Args args(argc, av.data(), 2, {"--output", "--title"}, {"--help"});
  if (args.has("--help")) return fmt::print("{}", kUsage), 0;
  if (args.positional().size() != 1)
    throw UsageError("name one metrics file (.csv or .jsonl), e.g. `anycl plot run.csv -o curves.svg`");
  const std::string input = args.positional().front(), output = args.get("--output");
  if (output.empty()) throw UsageError("-o OUT.svg is required: where to write the plot");
  check_output_is_not_input(input, output);
  check_output_file(output);  // before reading, so a bad -o is reported first
  write_learning_curves_svg(output, read_learning_curves(input), args.get("--title", input));
  fmt::print("wrote {}\n", output);
  return 0;
}

}  // namespace anycl::cli

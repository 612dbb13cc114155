// The anycl command: dispatches to subcommands and maps failures to exit codes
// (0 ok, 1 runtime error, 2 usage error). The library itself never exits or prints.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include "anycl/error.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "util/printable_text.hpp"

namespace {

// To stdout when asked for (--help), to stderr when it answers a mistake (no command).
void print_help(std::FILE* out) {
  fmt::print(out, "anycl {} — portable OpenCL training\n\nusage: anycl <command> [flags]\n\ncommands:\n",
             ANYCL_VERSION);
  for (const auto& c : anycl::cli::commands()) fmt::print(out, "  {:<10} {}\n", c.name, c.summary);
  fmt::print(
      out,
      "\nDevice selection: --device SPEC or ANYCL_DEVICE=SPEC, where SPEC is an index (1), platform:device "
      "(0:1),\na type (gpu, cpu, accelerator), a vendor (nvidia, amd, intel, pocl) or part of the device "
      "name.\nRun `anycl <command> --help` for a command's flags.\n");
}

// A command's output that could not be written (stdout on a full disk or /dev/full) is a failure.
int finish_output(int code) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
  fmt::print(stderr, "anycl: error: cannot write the output: {} — check where stdout goes\n",
             std::strerror(errno));
  return code == 0 ? 1 : code;
}

}  // namespace

int main(int argc, char** argv) {
  using anycl::detail::printable_text;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    print_help(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : finish_output(0);
  }
  if (!std::strcmp(argv[1], "--version")) {
    fmt::print("anycl {}\n", ANYCL_VERSION);
    return finish_output(0);
  }
  for (const auto& command : anycl::cli::commands()) {
    if (command.name != std::string(argv[1])) continue;
    try {
      return finish_output(command.run(argc, argv));
    } catch (const anycl::cli::UsageError& e) {
      fmt::print(stderr, "anycl {}: {}\nRun `anycl {} --help` for usage.\n", argv[1],
                 printable_text(e.what()), argv[1]);
      return 2;
    } catch (const std::exception& e) {  // a message may quote user bytes: shown printable
      fmt::print(stderr, "anycl {}: error: {}\n", argv[1], printable_text(e.what()));
      return 1;
    }
  }
  fmt::print(stderr, "anycl: unknown command '{}'. Run `anycl --help` for the list.\n",
             printable_text(argv[1]));
  return 2;
}

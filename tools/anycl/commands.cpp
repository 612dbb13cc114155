// The subcommand table: add a command here and in commands.hpp.
#include "commands.hpp"

namespace anycl::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"devices", "list OpenCL devices and their properties", run_devices},
  };
  return table;
}

}  // namespace anycl::cli

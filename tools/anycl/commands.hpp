// The table of anycl subcommands: each is a function over (argc, argv) returning an exit code.
#pragma once

#include <string>
#include <vector>

namespace anycl::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);  // argv[1] is the command name
};

/// Every subcommand, in the order `anycl --help` lists them.
const std::vector<Command>& commands();

int run_devices(int argc, char** argv);
int run_train(int argc, char** argv);
int run_eval(int argc, char** argv);
int run_predict(int argc, char** argv);
int run_bench(int argc, char** argv);
int run_tune(int argc, char** argv);
int run_plot(int argc, char** argv);
int run_doctor(int argc, char** argv);
int run_cache(int argc, char** argv);
int run_export(int argc, char** argv);

}  // namespace anycl::cli

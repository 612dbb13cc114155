// A small command-line parser for the anycl subcommands: `--flag value`, `--flag=value` and
// boolean switches; anything unknown or malformed is a UsageError (exit code 2).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace anycl::cli {

/// A mistake in how the command was called: main() prints it with the usage and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  /// Parses argv[first..]; `value_flags` take a value, `switches` do not.
  Args(int argc, char** argv, int first, std::set<std::string> value_flags, std::set<std::string> switches);

  bool has(const std::string& flag) const { return values_.count(flag) > 0; }
  /// The flag's value, or `fallback`.
  std::string get(const std::string& flag, const std::string& fallback = "") const;
  /// An integer in [min, max]; a UsageError naming the flag otherwise.
  long long get_int(const std::string& flag, long long fallback, long long min, long long max) const;
  /// A finite number in [min, max]; a UsageError naming the flag otherwise.
  double get_double(const std::string& flag, double fallback, double min, double max) const;
  /// Arguments that are not flags, in order.
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positional_;
};

}  // namespace anycl::cli

// Parsing one subcommand's flags: `--name value`, `--name=value`, repeated
// flags collect in order, `--bool-flag` alone means "true"; a switch also
// takes `--bool-flag=true|false` (or 1/0, yes/no), and any other value is an
// error.
//
//   CommandLine cl({{"graph", kValue}, {"fetch", kRepeated}, {"help", kSwitch}});
//   absl::Status s = cl.Parse(argc, argv);   // INVALID_ARGUMENT on misuse
//   std::string graph = cl.Get("graph");
#ifndef WEFT_TOOLS_COMMAND_LINE_H_
#define WEFT_TOOLS_COMMAND_LINE_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace weft {

enum FlagKind { kValue, kRepeated, kSwitch };

class CommandLine {
 public:
  explicit CommandLine(std::map<std::string, FlagKind> flags)
      : flags_(std::move(flags)) {}

  // argv[0] is the first argument after the subcommand name.
  absl::Status Parse(int argc, char** argv);

  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  const std::vector<std::string>& GetAll(const std::string& name) const;
  // The flag as an integer in [1, max], or `fallback` when it is not given;
  // INVALID_ARGUMENT "--name must be a positive integer, not 'value'" (or
  // "... at most max").
  absl::StatusOr<int64_t> GetPositiveInt(
      const std::string& name, int64_t fallback,
      int64_t max = std::numeric_limits<int64_t>::max()) const;
  // The flag as a positive byte count, or `fallback` when it is not given:
  // digits with an optional binary suffix K, M, G or T (also KiB, KB, ...;
  // case-insensitive), so "512M" is 512 * 2^20. INVALID_ARGUMENT naming the
  // flag for anything else or for more than 2^62 bytes.
  absl::StatusOr<int64_t> GetByteSize(const std::string& name,
                                      int64_t fallback) const;
  // Positional arguments (none of Weft's commands take any yet).
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, FlagKind> flags_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

}  // namespace weft

#endif  // WEFT_TOOLS_COMMAND_LINE_H_

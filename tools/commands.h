// The `weft` subcommands. Each returns the process exit code:
// 0 success, 1 error (printed as "error: CODE: message"), 2 usage error.
#ifndef WEFT_TOOLS_COMMANDS_H_
#define WEFT_TOOLS_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/command_line.h"

namespace weft {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

// argv[0] is the first argument after the subcommand name.
int RunCommand(int argc, char** argv);
int InspectCommand(int argc, char** argv);
int GraphgenCommand(int argc, char** argv);
int TrainCommand(int argc, char** argv);
int ServerCommand(int argc, char** argv);
int LaunchCommand(int argc, char** argv);
int SubmitCommand(int argc, char** argv);
int CompareCommand(int argc, char** argv);


// Prints "error: CODE: message" to stderr and returns kExitError.
int ReportError(const absl::Status& status);
// A step's error under `weft run/train --memory-limit N` (limit_bytes > 0):
// a RESOURCE_EXHAUSTED one also names the flag that sets the limit.
absl::Status WithMemoryLimitFlag(const absl::Status& status, int64_t limit_bytes);
// Prints "usage error: message" and the command's usage; returns kExitUsage.
int ReportUsage(const absl::Status& status, const char* usage);

// The start every subcommand shares: parses argv into `cl`, answers --help
// (cl must know a "help" switch), rejects positional arguments and missing
// `required` flags, and checks a "format" flag, if `cl` has one, is text or
// json. Returns the exit code when the command should stop now, nullopt
// when it should go on.
std::optional<int> StartCommand(int argc, char** argv, const char* usage,
                                const std::vector<std::string>& required,
                                CommandLine* cl);

}  // namespace weft

#endif  // WEFT_TOOLS_COMMANDS_H_

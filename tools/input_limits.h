// Bounds on what the CLI reads from files a user names.
#ifndef WEFT_TOOLS_INPUT_LIMITS_H_
#define WEFT_TOOLS_INPUT_LIMITS_H_

#include <cstdint>

namespace weft {

// The default bound on one input file (a graph, a .npy feed): 1 GiB, raised
// with --max-input-bytes. Protocol Buffers cannot parse a message over 2 GiB
// in any case.
inline constexpr int64_t kDefaultMaxInputBytes = int64_t{1} << 30;

}  // namespace weft

#endif  // WEFT_TOOLS_INPUT_LIMITS_H_

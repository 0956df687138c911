// For GPU tests: whether this process has a usable GPU, and the visible
// skip (a "SKIPPED:" line, counted by tools/count_tests.py) when it has not.
//
//   TEST(X, Y) {
//     WEFT_REQUIRE_GPU();
//     ...
//   }
#ifndef WEFT_TESTS_GPU_GPU_TEST_UTIL_H_
#define WEFT_TESTS_GPU_GPU_TEST_UTIL_H_

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "runtime/gpu/gpu_devices.h"

namespace weft {

// Empty if GPU:0 is usable, else why not.
inline std::string NoGpuReason() {
  GpuDevices gpus = NewLocalGpuDevices("localhost", 0, 0, 1);
  return gpus.devices.empty() ? gpus.note : "";
}

}  // namespace weft

#define WEFT_REQUIRE_GPU()                                              \
  do {                                                                  \
    const std::string weft_no_gpu_ = ::weft::NoGpuReason();             \
    if (!weft_no_gpu_.empty()) {                                        \
      std::printf("SKIPPED: needs a GPU (%s)\n", weft_no_gpu_.c_str()); \
      GTEST_SKIP() << weft_no_gpu_;                                     \
    }                                                                   \
  } while (0)

#endif  // WEFT_TESTS_GPU_GPU_TEST_UTIL_H_

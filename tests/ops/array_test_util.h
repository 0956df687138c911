// Small helpers shared by the array/state/control-flow/random op tests.
#ifndef WEFT_TESTS_OPS_ARRAY_TEST_UTIL_H_
#define WEFT_TESTS_OPS_ARRAY_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ops/testing/kernel_runner.h"
#include "runtime/core/tensor.h"

namespace weft {
namespace testing_util {

// Element i's bit pattern (2, 4 or 8 bytes), zero-extended: how the golden
// files TensorFlow wrote record random numbers.
inline uint64_t ElementBits(const Tensor& t, int64_t i) {
  const char* p = static_cast<const char*>(t.raw_data()) + i * DataTypeSize(t.dtype());
  switch (DataTypeSize(t.dtype())) {
    case 2: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return b;
    }
    case 4: {
      uint32_t b;
      std::memcpy(&b, p, 4);
      return b;
    }
    default: {
      uint64_t b;
      std::memcpy(&b, p, 8);
      return b;
    }
  }
}

// The golden files' digest of a tensor: sum over i of (i + 1) * bits[i],
// mod 2^64.
inline uint64_t BitDigest(const Tensor& t) {
  uint64_t sum = 0;
  for (int64_t i = 0; i < t.NumElements(); ++i) sum += (i + 1) * ElementBits(t, i);
  return sum;
}

template <typename T>
Tensor Vec(const std::vector<T>& values) {
  return MakeTensor<T>({static_cast<int64_t>(values.size())}, values);
}

template <typename T>
Tensor Scalar(T value) {
  return Tensor::Scalar<T>(value);
}

inline Tensor Strings(const std::vector<int64_t>& dims,
                      const std::vector<std::string>& values) {
  return MakeTensor<std::string>(dims, values);
}

// Runs `node` once on `inputs`; fails the test (and returns {}) on error.
inline std::vector<Tensor> RunOk(const NodeBuilder& node,
                                 const std::vector<Tensor>& inputs) {
  KernelRunner runner(node.Build());
  absl::StatusOr<std::vector<Tensor>> out = runner.Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

// Runs `node` once; returns the status.
inline absl::Status RunStatus(const NodeBuilder& node,
                              const std::vector<Tensor>& inputs) {
  KernelRunner runner(node.Build());
  return runner.Run(inputs).status();
}

// Expects `s` to have `code` and a message containing `substr`.
#define EXPECT_STATUS(STATUS, CODE, SUBSTR)                              \
  do {                                                                    \
    const ::absl::Status weft_status_ = (STATUS);                         \
    EXPECT_EQ(weft_status_.code(), (CODE)) << weft_status_;               \
    EXPECT_TRUE(::absl::StrContains(weft_status_.message(), (SUBSTR)))    \
        << "message: " << weft_status_.message()                          \
        << "\nexpected: " << (SUBSTR);                                    \
  } while (0)

}  // namespace testing_util
}  // namespace weft

#endif  // WEFT_TESTS_OPS_ARRAY_TEST_UTIL_H_

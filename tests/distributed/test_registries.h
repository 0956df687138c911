// Op and kernel registries for the in-process master tests: the test ops
// of tests/runtime/executor_test_ops.h (Fail, Block, VariableV2, ...) and
// _Send/_Recv, built once per process.
#ifndef WEFT_TESTS_DISTRIBUTED_TEST_REGISTRIES_H_
#define WEFT_TESTS_DISTRIBUTED_TEST_REGISTRIES_H_

#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "ops/registration.h"
#include "tests/runtime/executor_test_ops.h"

namespace weft {
namespace testing {

inline const OpRegistry& TestOps() {
  static const OpRegistry* ops = [] {
    auto* r = new OpRegistry;
    RegisterTestOps(r);
    RegisterSendRecvOps(r);
    return r;
  }();
  return *ops;
}

inline const KernelRegistry& TestKernels() {
  static const KernelRegistry* kernels = [] {
    auto* r = new KernelRegistry;
    RegisterTestKernels(r);
    RegisterSendRecvKernels(r);
    return r;
  }();
  return *kernels;
}

}  // namespace testing
}  // namespace weft

#endif  // WEFT_TESTS_DISTRIBUTED_TEST_REGISTRIES_H_

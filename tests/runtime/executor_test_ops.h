// Small ops and CPU kernels for testing the graph layer, executor and
// session without the real kernel library, in registries of their own.
//
// TensorFlow-named ops with TensorFlow's OpDefs (a subset of attrs where
// noted): Const, Placeholder, Identity, NoOp, AddV2, Neg, AddN, MatMul
// (shape function only: no kernel), Switch, Merge, Enter, Exit,
// NextIteration, LoopCond, Less (int32 only), _Arg, _Retval, VariableV2,
// Assign. Kernels handle int32 and float, same-shape or scalar operands.
//
// Test-only ops:
//   Fail(x: T) -> T        fails with attr `code` and "boom from <name>"
//   Block(x: T) -> T       waits until the step is cancelled, then CANCELLED
//   AsyncIdentity(x: T)    async; completes on another thread
//   SlowIdentity(x: T)     IsExpensive(); sleeps attr `micros`
//   CountRuns(x: T) -> T   identity that counts its runs (RunCount())
//   SleepThenFail(x: T)    sleeps attr `micros`, then fails
//   LeaveUnset(x: T) -> T  a buggy kernel: sets no output
//   StatefulCounter() -> int32   stateful; 1, 2, 3, ... per kernel object
//   IterId(x: T) -> int32  the loop iteration it runs in; -1 outside loops
//   RendezvousRecv() -> T  async; receives attr `key` from the rendezvous
//   WaitForSignal(x: T)    waits for RaiseSignal(attr `signal`), 10 s at
//                          most (then DEADLINE_EXCEEDED); passes x through
//
//   GraphDefBuilder b;
//   b.Const("a", 3).Op("n", "Neg", {"a"}, {{"T", DT_INT32}});
//   tensorflow::GraphDef def = b.Build();
#ifndef WEFT_TESTS_RUNTIME_EXECUTOR_TEST_OPS_H_
#define WEFT_TESTS_RUNTIME_EXECUTOR_TEST_OPS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "proto/attr_value.pb.h"
#include "proto/graph.pb.h"
#include "runtime/core/tensor.h"

namespace weft {
namespace testing {

const OpRegistry& TestOps();
const KernelRegistry& TestKernels();
// What TestOps and TestKernels hold, for registries that add more (the
// distributed tests add _Send and _Recv).
void RegisterTestOps(OpRegistry* r);
void RegisterTestKernels(KernelRegistry* r);

// Total runs of CountRuns kernels named `name` since the last reset.
int64_t RunCount(const std::string& name);
void ResetRunCounts();

// Releases the WaitForSignal kernels waiting for `name`, now and later.
void RaiseSignal(const std::string& name);
void ResetSignals();

// An attr value for GraphDefBuilder: type, int, bool, string or shape.
struct Attr {
  Attr(DataType t) { v.set_type(t); }  // NOLINT
  Attr(int i) { v.set_i(i); }          // NOLINT
  Attr(int64_t i) { v.set_i(i); }      // NOLINT
  Attr(bool b) { v.set_b(b); }         // NOLINT
  Attr(const char* s) { v.set_s(s); }  // NOLINT
  static Attr Shape(std::initializer_list<int64_t> dims);
  static Attr UnknownShape();
  tensorflow::AttrValue v;

 private:
  Attr() = default;
};

class GraphDefBuilder {
 public:
  GraphDefBuilder();
  GraphDefBuilder& Op(const std::string& name, const std::string& op,
                      std::vector<std::string> inputs = {},
                      std::vector<std::pair<std::string, Attr>> attrs = {});
  // Scalar int32 / float constants, and any tensor.
  GraphDefBuilder& Const(const std::string& name, int32_t value);
  GraphDefBuilder& ConstF(const std::string& name, float value);
  GraphDefBuilder& ConstT(const std::string& name, const Tensor& value);
  GraphDefBuilder& Placeholder(const std::string& name, DataType dtype,
                               Attr shape = Attr::UnknownShape());
  tensorflow::GraphDef Build() const { return def_; }
  tensorflow::GraphDef* mutable_def() { return &def_; }

 private:
  tensorflow::GraphDef def_;
};

}  // namespace testing
}  // namespace weft

#endif  // WEFT_TESTS_RUNTIME_EXECUTOR_TEST_OPS_H_

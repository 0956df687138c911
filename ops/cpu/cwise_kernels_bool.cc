// Element-wise kernels on bool: logic, and equality of bools.
#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/cwise_register.h"

namespace weft {

namespace {

void RegisterLogical(KernelRegistry* r, const char* op, KernelFactory f) {
  r->Register(KernelDef(op, kDeviceTypeCpu), std::move(f));
}

}  // namespace

void RegisterCwiseBoolKernels(KernelRegistry* r) {
  RegisterLogical(r, "LogicalAnd",
                  MakeKernel<BinaryOp<functor::LogicalAnd, bool, bool>>);
  RegisterLogical(r, "LogicalOr",
                  MakeKernel<BinaryOp<functor::LogicalOr, bool, bool>>);
  RegisterLogical(r, "LogicalNot",
                  MakeKernel<UnaryOp<functor::LogicalNot, bool>>);
  RegisterCpuKernel<EqualityOp<functor::Equal, bool>, bool>(r, "Equal");
  RegisterCpuKernel<EqualityOp<functor::NotEqual, bool>, bool>(r, "NotEqual");
}

}  // namespace weft

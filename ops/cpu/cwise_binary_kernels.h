// The binary element-wise kernels of one dtype family, as templates that
// cwise_kernels_<dtype>.cc instantiate (one dtype per file keeps each
// file's compile time short).
#ifndef WEFT_OPS_CPU_CWISE_BINARY_KERNELS_H_
#define WEFT_OPS_CPU_CWISE_BINARY_KERNELS_H_

#include <type_traits>

#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"

namespace weft {

// Comparisons shared by every numeric type.
template <typename T>
void RegisterComparisonKernels(KernelRegistry* r) {
  RegisterComparison<functor::Greater, T>(r, "Greater");
  RegisterComparison<functor::Less, T>(r, "Less");
  RegisterComparison<functor::GreaterEqual, T>(r, "GreaterEqual");
  RegisterComparison<functor::LessEqual, T>(r, "LessEqual");
  RegisterCpuKernel<EqualityOp<functor::Equal, T>, T>(r, "Equal");
  RegisterCpuKernel<EqualityOp<functor::NotEqual, T>, T>(r, "NotEqual");
}

// float, double.
template <typename T>
void RegisterFloatingBinaryKernels(KernelRegistry* r) {
  RegisterBinary<functor::Add, T>(r, "Add");
  RegisterBinary<functor::Add, T>(r, "AddV2");
  RegisterBinary<functor::Sub, T>(r, "Sub");
  RegisterBinary<functor::Mul, T>(r, "Mul");
  RegisterBinary<functor::Div, T>(r, "RealDiv");
  RegisterBinary<functor::Div, T>(r, "Div");
  RegisterBinary<functor::FloorDiv, T>(r, "FloorDiv");
  RegisterBinary<functor::FloorMod, T>(r, "FloorMod");
  RegisterBinary<functor::Maximum, T>(r, "Maximum");
  RegisterBinary<functor::Minimum, T>(r, "Minimum");
  RegisterBinary<functor::Pow, T>(r, "Pow");
  RegisterBinary<functor::SquaredDifference, T>(r, "SquaredDifference");
  RegisterCpuKernel<SameSizeBinaryOp<functor::TanhGrad, T>, T>(r, "TanhGrad");
  RegisterCpuKernel<SameSizeBinaryOp<functor::SigmoidGrad, T>, T>(
      r, "SigmoidGrad");
  RegisterCpuKernel<SameSizeBinaryOp<functor::RsqrtGrad, T>, T>(r,
                                                                 "RsqrtGrad");
  RegisterCpuKernel<SameSizeBinaryOp<functor::SqrtGrad, T>, T>(r, "SqrtGrad");
  RegisterComparisonKernels<T>(r);
}

// Every integer type, each op for the types TensorFlow registers it for:
// Add not for uint16..uint64, Pow for the signed types, SquaredDifference
// for int32 and int64 only.
template <typename T>
void RegisterIntegerBinaryKernels(KernelRegistry* r) {
  constexpr bool kSigned = std::is_signed_v<T>;
  if constexpr (kSigned || sizeof(T) == 1) {
    RegisterBinary<functor::Add, T>(r, "Add");
  }
  RegisterBinary<functor::Add, T>(r, "AddV2");
  RegisterBinary<functor::Sub, T>(r, "Sub");
  RegisterBinary<functor::Mul, T>(r, "Mul");
  RegisterBinary<functor::IntDiv, T>(r, "Div");
  RegisterBinary<functor::IntFloorDiv, T>(r, "FloorDiv");
  RegisterBinary<functor::IntFloorMod, T>(r, "FloorMod");
  RegisterBinary<functor::Maximum, T>(r, "Maximum");
  RegisterBinary<functor::Minimum, T>(r, "Minimum");
  if constexpr (kSigned) RegisterBinary<functor::IntPow, T>(r, "Pow");
  if constexpr (kSigned && sizeof(T) >= 4) {
    RegisterBinary<functor::SquaredDifference, T>(r, "SquaredDifference");
  }
  RegisterComparisonKernels<T>(r);
}

}  // namespace weft

#endif  // WEFT_OPS_CPU_CWISE_BINARY_KERNELS_H_

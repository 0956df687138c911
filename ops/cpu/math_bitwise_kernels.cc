// Integer kernels: Invert, PopulationCount, BitwiseAnd/Or/Xor, LeftShift
// and RightShift for all eight integer types, TruncateDiv for them too and
// TruncateMod for int32 and int64 (the types TensorFlow registers on CPU).
#include <cstdint>

#include "ops/cpu/math_cwise_functors.h"
#include "ops/cpu/math_cwise_register.h"

namespace weft {
namespace {

template <typename T>
void RegisterFor(KernelRegistry* r) {
  using namespace functor;  // NOLINT: the functors are the op names
  RegisterUnary<Invert, T>(r, "Invert");
  RegisterCpuKernel<UnaryOp<PopulationCount, T, uint8_t>, T>(
      r, "PopulationCount");
  RegisterBinary<BitwiseAnd, T>(r, "BitwiseAnd");
  RegisterBinary<BitwiseOr, T>(r, "BitwiseOr");
  RegisterBinary<BitwiseXor, T>(r, "BitwiseXor");
  RegisterBinary<LeftShift, T>(r, "LeftShift");
  RegisterBinary<RightShift, T>(r, "RightShift");
  RegisterBinary<IntDiv, T>(r, "TruncateDiv");
  if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
    RegisterBinary<TruncateModInt, T>(r, "TruncateMod");
  }
}

}  // namespace

void RegisterMathBitwiseKernels(KernelRegistry* r) {
  RegisterFor<int8_t>(r);
  RegisterFor<int16_t>(r);
  RegisterFor<int32_t>(r);
  RegisterFor<int64_t>(r);
  RegisterFor<uint8_t>(r);
  RegisterFor<uint16_t>(r);
  RegisterFor<uint32_t>(r);
  RegisterFor<uint64_t>(r);
}

}  // namespace weft

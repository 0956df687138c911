// Element-wise kernels on the integer types narrower or less common than
// int32 and int64 (int8, int16, uint8, uint16, uint32, uint64), each op for
// the types TensorFlow's CPU kernels take. They wrap as TensorFlow's do
// (wrapping.h); Eigen has no SIMD packets for most of them, so they run its
// scalar loops: what integer graphs need to run, not yet their speed.
#include <type_traits>

#include "ops/cpu/cwise_binary_kernels.h"
#include "ops/cpu/cwise_register.h"

namespace weft {
namespace {

template <typename T>
void RegisterSmallInteger(KernelRegistry* r) {
  RegisterIntegerBinaryKernels<T>(r);
  RegisterUnary<functor::Square, T>(r, "Square");
  if constexpr (std::is_signed_v<T>) {
    RegisterUnary<functor::Neg, T>(r, "Neg");
    RegisterUnary<functor::Abs, T>(r, "Abs");
    RegisterUnary<functor::Sign, T>(r, "Sign");
  }
}

}  // namespace

void RegisterCwiseSmallIntKernels(KernelRegistry* r) {
  RegisterSmallInteger<int8_t>(r);
  RegisterSmallInteger<int16_t>(r);
  RegisterSmallInteger<uint8_t>(r);
  RegisterSmallInteger<uint16_t>(r);
  RegisterSmallInteger<uint32_t>(r);
  RegisterSmallInteger<uint64_t>(r);
}

}  // namespace weft

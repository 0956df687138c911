// Binary float and double kernels with broadcasting: Atan2, Xdivy, Xlogy,
// Xlog1py, TruncateDiv and TruncateMod (cwise_ops.h's BinaryOp).
#include "ops/cpu/math_cwise_functors.h"
#include "ops/cpu/math_cwise_register.h"

namespace weft {
namespace {

template <typename T>
void RegisterFor(KernelRegistry* r) {
  using namespace functor;  // NOLINT: the functors are the op names
  RegisterBinary<Atan2, T>(r, "Atan2");
  RegisterBinary<Xdivy, T>(r, "Xdivy");
  RegisterBinary<Xlogy, T>(r, "Xlogy");
  RegisterBinary<Xlog1py, T>(r, "Xlog1py");
  RegisterBinary<TruncateDivReal, T>(r, "TruncateDiv");
  RegisterBinary<TruncateModReal, T>(r, "TruncateMod");
}

}  // namespace

void RegisterMathBinaryKernels(KernelRegistry* r) {
  RegisterFor<float>(r);
  RegisterFor<double>(r);
}

}  // namespace weft

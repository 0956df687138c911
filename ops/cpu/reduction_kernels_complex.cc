// Sum, Mean and Prod for complex64 and complex128 (TensorFlow registers no
// Max or Min for them: complex numbers have no order).
#include "ops/cpu/reduction_ops.h"
#include "ops/cpu/reduction_register.h"

namespace weft {
namespace {

template <typename T>
void RegisterFor(KernelRegistry* r) {
  RegisterCpuKernel<ReductionOp<SumReducer, T>, T>(r, "Sum");
  RegisterCpuKernel<ReductionOp<SumReducer, T, /*kMean=*/true>, T>(r, "Mean");
  RegisterCpuKernel<ReductionOp<ProdReducer, T>, T>(r, "Prod");
}

}  // namespace

void RegisterReductionComplexKernels(KernelRegistry* r) {
  RegisterFor<Complex64>(r);
  RegisterFor<Complex128>(r);
}

}  // namespace weft
